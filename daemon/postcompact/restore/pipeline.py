"""The restoration pipeline behind Compact and PreviewCompact (reference §6-§9, §12, §13).

Order (reference compact.ts:517-585, then the hooks):

1. snapshot the agent's file-state cache (MRU first); clear it and the nested-memory set;
2. files (see `restore.files`);
3. task_status for the session's `local_agent` tasks (not retrieved, not pending, not the
   compacting agent's own task);
4. plan_file_reference when the agent's plan file exists (re-read from disk, no cap);
5. plan_mode (full reminder) when the agent is in plan mode;
6. invoked_skills: newest first, each truncated to `max_tokens_per_skill` with the marker,
   first-fit within `skills_token_budget` counting the (truncated) content only; skills are
   never cleared by compaction;
7. deferred_tools_delta, agent_listing_delta, mcp_instructions_delta: against nothing after a
   FULL compaction, against the preserved tail's announcements after a PARTIAL one; the agent's
   announced sets become what is announced now. The skill listing is not re-sent;
8. session-start hook context (configured hooks, then `additional_context`).

Unless the request sets `include_content`, the raw copies (file, plan and skill content) are left
empty: each attachment's rendered_text holds the same text, and nothing is joined here either (the
client joins the rendered texts), so every restored byte crosses the socket once.

A preview (PreviewCompact) computes the same answer and changes nothing: no clear, no re-seed, no
announced-set update, no compaction count. Hooks do run in a preview (their output is part of the
answer); their stdin JSON then carries `"preview": true`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence

from postcompact import _core, fileread, render
from postcompact.errors import InvalidArgument
from postcompact.render import DEFAULT_TEMPLATES, Templates
from postcompact.restore.catalog import Announced, announced_in_messages, catalog_deltas
from postcompact.restore.files import FileStep, read_paths_in_tail, restore_files
from postcompact.restore.hooks import HookSpec, run_hooks
from postcompact.restore.meter import Meter, rough
from postcompact.restore.outcome import Outcome
from postcompact.restore.policy import Policy, resolve_policy
from postcompact.state import AgentState, Session
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["run_compact"]

_TASK_STATUS: dict[pb.TaskStatus.ValueType, str] = {
    pb.TASK_STATUS_RUNNING: "running",
    pb.TASK_STATUS_COMPLETED: "completed",
    pb.TASK_STATUS_FAILED: "failed",
    pb.TASK_STATUS_KILLED: "killed",
}
LOCAL_AGENT = "local_agent"
_MAX_PLAN_BYTES = 16 * 1024 * 1024  # sanity bound only: plan content has no token cap


def _check_markers(policy: Policy, meter: Meter, templates: Templates) -> None:
    marker = policy.skill_truncation_marker
    if marker is None:
        marker = templates.skill_truncation_marker
    if meter.measure(marker) > policy.max_tokens_per_skill:
        raise InvalidArgument(
            "MARKER_TOO_LARGE",
            f"policy.skill_truncation_marker ({meter.measure(marker)} tokens) does not fit "
            f"policy.max_tokens_per_skill ({policy.max_tokens_per_skill})",
            {"field": "policy.skill_truncation_marker"},
        )


def _key(agent: AgentState, path: str) -> str:
    return str(agent.files.normalize(path))


def _exclusions(
    session: Session,
    agent: AgentState,
    preserved: Sequence[pb.ConversationMessage],
    templates: Templates,
) -> dict[str, pb.Outcome.ValueType]:
    excluded: dict[str, pb.Outcome.ValueType] = {}
    stubs = (templates.file_unchanged_stub, render.FILE_UNCHANGED_STUB)
    for path in read_paths_in_tail(
        preserved, cwd=session.cwd, home=session.home, key=lambda p: _key(agent, p), stubs=stubs
    ):
        excluded[path] = pb.OUTCOME_EXCLUDED_VISIBLE_IN_TAIL
    for path in session.memory_paths:
        excluded[_key(agent, path)] = pb.OUTCOME_EXCLUDED_MEMORY_FILE
    excluded[_key(agent, plan_path(session, agent))] = pb.OUTCOME_EXCLUDED_PLAN_FILE
    return excluded


def _task_status(session: Session, agent: AgentState, templates: Templates, out: Outcome) -> None:
    for task in session.tasks.values():
        status = _TASK_STATUS.get(task.status)
        if task.task_type != LOCAL_AGENT or task.retrieved or status is None:
            continue  # pending and unknown statuses are skipped too
        if task.agent_id and task.agent_id == agent.agent_id:
            continue  # never remind an agent of itself
        summary = task.progress_summary if status == "running" else task.error
        text = render.task_status(
            task_id=task.task_id,
            task_type=task.task_type,
            description=task.description,
            status=status,
            delta_summary=summary,
            output_file_path=task.output_file_path,
            templates=templates,
        )
        out.attach(
            "tasks",
            pb.Attachment(
                kind=pb.ATTACHMENT_KIND_TASK_STATUS,
                rendered_text=text,
                tokens=rough(text),
                task_status=pb.TaskStatusAttachment(
                    task_id=task.task_id,
                    task_type=task.task_type,
                    description=task.description,
                    status=task.status,
                    delta_summary=summary,
                    output_file_path=task.output_file_path,
                ),
            ),
        )


_SAFE_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


def plan_path(session: Session, agent: AgentState) -> str:
    """The agent's plan file: the one SetPlan named, else Claude Code's layout (reference §8.1)
    `<plans directory>/<slug>.md`, `<slug>-agent-<agent id>.md` for a sub-agent. The slug is
    derived from the session id (Claude Code draws random words once per session), so it stays
    the same across compactions and restarts; an agent id that is not a plain name is hashed."""
    if agent.plan_file_path:
        return str(_core.expand_path(agent.plan_file_path, session.cwd, session.home))
    slug = "plan-" + hashlib.sha256(session.session_id.encode()).hexdigest()[:12]
    aid = agent.agent_id
    if aid and not _SAFE_NAME.fullmatch(aid):
        aid = hashlib.sha256(aid.encode()).hexdigest()[:12]
    name = f"{slug}-agent-{aid}.md" if aid else f"{slug}.md"
    return os.path.join(session.plans_directory, name)


def _read_plan(
    session: Session, path: str, deny_globs: Sequence[str], inline: bool = False
) -> bytes | None:
    """The plan file's bytes, or None when it does not exist or cannot be read as text.

    Read like every other file: inside the session roots or the plans directory (SetPlan only
    accepts paths there; a symlink out of both is not followed) and never a deny-globbed file."""
    if not os.path.lexists(path):  # most agents have no plan file: one stat, not a checked read
        return None
    roots = [*(session.roots or [session.cwd]), session.plans_directory]
    try:
        tf = fileread.read_text(
            path, roots=roots, max_bytes=_MAX_PLAN_BYTES, deny_globs=deny_globs, inline=inline
        )
    except fileread.FileReadError:
        return None
    return tf.content


async def _plan(
    session: Session,
    agent: AgentState,
    templates: Templates,
    out: Outcome,
    deny_globs: Sequence[str] = fileread.DEFAULT_DENY_GLOBS,
    *,
    include_content: bool = True,
) -> None:
    path = plan_path(session, agent)
    content = await fileread.off_loop(lambda inline: _read_plan(session, path, deny_globs, inline))
    if content:  # an empty plan file is no plan (Claude Code: `if (!planContent)`)
        text = render.plan_file_reference(path, content.decode("utf-8", "replace"), templates)
        out.attach(
            "plan",
            pb.Attachment(
                kind=pb.ATTACHMENT_KIND_PLAN_FILE_REFERENCE,
                rendered_text=text,
                tokens=rough(text),
                plan_file_reference=pb.PlanFileReference(
                    plan_file_path=path, plan_content=content if include_content else b""
                ),
            ),
        )
    if agent.mode == pb.PERMISSION_MODE_PLAN:
        shown = path
        exists = content is not None
        sub = agent.agent_id != ""
        text = render.plan_mode(shown, plan_exists=exists, is_sub_agent=sub, templates=templates)
        out.attach(
            "plan_mode",
            pb.Attachment(
                kind=pb.ATTACHMENT_KIND_PLAN_MODE,
                rendered_text=text,
                tokens=rough(text),
                plan_mode=pb.PlanModeAttachment(
                    plan_file_path=shown, plan_exists=exists, is_sub_agent=sub
                ),
            ),
        )


def _skills(
    agent: AgentState,
    policy: Policy,
    meter: Meter,
    templates: Templates,
    out: Outcome,
    *,
    include_content: bool = True,
) -> None:
    marker = policy.skill_truncation_marker
    if marker is None:
        marker = templates.skill_truncation_marker
    skills = sorted(agent.skills.values(), key=lambda s: -s.invoked_at_ms)  # stable
    used = 0
    kept: list[pb.InvokedSkill] = []
    texts: list[tuple[str, str, str]] = []  # (name, path, content) for the rendering
    for skill in skills:
        original = skill.content.decode("utf-8", "replace")
        content = meter.truncate(original, policy.max_tokens_per_skill, marker)
        truncated = content != original
        tokens = meter.measure(content)
        if used + tokens > policy.skills_token_budget:
            out.decide(
                "skills",
                pb.SUBJECT_SKILL,
                skill.name,
                pb.OUTCOME_DROPPED_BY_BUDGET,
                tokens=tokens,
                detail=(
                    f"needs {tokens} of the {policy.skills_token_budget}-token skills budget, "
                    f"{used} already used"
                ),
            )
            continue
        used += tokens
        texts.append((skill.name, skill.path, content))
        kept.append(
            pb.InvokedSkill(
                name=skill.name,
                path=skill.path,
                content=content.encode() if include_content else b"",
                truncated=truncated,
            )
        )
        out.decide(
            "skills",
            pb.SUBJECT_SKILL,
            skill.name,
            pb.OUTCOME_TRUNCATED if truncated else pb.OUTCOME_RESTORED,
            tokens=tokens,
            detail=f"truncated to {policy.max_tokens_per_skill} tokens" if truncated else "",
        )
    if kept:
        text = render.invoked_skills(texts, templates)
        out.attach(
            "skills",
            pb.Attachment(
                kind=pb.ATTACHMENT_KIND_INVOKED_SKILLS,
                rendered_text=text,
                tokens=rough(text),
                invoked_skills=pb.InvokedSkills(skills=kept),
            ),
        )


async def _hooks(
    session: Session,
    agent: AgentState,
    request: pb.CompactRequest | pb.PreviewCompactRequest,
    hooks: Sequence[HookSpec],
    templates: Templates,
    out: Outcome,
    preview: bool,
) -> None:
    contexts: list[str] = []
    if not request.skip_hooks:
        results = await run_hooks(
            hooks,
            session_id=session.session_id,
            cwd=session.cwd,
            agent_id=agent.agent_id,
            preview=preview,
        )
        for r in results:
            out.decide(
                "hooks",
                pb.SUBJECT_HOOK,
                r.spec.command,
                r.outcome,
                tokens=rough(r.context) if r.context else 0,
                detail=r.detail,
            )
            if r.context:
                contexts.append(r.context)
    contexts.extend(c for c in request.additional_context if c)
    if contexts:
        text = render.hook_additional_context(contexts, templates)
        out.attach(
            "hooks",
            pb.Attachment(
                kind=pb.ATTACHMENT_KIND_HOOK_ADDITIONAL_CONTEXT,
                rendered_text=text,
                tokens=rough(text),
                hook_additional_context=pb.HookAdditionalContext(content=contexts),
            ),
        )


async def _steps(
    session: Session,
    agent: AgentState,
    request: pb.CompactRequest | pb.PreviewCompactRequest,
    policy: Policy,
    meter: Meter,
    templates: Templates,
    hooks: Sequence[HookSpec],
    deny_globs: Sequence[str],
    snapshot: Sequence[tuple[str, _core.FileState]],
    preserved: Sequence[pb.ConversationMessage] | None,
    excluded: dict[str, pb.Outcome.ValueType],
    out: Outcome,
    *,
    preview: bool,
    hash_contents: bool,
) -> Announced:
    """Steps 2-8 into `out` (`preserved`: the kept tail of a PARTIAL compaction, None for
    FULL); what the catalogue announced, for the caller to store once the whole compaction
    succeeded."""

    # 2. Files.
    deny = fileread.effective_deny_globs(deny_globs)
    include = request.include_content
    step = FileStep(session, policy, meter, templates, deny, include_content=include)
    await restore_files(
        step, agent, snapshot, excluded=excluded, out=out, preview=preview, hashing=hash_contents
    )

    # 3-6. Tasks, plan, plan mode, skills.
    _task_status(session, agent, templates, out)
    await _plan(session, agent, templates, out, deny, include_content=include)
    _skills(agent, policy, meter, templates, out, include_content=include)

    # 7. Catalogue re-announcement.
    baseline = announced_in_messages(preserved) if preserved is not None else Announced()
    deltas, announced = catalog_deltas(agent.catalog, baseline, templates)
    for att in deltas:
        out.attach("deltas", att)

    # 8. Session-start hooks.
    await _hooks(session, agent, request, hooks, templates, out, preview)
    return announced


async def run_compact(
    session: Session,
    agent: AgentState,
    request: pb.CompactRequest | pb.PreviewCompactRequest,
    *,
    base_policy: pb.RestorePolicy | None = None,
    config_policy: pb.RestorePolicy | None = None,
    hooks: Sequence[HookSpec] = (),
    deny_globs: Sequence[str] = (),
    templates: Templates = DEFAULT_TEMPLATES,
    preview: bool = False,
    hash_contents: bool = True,
) -> pb.CompactResponse:
    """Run the pipeline for `agent` of `session`; see the module docstring.

    `hash_contents`: hash re-read contents that changed, for the state database (off when the
    daemon keeps no state on disk).

    Policy layers: `base_policy` (the daemon config; `config_policy` is an alias), the session's,
    the request's. Deny globs: `fileread.DEFAULT_DENY_GLOBS` always apply, `deny_globs` add to
    them. For PreviewCompact the caller wraps the response into a PreviewCompactResponse.
    """
    daemon_layer = base_policy if base_policy is not None else config_policy
    layers = [p for p in (daemon_layer, session.policy, request.policy) if p is not None]
    policy = resolve_policy(*layers)
    meter = Meter(exact=policy.exact, encoding=policy.encoding)
    _check_markers(policy, meter, templates)
    partial = request.kind == pb.COMPACT_KIND_PARTIAL
    preserved = list(request.preserved_messages) if partial else []
    out = Outcome()

    excluded = _exclusions(session, agent, preserved, templates)

    # 1. Snapshot, then clear (Claude Code clears after the summary succeeded: the caller calls
    #    Compact once the summary exists).
    snapshot = list(agent.files.snapshot())
    steps = _steps(
        session,
        agent,
        request,
        policy,
        meter,
        templates,
        hooks,
        deny_globs,
        snapshot,
        preserved if partial else None,
        excluded,
        out,
        preview=preview,
        hash_contents=hash_contents,
    )
    if preview:
        await steps
        return out.response(agent.compactions)
    nested, marks = set(agent.nested_memory), dict(agent.read_mtimes)
    agent.files.clear()
    agent.nested_memory.clear()
    agent.read_mtimes.clear()
    try:
        announced = await steps
    except BaseException:
        # Failed or cancelled half-way (nothing is written until the caller persists the
        # result): the agent goes back to what it was, which is what the database holds.
        agent.files.load(snapshot)
        agent.nested_memory.clear()
        agent.nested_memory.update(nested)
        agent.read_mtimes.clear()
        agent.read_mtimes.update(marks)
        raise
    announced.store(agent.catalog)
    agent.compactions += 1
    return out.response(agent.compactions)
