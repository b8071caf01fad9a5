"""The restoration pipeline behind Compact and PreviewCompact (docs/claude-code.md §1-§7).

Order (Claude Code's, then the hooks):

1. snapshot the agent's file-state cache (MRU first); clear it and the nested-memory set; keep
   the full reads for the Edit/Write check (policy `carry_read_state`);
2. files (see `restore.file_step`): full files and too-large notes in one ranked list;
3. task_status for the session's `local_agent` tasks (not retrieved, not pending, not the
   compacting agent's own task, nor its parent's under current Claude Code), then the running
   background shells (`local_bash`) the compacting agent started (profiles with
   `Rules.shell_status`);
4. plan_file_reference when the agent's plan file exists (re-read from disk, no cap);
5. plan_mode (full reminder) when the agent is in plan mode;
6. invoked_skills: newest first, each truncated to `max_tokens_per_skill` with the marker,
   first-fit within `skills_token_budget` counting the (truncated) content only; skills are
   never cleared by compaction. Current Claude Code overwrites each stored skill with what was
   restored (dropped: emptied, never restored again; truncated: the truncated text) and does not
   repeat an invoked_skills attachment the kept tail holds already;
7. deferred_tools_delta, agent_listing_delta, (current Claude Code: the skill listing again),
   mcp_instructions_delta: against nothing after a FULL compaction, against the preserved
   tail's announcements after a PARTIAL one; the agent's announced sets become what is
   announced now;
8. session-start hook context (configured hooks, then `additional_context`).

Placement: restored files are user-placed; every other attachment is a system section under
profiles with system sections (`Rules.system_sections`), else user-placed and wrapped.

Unless the request sets `include_content`, the raw copies (file, plan and skill content) are left
empty: each attachment's blocks hold the same text, and nothing is joined here either (the
client joins the blocks), so every restored byte crosses the socket once.

`run_compact` changes nothing: it returns a `CompactResult`, the answer and what the compaction
does to the agent (the clear and re-seed of its cache, the announced sets, carried reads,
rewritten skills, the count), which the caller applies and stores once the answer stands (the
caller also reserves the answer's bytes, admission.py: the restoration never refuses a call
OVERLOADED). A preview (PreviewCompact) computes the same answer and has nothing to apply. Hooks
do run in a preview (their output is part of the answer); their stdin JSON then carries
`"preview": true`. Everything the steps read besides the session, the agent and the request is
the compaction's `CompactContext` (restore/context.py), which the caller builds once.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
from collections.abc import Sequence

from postcompact import core, diskaccess, render
from postcompact.errors import check_answer
from postcompact.restore import ranker
from postcompact.restore.catalog import (
    Announced,
    announced_in_messages,
    catalog_deltas,
    listed_in_messages,
    skill_listing_again,
)
from postcompact.restore.context import CompactContext
from postcompact.restore.file_step import FileStep, Seed, read_paths_in_tail, restore_files
from postcompact.restore.harness import HarnessPick, claude_code_pick
from postcompact.restore.hooks import run_hooks
from postcompact.restore.meter import rough
from postcompact.restore.outcome import Outcome, make
from postcompact.restore.policy import Policy
from postcompact.state import AgentState, CarriedRead, Change, InvokedSkill, Session
from postcompact.state.model import RenderedFile
from postcompact.state.seen import Seen
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["CompactResult", "carried_reads_of", "plan_path", "run_compact"]

_TASK_STATUS: dict[pb.TaskStatus.ValueType, str] = {
    pb.TASK_STATUS_RUNNING: "running",
    pb.TASK_STATUS_COMPLETED: "completed",
    pb.TASK_STATUS_FAILED: "failed",
    pb.TASK_STATUS_KILLED: "killed",
}
LOCAL_AGENT = "local_agent"
LOCAL_BASH = "local_bash"
_MAX_PLAN_BYTES = 16 * 1024 * 1024  # sanity bound only: plan content has no token cap


def _key(agent: AgentState, path: str) -> str:
    return str(agent.files.normalize(path))


def _exclusions(
    ctx: CompactContext,
    session: Session,
    agent: AgentState,
    preserved: Sequence[pb.ConversationMessage],
) -> dict[str, pb.Outcome.ValueType]:
    templates = ctx.templates
    excluded: dict[str, pb.Outcome.ValueType] = {}
    if preserved:
        stubs = (templates.file_unchanged_stub, render.FILE_UNCHANGED_STUB)
        for path in read_paths_in_tail(
            preserved,
            cwd=session.cwd,
            home=session.home,
            key=lambda p: _key(agent, p),
            stubs=stubs,
            tool=templates.read_tool_name,
            path_key=templates.read_path_key,
        ):
            excluded[path] = pb.OUTCOME_EXCLUDED_VISIBLE_IN_TAIL
    for path in session.memory_paths:
        excluded[_key(agent, path)] = pb.OUTCOME_EXCLUDED_MEMORY_FILE
    for path in agent.files.keys():  # noqa: SIM118 (FileStateCache is not iterable)
        if "/tool-results/artifact-" in path and _is_artifact(path):
            excluded[path] = pb.OUTCOME_EXCLUDED_ARTIFACT
    excluded[_key(agent, plan_path(session, agent))] = pb.OUTCOME_EXCLUDED_PLAN_FILE
    return excluded


def _is_artifact(path: str) -> bool:
    """A tool result Claude Code saved to disk (`…/tool-results/artifact-*`): never restored."""
    if "/tool-results/artifact-" not in path:  # the common case: one substring search
        return False
    head, name = os.path.split(path)
    return name.startswith("artifact-") and os.path.basename(head) == "tool-results"


def _attach_task(ctx: CompactContext, out: Outcome, task: pb.Task, text: str, summary: str) -> None:
    placement = ctx.placement
    out.attach(
        "tasks",
        make(
            pb.ATTACHMENT_KIND_TASK_STATUS,
            placement,
            render.blocks([text], placement, ctx.templates),
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


def _task_status(ctx: CompactContext, session: Session, agent: AgentState, out: Outcome) -> None:
    rules, templates = ctx.rules, ctx.templates
    skipped = {agent.agent_id} if agent.agent_id else set()
    if rules.skip_parent_task and agent.agent_id:
        skipped.add(agent.parent_agent_id)
    for task in session.tasks.values():
        if task.task_type != LOCAL_AGENT:
            continue
        status = _TASK_STATUS.get(task.status)
        if task.retrieved or status is None:
            continue  # pending and unknown statuses are skipped too
        if task.agent_id and task.agent_id in skipped:
            continue  # never remind an agent of itself (nor, today, of its parent)
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
        _attach_task(ctx, out, task, text, summary)
    if not rules.shell_status:
        return
    for task in session.tasks.values():
        if task.task_type != LOCAL_BASH or task.status != pb.TASK_STATUS_RUNNING:
            continue
        if task.agent_id != agent.agent_id:
            continue  # only to the agent that started the shell
        text = render.shell_status(
            task_id=task.task_id,
            description=task.description,
            command=task.command,
            output_file_path=task.output_file_path,
            monitor=task.monitor,
            templates=templates,
        )
        _attach_task(ctx, out, task, text, "")


_SAFE_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")


def plan_path(session: Session, agent: AgentState) -> str:
    """The agent's plan file: the one SetPlan named, else Claude Code's layout
    `<plans directory>/<slug>.md`, `<slug>-agent-<agent id>.md` for a sub-agent. The slug is
    derived from the session id (Claude Code draws random words once per session), so it stays
    the same across compactions and restarts; an agent id that is not a plain name is hashed."""
    return _plan_path(
        session.session_id,
        agent.agent_id,
        agent.plan_file_path,
        session.plans_directory,
        session.cwd,
        session.home,
    )


@functools.lru_cache(maxsize=1024)
def _plan_path(
    session_id: str, aid: str, named: str | None, plans_directory: str, cwd: str, home: str
) -> str:
    if named:
        return str(core.expand_path(named, cwd, home))
    slug = "plan-" + hashlib.sha256(session_id.encode()).hexdigest()[:12]
    if aid and not _SAFE_NAME.fullmatch(aid):
        aid = hashlib.sha256(aid.encode()).hexdigest()[:12]
    name = f"{slug}-agent-{aid}.md" if aid else f"{slug}.md"
    return os.path.join(plans_directory, name)


def _read_plan(
    session: Session, path: str, deny_globs: Sequence[str], inline: bool = False
) -> bytes | None:
    """The plan file's bytes, or None when it does not exist or cannot be read as text.

    Read like every other file: inside the session roots or the plans directory (SetPlan only
    accepts paths there; a symlink out of both is not followed) and never a deny-globbed file."""
    roots = session.read_roots
    try:
        tf = diskaccess.read_text(
            path, roots=roots, max_bytes=_MAX_PLAN_BYTES, deny_globs=deny_globs, inline=inline
        )
    except diskaccess.FileReadError:
        return None
    return tf.content


async def _plan(ctx: CompactContext, session: Session, agent: AgentState, out: Outcome) -> None:
    placement, templates, deny_globs = ctx.placement, ctx.templates, ctx.deny_globs
    path = plan_path(session, agent)
    # Most agents have no plan file: one check on the loop, not a checked read (access() answers
    # without raising, as lexists' lstat does for a missing file).
    content = (
        await diskaccess.off_loop(lambda inline: _read_plan(session, path, deny_globs, inline))
        if os.access(path, os.F_OK, follow_symlinks=False)
        else None
    )
    if content:  # an empty plan file is no plan (Claude Code: `if (!planContent)`)
        text = render.plan_file_reference(path, content.decode("utf-8", "replace"), templates)
        out.attach(
            "plan",
            make(
                pb.ATTACHMENT_KIND_PLAN_FILE_REFERENCE,
                placement,
                render.blocks([text], placement, templates),
                plan_file_reference=pb.PlanFileReference(
                    plan_file_path=path, plan_content=content if ctx.include_content else b""
                ),
            ),
        )
    if agent.mode == pb.PERMISSION_MODE_PLAN:
        exists = content is not None
        sub = agent.agent_id != ""
        text = render.plan_mode(path, plan_exists=exists, is_sub_agent=sub, templates=templates)
        out.attach(
            "plan_mode",
            make(
                pb.ATTACHMENT_KIND_PLAN_MODE,
                placement,
                render.blocks([text], placement, templates),
                plan_mode=pb.PlanModeAttachment(
                    plan_file_path=path, plan_exists=exists, is_sub_agent=sub
                ),
            ),
        )


def _skills_in_tail(
    preserved: Sequence[pb.ConversationMessage],
) -> list[list[tuple[str, str, bytes]]]:
    """The skill lists of the invoked_skills attachments the kept tail holds."""
    found = []
    for message in preserved:
        for block in message.content:
            if block.WhichOneof("block") == "attachment":
                att = block.attachment
                if att.WhichOneof("payload") == "invoked_skills":
                    found.append([(k.name, k.path, k.content) for k in att.invoked_skills.skills])
    return found


def _skills(
    ctx: CompactContext,
    agent: AgentState,
    out: Outcome,
    preserved: Sequence[pb.ConversationMessage],
) -> dict[str, bytes]:
    """The invoked-skills attachment; returns the stored skills to overwrite with what was
    restored (profiles with `Rules.rewrite_skills`; name -> new content, b"" when dropped)."""
    rules, policy, meter, templates = ctx.rules, ctx.policy, ctx.meter, ctx.templates
    placement = ctx.placement
    marker = ctx.skill_marker
    include_content = ctx.include_content
    skills = sorted(agent.skills.values(), key=lambda s: -s.invoked_at_ms)  # stable
    used = 0
    kept: list[pb.InvokedSkill] = []
    texts: list[tuple[str, str, str]] = []  # (name, path, content) for the rendering
    rewrites: dict[str, bytes] = {}
    # (name, truncated, tokens, rank, content tokens), decided below
    restored: list[tuple[str, bool, int, int, int]] = []
    for rank, skill in enumerate(skills, start=1):  # rank: newest first
        held = rough(skill.content.decode("utf-8", "replace"))
        if rules.rewrite_skills and not skill.content:
            out.decide(
                "skills",
                pb.SUBJECT_SKILL,
                skill.name,
                pb.OUTCOME_DROPPED_BY_BUDGET,
                rank=rank,
                detail="emptied when an earlier compaction's budget dropped it",
            )
            continue
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
                rank=rank,
                content_tokens=held,
                detail=(
                    f"needs {tokens} of the {policy.skills_token_budget}-token skills budget, "
                    f"{used} already used"
                    + ("; emptied: not restored again" if rules.rewrite_skills else "")
                ),
            )
            rewrites[skill.name] = b""
            continue
        used += tokens
        texts.append((skill.name, skill.path, content))
        if truncated:
            rewrites[skill.name] = content.encode()
        kept.append(
            pb.InvokedSkill(
                name=skill.name,
                path=skill.path,
                content=content.encode() if include_content else b"",
                truncated=truncated,
            )
        )
        restored.append((skill.name, truncated, tokens, rank, held))
    listed = [(n, p, c.encode()) for n, p, c in texts]
    in_tail = bool(kept) and rules.rewrite_skills and listed in _skills_in_tail(preserved)
    for name, truncated, tokens, rank, held in restored:
        if in_tail:
            outcome = pb.OUTCOME_EXCLUDED_VISIBLE_IN_TAIL
            detail = "the same invoked_skills attachment is in the preserved messages"
        else:
            outcome = pb.OUTCOME_TRUNCATED if truncated else pb.OUTCOME_RESTORED
            detail = f"truncated to {policy.max_tokens_per_skill} tokens" if truncated else ""
        out.decide(
            "skills",
            pb.SUBJECT_SKILL,
            name,
            outcome,
            tokens=tokens,
            rank=rank,
            detail=detail,
            content_tokens=held,
        )
    if kept and not in_tail:
        text = render.invoked_skills(texts, templates)
        out.attach(
            "skills",
            make(
                pb.ATTACHMENT_KIND_INVOKED_SKILLS,
                placement,
                render.blocks([text], placement, templates),
                invoked_skills=pb.InvokedSkills(skills=kept),
            ),
        )
    return rewrites if rules.rewrite_skills else {}


async def _hooks(
    ctx: CompactContext,
    session: Session,
    agent: AgentState,
    request: pb.CompactRequest | pb.PreviewCompactRequest,
    out: Outcome,
) -> None:
    contexts: list[str] = []
    if not request.skip_hooks:
        results = await run_hooks(
            ctx.hooks,
            session_id=session.session_id,
            cwd=session.cwd,
            agent_id=agent.agent_id,
            preview=ctx.preview,
            slots=ctx.hook_slots,
        )
        for r in results:
            out.decide(
                "hooks",
                pb.SUBJECT_HOOK,
                r.spec.command,
                r.outcome,
                tokens=int(core.estimate(r.context)) if r.context else 0,
                detail=r.detail,
            )
            if r.context:
                contexts.append(r.context)
    contexts.extend(c for c in request.additional_context if c)
    if contexts:
        placement, templates = ctx.placement, ctx.templates
        text = render.hook_additional_context(contexts, templates)
        out.attach(
            "hooks",
            make(
                pb.ATTACHMENT_KIND_HOOK_ADDITIONAL_CONTEXT,
                placement,
                render.blocks([text], placement, templates),
                hook_additional_context=pb.HookAdditionalContext(content=contexts),
            ),
        )


def carried_reads_of(
    agent: AgentState, snapshot: Sequence[tuple[str, core.FileState]], limit: int
) -> dict[str, CarriedRead]:
    """The reads to carry over this compaction: the agent's earlier carried reads, then every
    full (not ranged, not partial, verified) entry of the snapshot, newest last; at most
    `limit` (the oldest go first)."""
    out = dict(agent.carried_reads)
    for path, st in reversed(snapshot):  # oldest first, so the most recent ends last
        full = st.offset in (None, 1) and st.limit is None and not st.partial_view
        if not full or agent.unverified.get(path) is st:
            continue
        out.pop(path, None)
        out[path] = CarriedRead(len(st.content), content=st.content)
    while len(out) > limit:
        del out[next(iter(out))]
    return out


class _Steps:
    """What the steps decided besides the answer."""

    __slots__ = (
        "announced",
        "harness_rendered",
        "referenced",
        "rendered",
        "reseed",
        "rewrites",
        "sent_skills",
        "unaware",
    )

    def __init__(self) -> None:
        self.announced = Announced()
        self.referenced: dict[str, int] = {}
        self.unaware: dict[str, int] = {}  # AgentState.harness_unaware after the compaction
        self.reseed: list[Seed] = []
        self.rendered: dict[str, RenderedFile] = {}
        self.harness_rendered: dict[str, RenderedFile] = {}
        self.rewrites: dict[str, bytes] = {}
        self.sent_skills: set[str] | None = None


class CompactResult:
    """A compaction computed and not yet applied: the answer, and the agent's state after it.

    `run_compact` changes nothing; the caller applies the result (`apply`) once it knows the
    answer can be given, in the unit of work that stores what it changed. A preview's result is
    its answer only. The answer is `wire`, the serialised `CompactResponse` (what the servicer
    sends; a `PreviewCompactResponse` too); `response` decodes it, for callers that read it."""

    __slots__ = ("_carried", "_response", "_steps", "wire")

    def __init__(
        self,
        wire: bytes,
        steps: _Steps | None = None,
        carried: dict[str, CarriedRead] | None = None,
    ):
        self.wire = wire
        self._response: pb.CompactResponse | None = None
        self._steps = steps
        self._carried = carried

    @property
    def response(self) -> pb.CompactResponse:
        """The answer as a message (decoded from `wire` once)."""
        if self._response is None:
            self._response = pb.CompactResponse.FromString(self.wire)
        return self._response

    def apply(self, agent: AgentState, change: Change | None = None) -> None:
        """Make `agent` what the compaction leaves: its cache cleared and re-seeded with the
        restored files, nested memory and read marks cleared, the announced sets and the sent
        skill names updated, carried reads and notes kept, skills rewritten, the count up by one;
        and name all that on `change` (with the digests of the re-read contents that changed).
        Nothing for a preview."""
        steps = self._steps
        if steps is None:
            return
        agent.files.clear()
        agent.nested_memory.clear()
        agent.read_mtimes.clear()
        agent.seen.clear()
        agent.rendered = steps.rendered
        agent.harness_rendered = steps.harness_rendered
        files, marks, seen = agent.files, agent.read_mtimes, agent.seen
        for r in steps.reseed:
            state = r.state
            files.set(r.path, state)
            marks[r.path] = (state.timestamp, r.mtime_ms)
            # What the agent sees of it now: the lines restored (nothing seen before: cleared).
            first = state.offset or 1
            seen[r.path] = Seen(first, first + max(r.lines, 1) - 1)
        steps.announced.store(agent.catalog)
        if steps.sent_skills is not None:
            agent.catalog.sent_skill_names = steps.sent_skills
        agent.carried_refs = steps.referenced
        agent.harness_unaware = steps.unaware
        if self._carried is not None:
            agent.carried_reads = self._carried
        rewritten = []
        for name, content in steps.rewrites.items():
            old = agent.skills[name]
            skill = agent.skills[name] = InvokedSkill(name, old.path, content, old.invoked_at_ms)
            rewritten.append(skill)
        agent.compactions += 1
        if change is not None:
            change.agent = change.files = True
            change.skills.extend(rewritten)
            for r in steps.reseed:
                if r.digest is not None:
                    change.digests[r.path] = (r.state.content, r.digest)


async def _steps(
    ctx: CompactContext,
    session: Session,
    agent: AgentState,
    request: pb.CompactRequest | pb.PreviewCompactRequest,
    snapshot: Sequence[tuple[str, core.FileState]],
    preserved: Sequence[pb.ConversationMessage] | None,
    excluded: dict[str, pb.Outcome.ValueType],
    out: Outcome,
) -> _Steps:
    """Steps 2-8 into `out` (`preserved`: the kept tail of a PARTIAL compaction, None for
    FULL); what they decided besides the answer."""
    result = _Steps()
    templates, placement = ctx.templates, ctx.placement

    # 2. Files (complement mode: only those the harness leaves out, restore/harness.py).
    policy = ctx.policy
    pick = None
    if _needs_pick(policy):
        pick = await claude_code_pick(ctx, session, agent, snapshot, excluded)
        result.harness_rendered = pick.rendered
        # In complement mode the budget is the caller's (what it can send), never matched.
        if policy.match_budget == pb.HARNESS_RULE_CLAUDE_CODE and not policy.complement_on:
            policy = dataclasses.replace(policy, file_token_budget=pick.tokens)
            ctx = dataclasses.replace(ctx, policy=policy)
    step = FileStep(session, ctx, memo=agent.rendered)
    complement = pick is not None and policy.complement_on
    result.referenced, result.reseed, result.rendered = await restore_files(
        step,
        agent,
        snapshot,
        excluded=excluded,
        out=out,
        harness=pick.restored if complement and pick is not None else None,
        harness_order=pick.order if pick is not None else (),
    )
    if complement and pick is not None:
        _left_to_harness(agent, pick, result, out)
        return result

    # 3-6. Tasks, plan, plan mode, skills.
    _task_status(ctx, session, agent, out)
    await _plan(ctx, session, agent, out)
    tail = preserved or ()
    result.rewrites = _skills(ctx, agent, out, tail)

    # 7. Catalogue re-announcement (current Claude Code: the skill listing among them).
    baseline = announced_in_messages(preserved) if preserved is not None else Announced()
    deltas, result.announced = catalog_deltas(agent.catalog, baseline, templates, placement)
    listing = None
    if ctx.rules.reannounce_skill_listing:
        listing, result.sent_skills = skill_listing_again(
            agent.catalog, listed_in_messages(tail), templates, placement
        )
    for att in deltas:
        if listing is not None and att.kind == pb.ATTACHMENT_KIND_MCP_INSTRUCTIONS_DELTA:
            out.attach("deltas", listing)
            listing = None
        out.attach("deltas", att)
    if listing is not None:
        out.attach("deltas", listing)

    # 8. Session-start hooks.
    await _hooks(ctx, session, agent, request, out)
    return result


def _needs_pick(policy: Policy) -> bool:
    """Whether the policy weighs Claude Code's own selection (restore/harness.py). The value
    per token ranking does not (the pick is no feature of it): it is told which files the pick
    restores only when the selection is computed anyway (a matched budget, a complement) and
    while the evaluation trains it (`ranker.OBSERVER`: those files are left out of training),
    which spares a scored policy without them a second file step per Compact."""
    return (
        pb.HARNESS_RULE_CLAUDE_CODE in (policy.complement, policy.match_budget)
        or policy.ranking == pb.FILE_RANKING_CLAUDE_CODE_FIRST
        or (policy.ranking == pb.FILE_RANKING_SCORED and ranker.OBSERVER.get() is not None)
    )


def _left_to_harness(agent: AgentState, pick: HarnessPick, result: _Steps, out: Outcome) -> None:
    """Complement mode after the files: the harness's restored files held as restored (set
    last: the most recently used), its notes kept as its candidates, the files postcompact
    alone restored remembered; every other step is the harness's own (files only), and the
    invoked skills say so."""
    result.unaware = {
        r.path: r.state.timestamp for r in result.reseed if not pick.held_by_harness(r.path)
    }
    result.reseed = [*result.reseed, *pick.seeds]
    result.referenced = pick.referenced
    result.announced = Announced.of(agent.catalog)  # nothing announced by postcompact
    for rank, skill in enumerate(sorted(agent.skills.values(), key=lambda s: -s.invoked_at_ms)):
        out.decide(
            "skills",
            pb.SUBJECT_SKILL,
            skill.name,
            pb.OUTCOME_RESTORED_BY_HARNESS,
            rank=rank + 1,
            detail="the harness re-attaches invoked skills itself (complement mode)",
        )


async def run_compact(
    ctx: CompactContext,
    session: Session,
    agent: AgentState,
    request: pb.CompactRequest | pb.PreviewCompactRequest,
) -> CompactResult:
    """Run the pipeline for `agent` of `session` under `ctx` (`CompactContext.of`: the policy,
    templates, rules, limits and hooks, resolved by the caller); see the module docstring.
    Nothing is changed: the result says what to apply (`CompactResult.apply`).

    An answer over `ctx.max_answer` bytes is refused (`RESPONSE_TOO_LARGE`): there is no result
    to apply. Admission is the caller's: a call's answer is reserved (admission.py) once this
    returns, before anything is applied. For PreviewCompact (`ctx.preview`) the caller wraps the
    response into a PreviewCompactResponse.
    """
    partial = request.kind == pb.COMPACT_KIND_PARTIAL
    preserved = list(request.preserved_messages) if partial else []
    out = Outcome()

    excluded = _exclusions(ctx, session, agent, preserved)

    # 1. Snapshot; the clear is the result's (Claude Code clears after the summary succeeded:
    #    the caller calls Compact once the summary exists).
    snapshot = list(agent.files.snapshot())
    steps = _steps(
        ctx, session, agent, request, snapshot, preserved if partial else None, excluded, out
    )
    if ctx.preview:
        await steps
        return CompactResult(_checked(out.wire(agent.compactions), ctx.max_answer))
    carried = (
        carried_reads_of(agent, snapshot, ctx.carry_limit) if ctx.policy.carry_read_state else None
    )
    decided = await steps
    return CompactResult(
        _checked(out.wire(agent.compactions + 1), ctx.max_answer), decided, carried
    )


def _checked(wire: bytes, max_answer: int | None) -> bytes:
    """`wire` once it is known to be within the message limit, before anything is applied."""
    if max_answer is not None:
        check_answer(len(wire), max_answer, "Compact")
    return wire
