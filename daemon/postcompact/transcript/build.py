"""Transcript events into a session's state, and a compaction at each boundary
(docs/transcripts.md).

`Builder` applies the events of a parsed transcript to a `Session` held in memory only: the
caller registers and stores the session once everything applied (import), or throws it away
(replay), so nothing is ever half-imported.

- Reads (`RecordRead` semantics: offset default 1, the range's text), writes (`RecordWrite`: no
  range, the text after the write when known, the lines it changed from the record's hunks as
  its `changed_lines`: the span seen carried over by `state.seen.after_write`, as the daemon
  does), the file-unchanged stub (a use: recency), files changed on disk (their entry's
  timestamp moves, as Claude Code re-reads them), skills, plan mode, the plan file, background
  tasks, and the catalogue as its announcements built it, each for the agent whose records they
  are (a sidechain's agent is started on first sight).
- Timestamps: `stamp(event, path)` decides (import: the record's time, as Claude Code's own
  `--resume` rebuilds them; replay: the recreated file's mtime).
- A resumed process (`Resumed`) rebuilds the agent's file state from the records since the last
  boundary, as Claude Code does on `--resume`: whole-file reads (timestamps their record times)
  and writes; ranged reads are not kept.
- A boundary runs postcompact's own Compact on the state just before it: FULL, or PARTIAL with
  the preserved segment as the kept messages.
- The live calls' limits hold (`config`): agents per session, tasks, skills, catalogue entries
  and bytes, each refused by the live call's own reason with the line that passed it; a value
  no check foresaw is BAD_TRANSCRIPT naming its line, never a failure of the daemon.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from postcompact import core, diskaccess
from postcompact.config import Config
from postcompact.errors import ResourceExhausted
from postcompact.state import AgentState, InvokedSkill, Session, catalog_parts
from postcompact.state.seen import after_write, bad_changed_lines, line_count, saw
from postcompact.transcript.parse import (
    CHECK_EVERY,
    Announced,
    Boundary,
    Event,
    FileChanged,
    FileRead,
    FileUnchanged,
    FileWritten,
    ModeChanged,
    PlanFile,
    PlanSlug,
    Record,
    RecordedItem,
    Resumed,
    SkillInvoked,
    Stop,
    TaskChanged,
    TranscriptError,
    check_path,
    no_stop,
    too_large,
)
from postcompact.transcript.paths import PathMap, join
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["Builder", "conversation", "restored_items"]

log = logging.getLogger("postcompact.transcript")

_MODES = {
    "plan": pb.PERMISSION_MODE_PLAN,
    "default": pb.PERMISSION_MODE_DEFAULT,
    "acceptEdits": pb.PERMISSION_MODE_ACCEPT_EDITS,
    "bypassPermissions": pb.PERMISSION_MODE_BYPASS_PERMISSIONS,
    "auto": pb.PERMISSION_MODE_DEFAULT,
}
_STATUS = {
    "running": pb.TASK_STATUS_RUNNING,
    "completed": pb.TASK_STATUS_COMPLETED,
    "failed": pb.TASK_STATUS_FAILED,
    "killed": pb.TASK_STATUS_KILLED,
}
_AGENT_LINE = re.compile(r"\A- ([^:]+): (.*?)(?: \(Tools: (.*)\))?\Z", re.DOTALL)
_SKILL_LINE = re.compile(r"\A- ([^:]+)(?:: (.*))?\Z", re.DOTALL)

Stamp = Callable[[Event, str], int]
OnBoundary = Callable[[Boundary, AgentState, list[pb.ConversationMessage]], Awaitable[None]]


@dataclass(slots=True)
class Builder:
    session: Session
    paths: PathMap
    new_cache: Callable[[Session], core.FileStateCache]
    stamp: Stamp
    on_boundary: OnBoundary
    home: str = ""  # the transcript machine's home (for plan slugs)
    # Import: a file whose local path one of these matches is skipped, as RecordRead and
    # RecordWrite refuse to take such a file's content from a harness (docs/security.md).
    deny_globs: tuple[str, ...] = ()
    warnings: list[str] = field(default_factory=list)
    applied: int = 0
    reapplied: int = 0  # events applied again by resumes
    skipped_paths: set[str] = field(default_factory=set)
    # Per agent: the file events since its last boundary (for a resume's rebuild).
    since_boundary: dict[str, list[tuple[Event, str]]] = field(default_factory=dict)
    # The catalogue as announced so far, per agent: (kind -> name -> line or block).
    catalogue: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    config: Config = field(default_factory=Config)  # the live calls' limits
    tasks_of: Counter[str] = field(default_factory=Counter)  # tasks per starting agent

    def _limit(self, e: Event, reason: str, limit: str, message: str) -> ResourceExhausted:
        """The live call's refusal of the same excess, naming the transcript's line."""
        return ResourceExhausted(
            reason,
            f"line {e.line}: {message} (limits.{limit})",
            {"limit": limit, "line": str(e.line)},
        )

    def warn(self, event: Event, message: str) -> None:
        if len(self.warnings) < 200:
            self.warnings.append(f"line {event.line}: {message}")

    def agent(self, e: Event) -> AgentState:
        agent_id = e.agent
        a = self.session.agents.get(agent_id)
        if a is None:
            cap = self.config.max_agents_per_session
            if len(self.session.agents) >= cap:  # before its cache: 200,000 would take GiBs
                raise self._limit(
                    e, "TOO_MANY_AGENTS", "max_agents_per_session", f"more than {cap} agents"
                )
            a = AgentState(agent_id, self.new_cache(self.session))
            self.session.agents[agent_id] = a
        return a

    def local(self, event: Event, path: str) -> str | None:
        """The local path of the transcript's `path`; None (warned once) when it has no local
        place or a deny glob matches it."""
        out = self.paths.local(path)
        if out is None:
            self._skip(event, path, f"no local place for {path!r} (map its prefix)")
            return None
        check_path(out, event.line, "path (as mapped here)")  # a mapping may lengthen it
        glob = diskaccess.is_denied((out,), self.deny_globs)
        if glob is not None:
            self._skip(event, path, f"{path!r} matches the deny rule {glob!r}")
            return None
        return out

    def _skip(self, event: Event, path: str, why: str) -> None:
        """Skip `path`, warning the first time why."""
        if path not in self.skipped_paths:
            self.skipped_paths.add(path)
            self.warn(event, f"{why}: skipped")

    async def run(self, events: Sequence[Event], stop: Stop = no_stop) -> None:
        """Apply `events`; `stop` is called every CHECK_EVERY events (it raises to end the
        work: the caller's deadline, a cancel)."""
        for i, e in enumerate(events):
            if i % CHECK_EVERY == 0:
                stop()
            await self.guarded(e)
        self.check_catalogs()

    async def guarded(self, e: Event) -> None:
        """`event(e)`, a failure on a value of it (or of the compaction it runs) answered as the
        transcript's fault at its line; logged with its traceback, for a check to add."""
        try:
            await self.event(e)
        except TranscriptError:
            raise
        except (TypeError, ValueError, AttributeError, LookupError, ArithmeticError) as exc:
            log.warning("transcript line %d: %r", e.line, exc, exc_info=True)
            raise TranscriptError(
                e.line, f"a value of this record cannot be used ({exc})"
            ) from None

    def check_catalogs(self) -> None:
        """CATALOG_TOO_LARGE as SetCatalog answers it, for the catalogue each agent ends with."""
        cap = self.config.max_catalog_bytes
        for a in self.session.agents.values():
            size = catalog_parts(a.catalog).ByteSize()
            if size > cap:
                raise ResourceExhausted(
                    "CATALOG_TOO_LARGE",
                    f"agent {a.agent_id!r}'s catalogue would take {size} bytes, over "
                    f"limits.max_catalog_bytes ({cap})",
                    {"limit": "max_catalog_bytes"},
                )

    async def event(self, e: Event) -> None:
        a = self.agent(e)
        if isinstance(e, FileRead):
            path = self.local(e, e.path)
            if path is None:
                return
            offset = e.offset if e.offset is not None else 1
            content = e.content.encode("utf-8", "surrogatepass")
            a.files.set(path, core.FileState(content, self.stamp(e, path), offset, e.limit, False))
            a.read_mtimes.pop(path, None)
            saw(a.seen, path, e.start_line, e.start_line + e.num_lines - 1)
            self._since(e, path)
        elif isinstance(e, FileUnchanged):
            path = self.local(e, e.path)
            if path is not None:
                a.files.get(path)  # a use: the entry becomes the most recently used
        elif isinstance(e, FileWritten):
            path = self.local(e, e.path)
            if path is None:
                return
            content = (e.content or "").encode("utf-8", "surrogatepass")
            held = a.files.peek(path)
            a.files.set(path, core.FileState(content, self.stamp(e, path), None, None, False))
            a.read_mtimes.pop(path, None)
            self._wrote(a, path, held, e, content)
            self._since(e, path)
        elif isinstance(e, FileChanged):
            path = self.local(e, e.path)
            entry = a.files.peek(path) if path is not None else None
            if path is not None and entry is not None:
                stamp = self.stamp(e, path)
                a.files.set(path, core.FileState(entry.content, stamp, 1, None, entry.partial_view))
        elif isinstance(e, SkillInvoked):
            cap = self.config.max_skills_per_agent
            if e.name not in a.skills and len(a.skills) >= cap:
                raise self._limit(
                    e,
                    "TOO_MANY_SKILLS",
                    "max_skills_per_agent",
                    f"agent {a.agent_id!r} invokes more than {cap} skills",
                )
            content = e.content.encode("utf-8", "surrogatepass")
            a.skills.pop(e.name, None)
            a.skills[e.name] = InvokedSkill(e.name, e.path, content, e.time_ms)
        elif isinstance(e, ModeChanged):
            if e.mode in _MODES:
                a.mode = _MODES[e.mode]
        elif isinstance(e, PlanFile):
            path = self.local(e, e.path)
            if path is not None:
                a.plan_file_path = path
        elif isinstance(e, PlanSlug):
            if self.home:
                plan = join(self.home, ".claude", "plans", f"{e.slug}.md")
                path = self.local(e, plan)
                if path is not None:
                    a.plan_file_path = path
        elif isinstance(e, TaskChanged):
            self._task(e, a)
        elif isinstance(e, Announced):
            self._announced(e, a)
        elif isinstance(e, Resumed):
            self._resume(e, a)
        elif isinstance(e, Boundary):
            preserved = conversation(e.preserved, self.paths)
            await self.on_boundary(e, a, preserved)
            self.since_boundary[e.agent] = []
        else:
            return
        self.applied += 1

    def _wrote(
        self,
        a: AgentState,
        path: str,
        held: core.FileState | None,
        e: FileWritten,
        content: bytes,
        *,
        warn: bool = True,
    ) -> None:
        """What was seen of `path` after the write `e`, as the daemon takes a RecordWrite with
        the record's hunks as its changed lines (when they are lines of the text; else warned,
        and the diff decides)."""
        changed = e.changed
        bad = bad_changed_lines(changed, line_count(content)) if changed is not None else None
        if bad is not None:
            if warn:
                self.warn(e, f"{e.tool}: its structuredPatch does not fit its text ({bad[1]})")
            changed = None
        new = content if e.content is not None else None
        a.seen[path] = after_write(a.seen.get(path), held, new, changed)

    def _since(self, e: Event, path: str) -> None:
        self.since_boundary.setdefault(e.agent, []).append((e, path))

    def _resume(self, e: Resumed, a: AgentState) -> None:
        """Claude Code on `--resume`: the file state rebuilt from the records since the last
        boundary, whole reads and writes only, each with its record's time. What it applies
        again counts in the transcript's events budget (resumes after many events, each
        re-applying them all, would otherwise be quadratic)."""
        self.reapplied += len(self.since_boundary.get(a.agent_id, []))
        cap = self.config.max_transcript_events
        if self.reapplied > cap:
            raise too_large(e.line, "events", "max_transcript_events", cap)
        a.files.clear()
        a.read_mtimes.clear()
        a.seen.clear()
        for old, path in self.since_boundary.get(a.agent_id, []):
            if isinstance(old, FileRead):
                whole = old.offset in (None, 1) and old.limit is None
                if whole:
                    content = old.content.encode("utf-8", "surrogatepass")
                    a.files.set(path, core.FileState(content, old.time_ms, 1, None, False))
                    saw(a.seen, path, 1, max(1, old.num_lines))
            elif isinstance(old, FileWritten):
                content = (old.content or "").encode("utf-8", "surrogatepass")
                held = a.files.peek(path)
                a.files.set(path, core.FileState(content, old.time_ms, None, None, False))
                self._wrote(a, path, held, old, content, warn=False)  # warned when first applied

    def _task(self, e: TaskChanged, a: AgentState) -> None:
        tasks = self.session.tasks
        t = tasks.get(e.task_id)
        if t is None:
            cfg = self.config
            if len(tasks) >= cfg.max_tasks_per_session:
                raise self._limit(
                    e,
                    "TOO_MANY_TASKS",
                    "max_tasks_per_session",
                    f"more than {cfg.max_tasks_per_session} tasks",
                )
            t = pb.Task(task_id=e.task_id, task_type=e.task_type or "local_agent")
            if e.task_type == "local_bash":
                t.agent_id = a.agent_id  # the agent that started the shell
                if self.tasks_of[a.agent_id] >= cfg.max_tasks_per_agent:
                    raise self._limit(
                        e,
                        "TOO_MANY_TASKS_FOR_AGENT",
                        "max_tasks_per_agent",
                        f"agent {a.agent_id!r} starts more than {cfg.max_tasks_per_agent} tasks",
                    )
                self.tasks_of[a.agent_id] += 1
            tasks[e.task_id] = t
        if e.task_type and not t.task_type:
            t.task_type = e.task_type
        if e.status is not None:
            t.status = _STATUS[e.status]
        if e.description is not None and e.description:
            t.description = e.description
        if e.command is not None:
            t.command = e.command
        if e.output_file_path:
            out = self.paths.local(e.output_file_path)
            t.output_file_path = out if out is not None else e.output_file_path
        if e.retrieved is not None:
            t.retrieved = e.retrieved
        if e.summary:
            if t.status == pb.TASK_STATUS_RUNNING:
                t.progress_summary = e.summary
            elif t.status == pb.TASK_STATUS_FAILED:
                t.error = e.summary

    def _announced(self, e: Announced, a: AgentState) -> None:
        """The catalogue as its announcements built it; what was announced is marked so."""
        book = self.catalogue.setdefault(a.agent_id, {}).setdefault(e.kind, {})
        cat = a.catalog
        if e.kind == "skill_listing":
            for line in e.added_lines:
                m = _SKILL_LINE.match(line)
                if m:
                    book[m.group(1).strip()] = (m.group(2) or "").strip()
            cat.skill_listing = [
                pb.SkillListingEntry(name=n, description=d) for n, d in book.items()
            ]
            cat.sent_skill_names.update(book)
            self._check_entries(e, a)
            return
        lines = dict(zip(e.added, e.added_lines, strict=False))
        for name in e.added:
            book[name] = lines.get(name, "")
        for name in e.removed:
            book.pop(name, None)
        if e.kind == "deferred_tools":
            cat.deferred_tools = list(book)
            cat.announced_tools = set(book)
        elif e.kind == "agent_types":
            cat.agent_types = [_agent_type(n, line) for n, line in book.items()]
            cat.announced_agent_types = set(book)
        elif e.kind == "mcp":
            cat.mcp_servers = {n: _mcp_instructions(n, block) for n, block in book.items()}
            cat.announced_mcp = {n for n, text in cat.mcp_servers.items() if text}
        self._check_entries(e, a)

    def _check_entries(self, e: Event, a: AgentState) -> None:
        """CATALOG_TOO_MANY_ENTRIES as SetCatalog answers it (deferred tools, agent types, MCP
        servers and skills of the listing together)."""
        entries = sum(len(book) for book in self.catalogue.get(a.agent_id, {}).values())
        cap = self.config.max_catalog_entries
        if entries > cap:
            raise self._limit(
                e,
                "CATALOG_TOO_MANY_ENTRIES",
                "max_catalog_entries",
                f"agent {a.agent_id!r}'s catalogue would hold {entries} entries, over {cap}",
            )


def _agent_type(name: str, line: str) -> pb.AgentType:
    m = _AGENT_LINE.match(line)
    if not m:
        return pb.AgentType(agent_type=name)
    tools = [t.strip() for t in (m.group(3) or "").split(",") if t.strip()]
    if tools == ["All tools"]:  # what an agent without a tools list is shown with
        tools = []
    return pb.AgentType(agent_type=name, when_to_use=m.group(2), tools=tools)


def _mcp_instructions(name: str, block: str) -> str:
    head = f"## {name}\n"
    return block[len(head) :] if block.startswith(head) else block


_RESTORED_KINDS = {
    pb.ATTACHMENT_KIND_FILE: "file",
    pb.ATTACHMENT_KIND_COMPACT_FILE_REFERENCE: "reference",
}


def restored_items(resp: pb.CompactResponse, paths: PathMap) -> list[RecordedItem]:
    """The files and too-large notes `resp` restored, in order, paths as the transcript has
    them."""
    return [
        RecordedItem(
            _RESTORED_KINDS[a.kind],
            paths.original(
                a.file.path if a.kind == pb.ATTACHMENT_KIND_FILE else a.file_reference.path
            ),
        )
        for a in resp.attachments
        if a.kind in _RESTORED_KINDS
    ]


def conversation(records: Sequence[Record], paths: PathMap) -> list[pb.ConversationMessage]:
    """Kept records as the messages a PARTIAL Compact takes (text, tool uses and results,
    delta and skill attachments); Read inputs name the local paths."""
    out: list[pb.ConversationMessage] = []
    for r in records:
        msg = r.data.get("message")
        if r.type in ("user", "assistant") and isinstance(msg, dict):
            m = pb.ConversationMessage(role=pb.ROLE_USER if r.type == "user" else pb.ROLE_ASSISTANT)
            content = msg.get("content")
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for b in blocks:
                _block(m, b, paths)
            out.append(m)
        elif r.type == "attachment":
            att = _kept_attachment(r.data.get("attachment"))
            if att is not None:
                out.append(
                    pb.ConversationMessage(
                        role=pb.ROLE_USER, content=[pb.ContentBlock(attachment=att)]
                    )
                )
    return out


def _block(m: pb.ConversationMessage, b: Any, paths: PathMap) -> None:
    if not isinstance(b, dict):
        return
    kind = b.get("type")
    if kind == "text" and isinstance(b.get("text"), str):
        m.content.add(text=b["text"].encode("utf-8", "surrogatepass"))
    elif kind == "tool_use" and isinstance(b.get("input"), dict):
        inp = dict(b["input"])
        fp = inp.get("file_path")
        if isinstance(fp, str):
            local = paths.local(fp)
            if local is not None:
                inp["file_path"] = local
        m.content.add(
            tool_use=pb.ToolUse(
                id=str(b.get("id", "")), name=str(b.get("name", "")), input_json=json.dumps(inp)
            )
        )
    elif kind == "tool_result":
        c = b.get("content")
        text = (
            c
            if isinstance(c, str)
            else "".join(
                t for x in c if isinstance(x, dict) and isinstance(t := x.get("text", ""), str)
            )
            if isinstance(c, list)
            else ""
        )
        m.content.add(
            tool_result=pb.ToolResult(
                tool_use_id=str(b.get("tool_use_id", "")),
                content=text.encode("utf-8", "surrogatepass"),
                is_error=b.get("is_error") is True,
            )
        )


def _kept_attachment(a: Any) -> pb.Attachment | None:
    if not isinstance(a, dict):
        return None
    kind = a.get("type")

    def strs(key: str) -> list[str]:
        v = a.get(key)
        return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []

    if kind == "deferred_tools_delta":
        return pb.Attachment(
            kind=pb.ATTACHMENT_KIND_DEFERRED_TOOLS_DELTA,
            deferred_tools_delta=pb.DeferredToolsDelta(
                added_names=strs("addedNames"), removed_names=strs("removedNames")
            ),
        )
    if kind == "agent_listing_delta":
        return pb.Attachment(
            kind=pb.ATTACHMENT_KIND_AGENT_LISTING_DELTA,
            agent_listing_delta=pb.AgentListingDelta(
                added_types=strs("addedTypes"), removed_types=strs("removedTypes")
            ),
        )
    if kind == "mcp_instructions_delta":
        return pb.Attachment(
            kind=pb.ATTACHMENT_KIND_MCP_INSTRUCTIONS_DELTA,
            mcp_instructions_delta=pb.McpInstructionsDelta(
                added_names=strs("addedNames"), removed_names=strs("removedNames")
            ),
        )
    if kind == "invoked_skills":
        listed = a.get("skills")
        skills = [
            pb.InvokedSkill(
                name=str(s.get("name", "")),
                path=str(s.get("path", "")),
                content=str(s.get("content", "")).encode("utf-8", "surrogatepass"),
            )
            for s in (listed if isinstance(listed, list) else [])
            if isinstance(s, dict)
        ]
        return pb.Attachment(
            kind=pb.ATTACHMENT_KIND_INVOKED_SKILLS, invoked_skills=pb.InvokedSkills(skills=skills)
        )
    return None
