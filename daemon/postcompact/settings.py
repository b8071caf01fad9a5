"""The configuration as the daemon uses it, resolved once (`config.py` reads it).

`Config` is what the file and the flags said; `Settings` is what the services need of it,
derived once when the daemon starts: the daemon's policy layer parsed and validated, the deny
globs every read applies (the defaults, then the configured ones), the session-start hooks, and
the limits (`config`). It is immutable — a changed configuration is a restart — and shared: one
`Settings` per `Config` (`Settings.of`). `Settings` holds none of the model-facing wording:
that is each session's (`Session.templates`), its profile's templates under the daemon's
`[templates]` (`config.templates_spec`, which the registry gives every session it holds) and
under the session's own (docs/profiles.md, "Wording").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from postcompact import diskaccess
from postcompact.config import Config
from postcompact.restore.hooks import HookSpec
from postcompact.restore.policy import Policy, resolve_policy, validate_policy
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["Settings"]


@dataclass(frozen=True, slots=True)
class Settings:
    config: Config  # the limits and everything else as configured
    # The daemon's layer of the restore policy, under the session's and the request's. A message
    # is mutable: nothing may change this one (`resolve` copies nothing, it serialises it).
    policy: pb.RestorePolicy
    deny_globs: tuple[str, ...]  # the defaults and the configured ones, in that order
    hooks: tuple[HookSpec, ...]
    # A session's layer -> (that very message, the profile, the policy): see `resolve`.
    _sessions: dict[int, tuple[pb.RestorePolicy, int, Policy]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @staticmethod
    @functools.cache
    def of(config: Config) -> Settings:
        """The settings of `config`, made the first time they are asked for."""
        policy = config.policy
        validate_policy(policy)
        return Settings(
            config=config,
            policy=policy,
            deny_globs=diskaccess.effective_deny_globs(config.deny_globs),
            hooks=tuple(HookSpec(h.command, h.timeout_s) for h in config.hooks),
        )

    def resolve(self, profile: pb.Profile.ValueType, *layers: pb.RestorePolicy) -> Policy:
        """The policy of `profile` under the daemon's layer and then `layers` (a session's, a
        request's), each validated (INVALID_ARGUMENT naming the field).

        Most calls (every ReadFile, most Compacts) name a session's own layer and at most an
        empty request's: the policy is then kept per session layer, found again by that very
        message (a session's layer is made at OpenSession and replaced, never changed in
        place), without serialising the layers to look it up (`resolve_policy`)."""
        first, rest = (layers[0], layers[1:]) if layers else (None, ())
        if first is None or any(layer.ByteSize() for layer in rest):
            return resolve_policy(profile, self.policy, *layers)
        kept = self._sessions.get(id(first))
        if kept is not None and kept[0] is first and kept[1] == profile:
            return kept[2]
        policy = resolve_policy(profile, self.policy, first)
        if len(self._sessions) >= _KEPT_SESSIONS:
            self._sessions.clear()  # sessions come and go: forget the closed ones now and then
        self._sessions[id(first)] = (first, int(profile), policy)
        return policy


# Session layers whose policy `Settings.resolve` keeps (a few MiB at most).
_KEPT_SESSIONS = 4096
