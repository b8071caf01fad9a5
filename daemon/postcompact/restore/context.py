"""What one compaction runs under: `CompactContext` (docs/architecture.md §3).

Everything the pipeline's steps read besides the state they restore from — the resolved policy,
the session's templates and profile rules, the meter of the policy's counter, the deny globs, the
hooks and their slots, the limits — is resolved once, by the caller, into one immutable object
(`CompactContext.of`), which `run_compact` and its steps take rather than a dozen parameters each.
A compaction's own state (the session, the agent, the request's messages, the answer under way)
is not part of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from postcompact import diskaccess, profiles, render
from postcompact.errors import InvalidArgument
from postcompact.render import Templates
from postcompact.restore.hooks import HookSlots, HookSpec
from postcompact.restore.meter import Meter
from postcompact.restore.policy import Policy, resolve_policy
from postcompact.state import Session
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["CompactContext"]


@dataclass(frozen=True, slots=True)
class CompactContext:
    """What a compaction (or a preview) of one request runs under; made by `of`."""

    policy: Policy
    templates: Templates  # every model-facing string (the session's)
    rules: profiles.Rules  # the session profile's behaviour
    meter: Meter  # the policy's counter
    deny_globs: tuple[str, ...]  # effective: the defaults, then the configured ones
    hooks: tuple[HookSpec, ...] = ()
    hook_slots: HookSlots | None = None  # the daemon's bound on hook processes at once
    carry_limit: int = 5000  # at most this many reads carried over (the agent's cache bound)
    max_answer: int | None = None  # an answer over this many bytes: RESPONSE_TOO_LARGE
    hash_contents: bool = True  # hash re-read contents that changed, for the state database
    preview: bool = False  # PreviewCompact: the answer only, nothing to apply
    include_content: bool = True  # fill the raw copies (else only the blocks hold the text)

    @property
    def placement(self) -> str:
        """Where every attachment but a restored file goes (profiles with system sections)."""
        return render.SYSTEM if self.rules.system_sections else render.USER

    @staticmethod
    def of(
        session: Session,
        request: pb.CompactRequest | pb.PreviewCompactRequest,
        *,
        policy: Policy | None = None,
        daemon_policy: pb.RestorePolicy | None = None,
        hooks: Sequence[HookSpec] = (),
        deny_globs: Sequence[str] = (),
        hook_slots: HookSlots | None = None,
        carry_limit: int = 5000,
        max_answer: int | None = None,
        hash_contents: bool = True,
        preview: bool = False,
    ) -> CompactContext:
        """The context of `request` on `session`.

        `policy`: the policy, when the caller resolved it already (the daemon's `Settings`
        keeps it per session); else it is resolved here from the layers `daemon_policy` (the
        daemon config's), the session's and the request's, over the profile's defaults, each
        validated (INVALID_ARGUMENT naming the field). Deny globs: `diskaccess.DEFAULT_DENY_GLOBS`
        always apply, `deny_globs` add to them. MARKER_TOO_LARGE when the skill truncation
        marker does not fit the per-skill cap."""
        if policy is None:
            layers = [p for p in (daemon_policy, session.policy, request.policy) if p is not None]
            policy = resolve_policy(session.profile, *layers)
        ctx = CompactContext(
            policy=policy,
            templates=session.templates,
            rules=session.rules,
            meter=Meter(exact=policy.exact, encoding=policy.encoding),
            deny_globs=diskaccess.effective_deny_globs(deny_globs),
            hooks=tuple(hooks),
            hook_slots=hook_slots,
            carry_limit=carry_limit,
            max_answer=max_answer,
            hash_contents=hash_contents,
            preview=preview,
            include_content=request.include_content,
        )
        marker = ctx.meter.measure(ctx.skill_marker)
        if marker > policy.max_tokens_per_skill:
            raise InvalidArgument(
                "MARKER_TOO_LARGE",
                f"policy.skill_truncation_marker ({marker} tokens) does not fit "
                f"policy.max_tokens_per_skill ({policy.max_tokens_per_skill})",
                {"field": "policy.skill_truncation_marker"},
            )
        return ctx

    @property
    def skill_marker(self) -> str:
        """The marker a truncated skill ends with: the policy's, else the templates'."""
        marker = self.policy.skill_truncation_marker
        return self.templates.skill_truncation_marker if marker is None else marker
