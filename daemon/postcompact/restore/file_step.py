"""The pipeline's file step: which files come back, and why (docs/claude-code.md §3,
docs/profiles.md).

Given the snapshot of the agent's file-state cache (MRU first), plus, under profiles that keep
them (`Rules.references_stay_candidates`), the files restored as too-large notes last time:

1. Exclude the plan file, the memory files and files whose Read is still visible in the preserved
   tail (two passes: a Read whose tool_result starts with the "File unchanged" stub does not count,
   because the content it points at may have been summarised away).
   Under current Claude Code (`Rules.uploads_excluded`) also the files under the upload and
   download folders and paths through an `artifact-files` folder (`upload_or_download`).
2. Stable sort by timestamp, newest first (ties keep MRU order); keep the first `max_files`.
   Under current Claude Code (`Rules.saved_result_notes`) a saved tool result (`saved_result`)
   is not among them: those Claude Code names (`named_saved_result`) follow the files as
   too-large notes, at most `max_files` more, newest first, and go through step 5 after them;
   every saved result and upload stays a candidate at the next compaction.
3. Re-read each kept file from disk, in parallel (Claude Code's `Promise.all`): one worker thread
   per file once the files are big enough for the reads to matter (`PARALLEL_READ_BYTES` in all,
   judged by what the cache held). Below that they are read in turn on the event loop when every
   byte is in the page cache (`diskaccess.off_loop`: a few µs a file, where one thread hop costs
   ~100 µs), else all on one worker thread. The core reads, caps and renders them all in one
   call (`core.restore_files`, `FileStep.restore_many`), each path checked first as every read
   path checks it (the session roots, the deny globs, no symlink out of the roots): denied /
   binary / unreadable files are dropped with the error as detail.
   A file last read as a range (offset > 1) is re-read as that range under profiles with
   `Rules.restore_ranges` (the default): numbered from its first line, its Read call carrying the
   offset and limit; the whole file when it is now shorter than the range's start.
4. Per-file cap `max_tokens_per_file`. Under the default profile (`Rules.cap_rendered`) it bounds
   the whole attachment as the model sees it: the rough estimate of its blocks (the attachment's
   `tokens`) and the policy's count of them (per-type rate, exact) are both within the cap, and a
   truncated file keeps the most whole lines that fit with the marker. Under the Claude Code
   profiles it is measured with the policy's counter (the rough counter uses the per-type rate,
   as Claude Code's `validateContentTokens`) on the text as Claude Code attaches it. Either way
   the `\r` ending each line is removed. The core measures and cuts (rust_core/src/fileanswer.rs);
   this module says why, in each decision's detail. A file over the cap, or over
   `max_file_size_bytes`, goes by the policy's `oversize` (the default profile's: SKIP; the
   Claude Code profiles': REFERENCE):
   - SKIP: left out (`OUTCOME_DROPPED_OVER_CAP`); its budget goes to the files that fit.
   - TRUNCATE_HEAD: the longest head within the cap *including* the marker, cut back to
     a line boundary (a first line longer than the cap is cut inside the line), numbered as usual
     and followed by the marker (`{shown_lines}` of `{total_lines}`, Read with offset
     `{next_offset}`). A file over the size cap is read only up to `max_file_size_bytes`.
   - REFERENCE: Claude Code's path-only `compact_file_reference` note.
5. Admit first-fit, in selection order, while the running total stays within `file_token_budget`.
   The cost of a file is Claude Code's: the rough estimate of `JSON.stringify` of the attachment
   payload (`Rules.payload_cost`, current Claude Code)

       {"type": "file", "filename": P, "content": {"type": "text", "file": {"filePath": P,
        "content": TEXT, "numLines": N, "startLine": 1, "totalLines": T}}, "displayPath": D}

   or, under the 2.1.88 and default profiles, of the whole attachment message around it
   (`{"attachment": PAYLOAD, "type": "attachment", "uuid": <36 chars>, "timestamp": <24 chars>}`).
   `content` is the text as attached, without numbering (for a truncated file the head plus the
   marker). A reference costs its payload `{"type": "compact_file_reference", "filename": P,
   "displayPath": D}` the same way.
6. Re-seed the cache with what was restored: offset 1, no limit (a truncated file: limit = the
   lines shown, content = the head; a range: its offset and limit), the bytes on disk (not the
   text without `\r`: seeds are verified against disk after a restart), timestamp = the file's
   mtime under profiles with mtime timestamps, otherwise one read time for the whole batch (taken
   before the re-reads). The entries are set in reverse rank order, rank 1 last (the most
   recently used), so equal timestamps rank them the same way at the next compaction: restored
   files keep their order.
   Referenced files are not re-seeded; profiles that keep them as candidates remember them in
   `AgentState.carried_refs` with the timestamp they ranked by.

Blocks: a restored file is user-placed (the Read call, the Read result, and the escape note when
its text held a closing reminder tag); a reference is a system section under profiles with
system sections, else user-placed and wrapped.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, NamedTuple

from postcompact import core, diskaccess, profiles, render
from postcompact.paths import display_path, now_ms, within_roots
from postcompact.refusals import read_outcome
from postcompact.render import Templates
from postcompact.restore import ranker
from postcompact.restore.context import CompactContext
from postcompact.restore.meter import rough
from postcompact.restore.outcome import Outcome, Pending
from postcompact.restore.policy import Policy
from postcompact.state import AgentState, Session, content_digest
from postcompact.state.model import RenderedFile
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["FileStep", "read_paths_in_tail", "restore_files"]

READ_TOOL_NAME = "Read"
# A Read in the kept tail counts as visible only with a file_path up to this long (Claude Code).
MAX_TAIL_PATH = 4096
# At most this many bytes of attachments kept per agent for its next compaction
# (`AgentState.rendered`: the restored files' attachments, reused for files read back unchanged).
MAX_RENDERED_BYTES = 256 * 1024
# Re-read the selected files on one thread each once they add up to this much (what the cache
# held); below it one worker thread reads them all (see step 3).
PARALLEL_READ_BYTES = 256 * 1024
PARALLEL_READ_WORKERS = 5
_UUID = "00000000-0000-4000-8000-000000000000"  # 36 characters, like a uuid v4
_TIMESTAMP = "2026-01-01T00:00:00.000Z"  # 24 characters, like Date.toISOString()


def _message(attachment: Mapping[str, object], payload_only: bool) -> Mapping[str, object]:
    if payload_only:
        return attachment
    return {"attachment": attachment, "type": "attachment", "uuid": _UUID, "timestamp": _TIMESTAMP}


def attachment_cost(
    attachment: Mapping[str, object], *, payload_only: bool = False, extra_units: int = 0
) -> int:
    """Rough tokens of `JSON.stringify(attachment)` (`payload_only`) or of the attachment message
    around it (see module doc), plus `extra_units` UTF-16 units serialised elsewhere."""
    text = render.js_json_stringify(_message(attachment, payload_only))
    units = int(core.utf16_len(text)) + extra_units
    return int(core.estimate_from_utf16_len(units))


@functools.lru_cache(maxsize=1024)
def _file_message_units(
    path: str,
    display: str,
    num_lines: int | None,
    total_lines: int,
    payload_only: bool,
    start_line: int = 1,
) -> int:
    """UTF-16 units of the serialised file attachment (message) with `""` as its content (the
    same files come back Compact after Compact: cached)."""
    file_json = {
        "filePath": path,
        "content": "",
        "numLines": num_lines,
        "startLine": start_line,
        "totalLines": total_lines,
    }
    attachment = {
        "type": "file",
        "filename": path,
        "content": {"type": "text", "file": file_json},
        "displayPath": display,
    }
    return int(core.utf16_len(render.js_json_stringify(_message(attachment, payload_only))))


def read_paths_in_tail(
    messages: Iterable[pb.ConversationMessage],
    *,
    cwd: str,
    home: str,
    key: Callable[[str], str],
    stubs: Sequence[str] = (render.FILE_UNCHANGED_STUB,),
    tool: str = READ_TOOL_NAME,
    path_key: str = "file_path",
) -> set[str]:
    """Cache keys of files whose read is visible in `messages` (Claude Code's
    `collectReadToolFilePaths`): pass 1 collects the tool_use ids answered by an unchanged stub,
    pass 2 takes `expandPath(input[path_key])` of every other `tool` tool_use (Claude Code's
    `Read` and `file_path`; a harness's own through its templates) whose path is at most
    `MAX_TAIL_PATH` characters. Roles are not checked (tool_use blocks count wherever they
    appear); malformed inputs are ignored."""
    messages = list(messages)
    stub_prefixes = [s.encode() for s in dict.fromkeys(stubs) if s]
    stub_ids: set[str] = set()
    for m in messages:
        for block in m.content:
            if block.WhichOneof("block") == "tool_result":
                content = block.tool_result.content
                if any(content.startswith(p) for p in stub_prefixes):
                    stub_ids.add(block.tool_result.tool_use_id)
    paths: set[str] = set()
    for m in messages:
        for block in m.content:
            if block.WhichOneof("block") != "tool_use":
                continue
            use = block.tool_use
            if use.name != tool or use.id in stub_ids:
                continue
            try:
                data = json.loads(use.input_json or "{}")
            except (ValueError, RecursionError):  # malformed, or nested past the parser's depth
                continue
            file_path = data.get(path_key) if isinstance(data, dict) else None
            if not isinstance(file_path, str) or len(file_path) > MAX_TAIL_PATH:
                continue
            try:
                paths.add(key(core.expand_path(file_path, cwd, home)))
            except ValueError:
                continue
    return paths


@dataclass(slots=True)
class Seed:
    """A restored file's new cache entry, for the caller to put back: the entry, the file's
    mtime at the re-read, and the SHA-256 of its content when that changed (None: the
    entry's content is the one it replaces, or nothing is hashed)."""

    path: str
    state: core.FileState
    mtime_ms: int
    digest: bytes | None
    lines: int = 0  # the lines restored (from the entry's offset): what the agent sees now


@dataclass(slots=True)
class _Restored:
    """One selected file after its re-read (computed in a worker thread). Its attachment, when
    it has one, is `attachment` (built in Python) or `wire` (rendered by the core, serialised:
    `Outcome.attach_wire`), with its `tokens` and the `lines` it restores."""

    path: str
    rank: int
    outcome: pb.Outcome.ValueType
    attachment: Pending | None = None
    cost: int = 0
    detail: str = ""
    seed: core.FileState | None = None
    mtime_ms: int = 0
    digest: bytes | None = None  # SHA-256 of the seed's content, when it differs from before
    wire: core.Framed | None = None
    tokens: int = 0
    lines: int = 0
    rendered: RenderedFile | None = None  # the core's rendering, for the next compaction

    @classmethod
    def of(
        cls, path: str, rank: int, outcome: pb.Outcome.ValueType, att: Pending, **kw: Any
    ) -> _Restored:
        """A file restored with an attachment built in Python."""
        lines = int(att.file.num_lines) if att.file is not None else 0
        return cls(path, rank, outcome, att, tokens=att.tokens, lines=lines, **kw)

    @property
    def attached(self) -> bool:
        return self.attachment is not None or self.wire is not None


@dataclass(frozen=True, slots=True)
class FileStep:
    """The file step of one compaction: the session's files (its roots, cwd and home) under
    `ctx` (its policy, templates, rules, meter, deny globs; `include_content`: fill
    FileAttachment.content, else only the blocks have it; `preview`, `hash_contents`)."""

    session: Session
    ctx: CompactContext
    # The files the core restored at the agent's last compaction (AgentState.rendered).
    memo: Mapping[str, RenderedFile] = field(default_factory=dict)
    # The context's, held here: read per file.
    policy: Policy = field(init=False)
    rules: profiles.Rules = field(init=False)
    templates: Templates = field(init=False)
    deny_globs: tuple[str, ...] = field(init=False)
    # What the core does with each file (`core.restore_files`), and what an attachment, its
    # decision's detail and its cost stand for besides the file's bytes and range (a memo's).
    plan: core.RestorePlan = field(init=False)
    facts: tuple[object, ...] = field(init=False)

    def __post_init__(self) -> None:
        ctx = self.ctx
        p, meter, templates, rules = ctx.policy, ctx.meter, ctx.templates, ctx.rules
        object.__setattr__(self, "policy", p)
        object.__setattr__(self, "rules", rules)
        object.__setattr__(self, "templates", templates)
        object.__setattr__(self, "deny_globs", ctx.deny_globs)
        key = (
            id(p),
            id(templates),
            id(rules),
            meter.exact,
            meter.encoding,
            ctx.include_content,
        )
        kept = _STEPS.get(key)
        if kept is not None and kept[0] is p and kept[1] is templates and kept[2] is rules:
            object.__setattr__(self, "plan", kept[3])
            object.__setattr__(self, "facts", kept[4])
            return
        inputs = (
            render.file_templates(templates),
            p.file_truncation_marker or templates.file_truncation_marker,
            p.malware_reminder,
            p.max_tokens_per_file,
            p.max_file_size_bytes,
            int(p.oversize),
            meter.exact,
            meter.encoding,
            rules.cap_rendered,
            rules.api_units_per_token,
            ctx.include_content,
        )
        plan = _plan(*inputs)
        what = "the lines seen since the last compaction" if p.restore_seen else ""
        facts = (inputs, what or "the range last read", rules.payload_cost)
        object.__setattr__(self, "plan", plan)
        object.__setattr__(self, "facts", facts)
        if len(_STEPS) >= 256:
            _STEPS.clear()  # policies come and go: forget the old ones now and then
        _STEPS[key] = (p, templates, rules, plan, facts)

    def _display(self, path: str) -> str:
        return display_path(path, self.session.cwd, relative=self.rules.payload_cost)

    # --- the files (a worker thread, or inline on the event loop) --------------------------

    def _reference(self, path: str, rank: int, detail: str) -> _Restored:
        display = self._display(path)
        body = render.compact_file_reference(path, self.templates)
        placement = render.SYSTEM if self.rules.system_sections else render.USER
        blocks = render.blocks([body], placement, self.templates)
        att = Pending(
            kind=pb.ATTACHMENT_KIND_COMPACT_FILE_REFERENCE,
            placement=placement,
            blocks=blocks,
            tokens=rough("\n".join(blocks)),
            file_reference=pb.CompactFileReference(path=path, display_path=display),
        )
        cost = attachment_cost(
            {"type": "compact_file_reference", "filename": path, "displayPath": display},
            payload_only=self.rules.payload_cost,
        )
        return _Restored.of(path, rank, pb.OUTCOME_REFERENCED, att, cost=cost, detail=detail)

    def restore_many(
        self,
        ranked: Sequence[tuple[int, str]],
        read_at: int | None = None,
        previous: Mapping[str, bytes] | None = None,
        inline: bool = False,
        spans: Mapping[str, tuple[int, int | None]] | None = None,
        held: Mapping[str, bytes] | None = None,
    ) -> list[_Restored]:
        """Each (rank, path) of `ranked` re-read and restored by the core in one call for all
        of them (`core.restore_files`: read, decoded, capped, numbered, wrapped and serialised
        without the GIL; `restore_files` decides how many threads), or `inline` on the event
        loop (page cache only: `diskaccess.WouldBlock` otherwise). `spans` (path -> (offset,
        limit)): the lines to restore instead of the whole file. With `previous` (path -> the
        content the cache held), a seed whose content differs from it gets its SHA-256 here,
        for the state database (persist/sqlstore.py). `held` (path -> the content the cache held):
        a file read back unchanged keeps that very object as its seed's content, and when the
        last compaction restored it whole from it (`memo`), its attachment again.

        Paths: the core opens each path as given without following any symlink (diskread.rs,
        `open_resolved`): a canonical path under a root as given, not denied, is its own real
        path, inside the real root. Any other path is resolved and checked first
        (`diskaccess.resolve`: roots, deny globs), and one the core finds a symlink on ("changed")
        is resolved and read again."""
        if read_at is None:
            read_at = now_ms()
        held = held or {}
        roots, deny = tuple(self.session.read_roots), self.deny_globs
        scope: diskaccess.ReadScope | None = None  # resolved once, if any file needs it
        done: dict[int, _Restored] = {}
        taken: list[_Taken] = []
        again: list[_Taken] = []
        for rank, path in ranked:
            span = spans.get(path) if spans else None
            binary = _plain_file(path, roots, deny)
            if binary is not None:
                taken.append(self._taken(rank, path, path, binary, span, held.get(path), False))
                continue
            if scope is None:
                scope = diskaccess.ReadScope.of(self.session.read_roots)
            t = self._resolved(rank, path, span, held.get(path), scope, done)
            if t is not None:
                taken.append(t)
        for t, res in self._restore(taken, inline):
            if isinstance(res, core.RestoredFile):
                done[t.rank] = self._restored(t, res, read_at)
            elif res.kind == core.RefusalKind.CHANGED and not t.resolved:
                again.append(t)  # a symlink on the way: resolved, and read again
            else:
                done[t.rank] = self._refused(t, res)
        if again:
            if scope is None:
                scope = diskaccess.ReadScope.of(self.session.read_roots)
            retaken = [
                resolved
                for t in again
                if (resolved := self._resolved(t.rank, t.path, t.span, t.held, scope, done))
                is not None
            ]
            for t, res in self._restore(retaken, inline):
                if isinstance(res, core.RestoredFile):
                    done[t.rank] = self._restored(t, res, read_at)
                else:
                    done[t.rank] = self._refused(t, res)
        out = []
        for rank, path in ranked:
            r = done[rank]
            if previous is not None and r.seed is not None:
                content = r.seed.content
                before = previous.get(path)
                if content is not before and content != before:
                    r.digest = content_digest(content)
            out.append(r)
        return out

    def _restore(
        self, taken: Sequence[_Taken], inline: bool
    ) -> Iterable[tuple[_Taken, core.RestoredFile | core.Refusal]]:
        """The core's answer for each of `taken` (an inline read that would wait for the disk
        is refused WOULD_BLOCK: `_refused` raises `diskaccess.WouldBlock`, and the batch is read
        again on a worker thread)."""
        if not taken:
            return []
        inline_max = diskaccess.INLINE_READ_BYTES if inline else None
        results = core.restore_files([t.spec for t in taken], self.plan, inline_max=inline_max)
        return zip(taken, results, strict=True)

    def _resolved(
        self,
        rank: int,
        path: str,
        span: tuple[int, int | None] | None,
        content: bytes | None,
        scope: diskaccess.ReadScope,
        done: dict[int, _Restored],
    ) -> _Taken | None:
        """`path` resolved and checked for the core (None: refused, its decision in `done`)."""
        try:
            real, ext = diskaccess.resolve(path, scope, self.deny_globs)
        except diskaccess.FileReadError as exc:
            done[rank] = _unreadable(path, rank, exc)
            return None
        binary = ext in diskaccess.BINARY_EXTENSIONS
        return self._taken(rank, path, real, binary, span, content, True)

    def _taken(
        self,
        rank: int,
        path: str,
        real: str,
        binary: bool,
        span: tuple[int, int | None] | None,
        content: bytes | None,
        resolved: bool,
    ) -> _Taken:
        """The core's spec of a file, and what its result is judged with."""
        first, limit = span if span is not None else (1, None)
        display = _display_of(path, self.session.cwd, self.rules.payload_cost)
        # What the attachment is made of besides the bytes (a head's limit only bounds the
        # lines, which the core checks on every read): the same, and the cache still holding
        # the very content the last compaction restored it from, and the core only reads the
        # file (its bytes unchanged: that attachment again, not rendered).
        key: tuple[object, ...] = (first, limit if first > 1 else None, display, self.facts)
        prior = self.memo.get(path)
        if prior is not None and (prior.content is not content or prior.key != key):
            prior = None
        spec = core.RestoreSpec(
            path=path,
            real=real,
            display=display,
            binary_name=binary,
            first=first,
            limit=limit,
            ranged=span is not None,
            held=content,
            prior=prior.file if prior is not None else None,
        )
        return _Taken(rank, path, real, span, content, resolved, display, key, prior, spec)

    def _refused(self, t: _Taken, res: core.Refusal) -> _Restored:
        """A file the core could not read: its outcome and why."""
        ext = os.path.splitext(t.real)[1].lower()
        max_bytes = self.policy.max_file_size_bytes
        exc = diskaccess.refusal_error(res.kind, t.path, ext, max_bytes, res.errno, res.size)
        if isinstance(exc, diskaccess.WouldBlock):
            raise exc
        return _unreadable(t.path, t.rank, exc)

    def _restored(self, t: _Taken, res: core.RestoredFile, read_at: int) -> _Restored:
        """What the core made of a file, as the step decides on it."""
        if not res.attached:
            detail = self._detail(res)
            if res.outcome == core.FileOutcome.REFERENCED:
                return self._reference(t.path, t.rank, detail)
            return _Restored(t.path, t.rank, pb.OUTCOME_DROPPED_OVER_CAP, detail=detail)
        content, framed = res.content, res.framed
        assert content is not None  # attached
        assert framed is not None
        prior = t.prior
        if prior is not None and res.reused and prior.file.ranged == res.ranged:
            made = prior  # read back unchanged: as the memo has it
        else:
            units = _file_message_units(
                t.path,
                t.display,
                res.num_lines,
                res.total_lines,
                self.rules.payload_cost,
                res.start_line,
            )
            cost = int(core.estimate_from_utf16_len(units + res.json_units - 2))
            made = RenderedFile(content, t.key, res, res.content_tokens, self._detail(res), cost)
        mtime_ms = res.mtime_ns // 1_000_000
        stamp = mtime_ms if self.rules.mtime_timestamps else read_at
        seed = core.FileState(content, stamp, res.start_line, res.seed_limit, False)
        return _Restored(
            t.path,
            t.rank,
            pb.OUTCOME_TRUNCATED if res.outcome == _TRUNCATED else pb.OUTCOME_RESTORED,
            cost=made.cost,
            detail=made.detail,
            seed=seed,
            mtime_ms=mtime_ms,
            wire=framed,
            tokens=res.tokens,
            lines=res.num_lines,
            rendered=made,
        )

    def _detail(self, res: core.RestoredFile) -> str:
        """The decision's detail for what the core made of a file: why it is a range, cut,
        noted or left out (docs/profiles.md)."""
        p = self.policy
        first, total = res.start_line, res.total_lines
        if res.ranged:
            why = f"lines {first}-{first + res.range_lines - 1} of {total}: {self.facts[1]}"
        elif res.over_size:
            why = f"over the {p.max_file_size_bytes}-byte size cap"
        else:
            why = ""
        cap = p.max_tokens_per_file
        if res.ranged or self.rules.cap_rendered:  # capped as attached
            reasons = [why] if why else []
            if res.over_cap:
                reasons.append(f"{res.measured} tokens as attached, over the {cap}-token cap")
            over = "; ".join(reasons)
        else:  # capped as Claude Code measures the text
            over = f"{res.measured} tokens, over the {cap}-token cap" if res.over_cap else why
            why = ""
        if res.cut:
            return f"{over}; kept lines {first}-{first + res.num_lines - 1} of {total}"
        if res.outcome == core.FileOutcome.RESTORED:
            return why
        if res.no_room:
            return f"{over}; the cap cannot hold the marker"
        return over


_TRUNCATED = core.FileOutcome.TRUNCATED


_StepKept = tuple[Policy, Templates, profiles.Rules, core.RestorePlan, tuple[object, ...]]
# The plans and facts `FileStep` made, by the identities of what they are made of (the policy,
# templates and rules of a session are objects kept and found again, never changed in place):
# a Compact finds its step's again without hashing them.
_STEPS: dict[tuple[object, ...], _StepKept] = {}


@functools.lru_cache(maxsize=64)
def _plan(
    templates: core.FileTemplates,
    marker: str,
    malware: bool,
    max_tokens: int,
    max_bytes: int,
    oversize: int,
    exact: bool,
    encoding: str,
    cap_rendered: bool,
    api_units: int | None,
    include_content: bool,
) -> core.RestorePlan:
    """The core's plan of a file step (the same for every Compact under the same policy)."""
    return core.RestorePlan(
        templates=templates,
        marker=marker,
        malware=malware,
        max_tokens=max_tokens,
        max_bytes=max_bytes,
        sniff_bytes=diskaccess.SNIFF_BYTES,
        oversize=oversize,
        exact=exact,
        encoding=encoding,
        cap_rendered=cap_rendered,
        api_units=api_units,
        include_content=include_content,
    )


class _Taken(NamedTuple):
    """A file given to the core: its rank, path and the path read, its span and the content
    the cache held, whether it was resolved (not read as given), its display path, what its
    attachment is made of besides its bytes, its memo when that still stands for it, and the
    core's spec."""

    rank: int
    path: str
    real: str
    span: tuple[int, int | None] | None
    held: bytes | None
    resolved: bool
    display: str
    key: tuple[object, ...]
    prior: RenderedFile | None
    spec: core.RestoreSpec


@functools.lru_cache(maxsize=4096)
def _display_of(path: str, cwd: str, relative: bool) -> str:
    return display_path(path, cwd, relative=relative)


@functools.lru_cache(maxsize=4096)
def _plain_file(path: str, roots: tuple[str, ...], deny: tuple[str, ...]) -> bool | None:
    """Whether the core may open `path` as it is (`FileStep._rendered`): its binary-name flag
    when it is absolute and normalised (no `.`, `..` or empty components), under one of `roots`
    as given and matching none of the deny globs; None otherwise."""
    if not (os.path.isabs(path) and os.path.normpath(path) == path):
        return None
    if not within_roots(path, roots) or diskaccess.is_denied((path,), deny) is not None:
        return None
    return diskaccess.binary_name(path)


# Saved tool results and uploads (Claude Code 2.1.333 on; `Rules.saved_result_notes`,
# `Rules.uploads_excluded`; docs/claude-code.md §3).
SAVED_RESULTS_FOLDER = "tool-results"
# Saved results Claude Code never names (its own artifacts and project-file copies).
_UNNAMED_SAVED = re.compile(r"(?:artifact|project-file)-", re.IGNORECASE)
# Claude Code's upload folders (compared without regard to case): under its configuration folder
# (`~/.claude/uploads`), and the fixed ones of its hosted sessions.
UPLOAD_ROOTS = (
    "/mnt/user-data/attachments",
    "/mnt/user-data/uploads",
    "/mnt/project",
    "/mnt/user-data/project-docs",
)
# Where its browsers save downloads: a file whose folder is one of these or under one.
DOWNLOAD_ROOTS = ("/mnt/user-data/browser-downloads", "/mnt/user-data/desktop-browser-downloads")
# A folder of files a connector downloaded: `connector-downloads` in any case, trailing dots and
# spaces or a `:stream` allowed, these invisible characters ignored.
_CONNECTOR_FOLDER = re.compile(r"connector-downloads[. ]*(?::.*)?", re.DOTALL)
_IGNORED_CHARS = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")


def _folded(path: str) -> str:
    """`path` as Claude Code compares it without regard to case."""
    return path.lower().replace("\u0131", "i").replace("\u017f", "s")


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def saved_result(path: str) -> bool:
    """Whether `path` is a tool result Claude Code saved to disk: a file of a `tool-results`
    folder (any case)."""
    return os.path.basename(os.path.dirname(path)).lower() == SAVED_RESULTS_FOLDER


def projects_folder(home: str) -> str:
    """Claude Code's projects folder, where it saves its sessions' tool results."""
    return os.path.join(home, ".claude", "projects")


def named_saved_result(path: str, home: str) -> bool:
    """Whether Claude Code names the saved result `path` after a compaction: under its projects
    folder (case counts), not an artifact or a project file's copy."""
    name = os.path.basename(path)
    return _under(path, projects_folder(home)) and not _UNNAMED_SAVED.match(name)


def upload_or_download(path: str, home: str) -> str | None:
    """Why Claude Code never restores `path` (an upload, a download, an artifact's file), or
    None."""
    folded = _folded(path)
    if "artifact-files" in folded.split("/"):
        return "in an artifact-files folder"
    folders = path.split("/")[:-1]
    if any(_CONNECTOR_FOLDER.fullmatch(_IGNORED_CHARS.sub("", _folded(f))) for f in folders):
        return "in a connector-downloads folder"
    parent = os.path.dirname(path)
    if any(_under(parent, root) for root in DOWNLOAD_ROOTS):
        return "in a browser's downloads folder"
    roots = (os.path.join(home, ".claude", "uploads"), *UPLOAD_ROOTS)
    if any(_under(folded, _folded(root)) for root in roots):
        return "in an upload folder"
    return None


def candidates_of(
    agent: AgentState, snapshot: Sequence[tuple[str, core.FileState]], carry_refs: bool
) -> list[tuple[str, int, core.FileState | None]]:
    """(path, timestamp, entry) of every candidate, MRU first: the snapshot, then (`carry_refs`)
    the files last restored as too-large notes that have no entry now (entry None)."""
    out: list[tuple[str, int, core.FileState | None]] = [
        (path, st.timestamp, st) for path, st in snapshot
    ]
    if carry_refs:
        held = {path for path, _ in snapshot}
        out.extend((p, ts, None) for p, ts in agent.carried_refs.items() if p not in held)
    return out


async def restore_files(
    step: FileStep,
    agent: AgentState,
    snapshot: Sequence[tuple[str, core.FileState]],
    *,
    excluded: dict[str, pb.Outcome.ValueType],
    out: Outcome,
    harness: Mapping[str, tuple[int, str]] | None = None,
    harness_order: Sequence[str] = (),
) -> tuple[dict[str, int], list[Seed], dict[str, RenderedFile]]:
    """Steps 1-6 for `snapshot` (MRU first), under `step.ctx` (a preview re-seeds nothing;
    `hash_contents`: the changed contents hashed). `excluded` maps cache keys to their exclusion;
    `harness` the files the harness restores itself in complement mode (path -> the tokens of
    its attachment, the decision's detail: `restore.harness`), which are left to it;
    `harness_order` the files its own rule restores, in its order (ranked first under
    FILE_RANKING_CLAUDE_CODE_FIRST).
    Returns the files restored as too-large notes (path -> the timestamp they ranked by), for
    profiles that keep them as candidates, the entries to re-seed the cache with, in the order
    to set them (rank 1 last: the most recently used), none for a preview, and the attachments
    the core rendered of restored files, for the next compaction (`AgentState.rendered`)."""
    policy = step.policy
    rules = step.rules
    preview = step.ctx.preview
    carry_refs = rules.references_stay_candidates
    home = step.session.home
    candidates: list[tuple[str, int, core.FileState | None]] = []
    # Saved results and uploads stay candidates at the next compaction (Claude Code keeps a
    # path-only entry of each; `Rules.saved_result_notes`).
    kept_refs: dict[str, int] = {}
    for path, ts, state in candidates_of(agent, snapshot, carry_refs):
        reason = excluded.get(path)
        detail = _EXCLUSION_DETAIL.get(reason) if reason is not None else None
        if rules.saved_result_notes and _kept_by_name(path, home):
            kept_refs[path] = ts
        if reason is None and rules.uploads_excluded:
            why = upload_or_download(path, home)
            if why is not None:
                reason = pb.OUTCOME_EXCLUDED_ARTIFACT
                detail = f"{why}: Claude Code never restores it"
        theirs = harness.get(path) if harness else None
        if theirs is not None and reason is None:
            out.decide(
                "files",
                pb.SUBJECT_FILE,
                path,
                pb.OUTCOME_RESTORED_BY_HARNESS,
                tokens=theirs[0],
                content_tokens=_held(state),
                detail=theirs[1],
            )
        elif reason is not None:
            out.decide(
                "files",
                pb.SUBJECT_FILE,
                path,
                reason,
                content_tokens=_held(state),
                detail=detail or "",
            )
        else:
            candidates.append((path, ts, state))

    scores: dict[str, ranker.Scored] = {}  # FILE_RANKING_SCORED: why each file ranks where

    def explained(path: str, detail: str = "") -> str:
        scored = scores.get(path)
        if scored is None:
            return detail
        return f"{detail}; {scored.explain()}" if detail else scored.explain()

    if policy.ranking == pb.FILE_RANKING_EDITS_FIRST:
        seen = agent.seen

        def edited_first(item: tuple[str, int, core.FileState | None]) -> tuple[bool, int]:
            got = seen.get(item[0])
            return (not (got is not None and got.edited), -item[1])

        ranked = sorted(candidates, key=edited_first)
    elif policy.ranking == pb.FILE_RANKING_CLAUDE_CODE_FIRST:
        at = {path: i for i, path in enumerate(harness_order)}
        last = len(at)
        ranked = sorted(candidates, key=lambda item: (at.get(item[0], last), -item[1]))
    elif policy.ranking == pb.FILE_RANKING_SCORED:
        ranked, scores = ranker.rank(candidates, agent.seen, harness_order, agent.agent_id)
    elif policy.ranking == pb.FILE_RANKING_MTIME and not step.rules.mtime_timestamps:
        mtimes = _mtimes(path for path, _, _ in candidates)
        ranked = sorted(candidates, key=lambda item: -mtimes[item[0]])  # stable: ties keep MRU
    else:
        ranked = sorted(candidates, key=lambda item: -item[1])  # stable: ties keep MRU
    files, notes = ranked, []
    if rules.saved_result_notes:  # saved results: never restored whole, some named after the rest
        files = [c for c in ranked if not saved_result(c[0])]
        notes = _saved_notes(ranked, home, policy.max_files, out)
    selected = files[: policy.max_files]
    dropped = files[policy.max_files :]
    for rank, (path, _, state) in enumerate(dropped, start=len(selected) + len(notes) + 1):
        out.decide(
            "files",
            pb.SUBJECT_FILE,
            path,
            pb.OUTCOME_DROPPED_BY_RANK,
            content_tokens=_held(state),
            rank=rank,
            detail=explained(path, f"beyond max_files={policy.max_files}"),
        )
    # Per selected file: its timestamp, the estimate of what the cache held, its rank; and what
    # the cache held: a file read back unchanged keeps that content object, and only contents
    # that changed are hashed (nothing is, when nothing is kept).
    stamps: dict[str, int] = {}
    held_tokens: dict[str, int] = {}
    held: dict[str, bytes] = {}
    order: list[tuple[int, str]] = []
    before = step.memo
    held_bytes = 0
    for rank, (path, ts, state) in enumerate(selected, start=1):
        stamps[path] = ts
        order.append((rank, path))
        if state is None:
            held_tokens[path] = 0
            continue
        content = held[path] = state.content
        held_bytes += len(content)
        held_tokens[path] = _held(state, before.get(path))

    for path, ts, state in notes:
        stamps[path] = ts
        held_tokens[path] = _held(state, before.get(path))

    # One read time for the batch (default profile): taken before the re-reads, so a change
    # made while they run is later than it.
    read_at = now_ms()
    previous = held if step.ctx.hash_contents and not preview else None
    spans = _spans(step, agent, selected)
    if held_bytes >= PARALLEL_READ_BYTES:
        workers = min(len(order), PARALLEL_READ_WORKERS)
        parts = await asyncio.gather(
            *(
                asyncio.to_thread(
                    step.restore_many, order[i::workers], read_at, previous, False, spans, held
                )
                for i in range(workers)
            )
        )
    else:
        parts = [
            await diskaccess.off_loop(
                lambda inline: step.restore_many(
                    order, read_at, previous, inline=inline, spans=spans, held=held
                )
            )
        ]
    # One part is in rank order already (`order`); the workers' parts are merged.
    results = parts[0] if len(parts) == 1 else sorted(chain(*parts), key=lambda r: r.rank)
    # The saved results named, after the files and within the same budget (nothing to read).
    detail = "a saved tool result: Claude Code names it and never restores it whole"
    for rank, (path, _, _) in enumerate(notes, start=len(selected) + 1):
        results.append(step._reference(path, rank, detail))

    used = 0
    matched = policy.match_budget == pb.HARNESS_RULE_CLAUDE_CODE and not policy.complement_on
    by_tokens = matched or policy.complement_on
    attached: set[str] = set()
    seeds: list[_Restored] = []
    referenced: dict[str, int] = {}
    for r in results:
        held_by = held_tokens[r.path]
        if not r.attached:
            out.decide(
                "files",
                pb.SUBJECT_FILE,
                r.path,
                r.outcome,
                rank=r.rank,
                detail=explained(r.path, r.detail),
                content_tokens=held_by,
            )
            continue
        tokens = r.tokens
        # Under match_budget the budget is a harness's attachment tokens, in complement mode what
        # the caller can send: each file is charged its attachment's tokens (the text as sent).
        cost = tokens if by_tokens else r.cost
        if used + cost > policy.file_token_budget:
            out.decide(
                "files",
                pb.SUBJECT_FILE,
                r.path,
                pb.OUTCOME_DROPPED_BY_BUDGET,
                tokens=tokens,
                rank=r.rank,
                content_tokens=held_by,
                detail=explained(
                    r.path,
                    f"costs {cost} of the {policy.file_token_budget}-token file budget"
                    + (_MATCHED if matched else _BY_TOKENS if by_tokens else "")
                    + f", {used} already used",
                ),
            )
            continue
        used += cost
        if r.wire is not None:
            out.attach_wire("files", r.wire, r.tokens)
        elif r.attachment is not None:
            out.attach_pending("files", r.attachment)
        attached.add(r.path)
        out.decide(
            "files",
            pb.SUBJECT_FILE,
            r.path,
            r.outcome,
            tokens=tokens,
            rank=r.rank,
            detail=explained(r.path, r.detail),
            content_tokens=held_by,
        )
        if r.outcome == pb.OUTCOME_REFERENCED:
            referenced[r.path] = stamps[r.path]
        if r.seed is not None and not preview:
            seeds.append(r)
    reseed = [
        Seed(r.path, r.seed, r.mtime_ms, r.digest, r.lines)
        for r in reversed(seeds)  # rank 1 last: the most recently used
        if r.seed is not None
    ]
    memo: dict[str, RenderedFile] = {}
    kept = 0
    for r in seeds:  # the restored files the core rendered, in rank order, within the bound
        made, framed = r.rendered, r.wire
        if made is not None and framed is not None and kept + len(framed) <= MAX_RENDERED_BYTES:
            memo[r.path] = made
            kept += len(framed)
    if policy.left_out_index:
        left = [path for path, _, _ in ranked if path not in attached]
        if left:
            out.attach_pending("files", _left_out(step, agent, left))
    if kept_refs:
        referenced = {**_newest(kept_refs, rules.cache_max_entries), **referenced}
    return (referenced if carry_refs else {}), reseed, memo


def _kept_by_name(path: str, home: str) -> bool:
    """Whether Claude Code keeps a path-only entry of `path` over a compaction: a saved result
    or an upload (Claude Code 2.1.333 on), but for notebooks and binary files."""
    if path.lower().endswith(".ipynb") or diskaccess.binary_name(path):
        return False
    return saved_result(path) or upload_or_download(path, home) is not None


def _newest(stamps: Mapping[str, int], limit: int) -> dict[str, int]:
    """The `limit` newest of `stamps` (path -> timestamp)."""
    if len(stamps) <= limit:
        return dict(stamps)
    return dict(sorted(stamps.items(), key=lambda kv: -kv[1])[:limit])


def _saved_notes(
    ranked: Sequence[tuple[str, int, core.FileState | None]],
    home: str,
    max_files: int,
    out: Outcome,
) -> list[tuple[str, int, core.FileState | None]]:
    """The saved results of `ranked` (newest first) Claude Code names in a too-large note after
    the files: those of its projects folder but its artifacts and project-file copies, at most
    `max_files`; the others' decisions."""
    named: list[tuple[str, int, core.FileState | None]] = []
    for path, ts, state in ranked:
        if not saved_result(path):
            continue
        if named_saved_result(path, home):
            named.append((path, ts, state))
            continue
        where = (
            "an artifact or a project file's copy"
            if _under(path, projects_folder(home))
            else "outside Claude Code's projects folder"
        )
        out.decide(
            "files",
            pb.SUBJECT_FILE,
            path,
            pb.OUTCOME_EXCLUDED_ARTIFACT,
            content_tokens=_held(state),
            detail=f"a saved tool result {where}: Claude Code neither restores nor names it",
        )
    for path, _, state in named[max_files:]:
        out.decide(
            "files",
            pb.SUBJECT_FILE,
            path,
            pb.OUTCOME_DROPPED_BY_RANK,
            content_tokens=_held(state),
            detail=f"a saved tool result beyond the {max_files} named after the files",
        )
    return named[:max_files]


# How a budget drop's detail names a budget other than file_token_budget's own measure.
_MATCHED = " (what Claude Code's rule spends here; each file charged its attachment's tokens)"
_BY_TOKENS = " (each file charged its attachment's tokens)"
_NO_MTIME = -(2**62)  # a candidate that cannot be stat'ed ranks last under FILE_RANKING_MTIME


def _mtimes(paths: Iterable[str]) -> dict[str, int]:
    """Each path's modification time now (floor ms; `_NO_MTIME` when it cannot be stat'ed): the
    order of FILE_RANKING_MTIME under profiles that stamp entries with the read time. Metadata
    only, on the event loop: a stat is a few µs and the candidates are the agent's cache."""
    out: dict[str, int] = {}
    for path in paths:
        try:
            out[path] = os.stat(path).st_mtime_ns // 1_000_000
        except (OSError, ValueError):
            out[path] = _NO_MTIME
    return out


def _spans(
    step: FileStep,
    agent: AgentState,
    selected: Sequence[tuple[str, int, core.FileState | None]],
) -> dict[str, tuple[int, int | None]] | None:
    """The (offset, limit) each selected file is restored as, when not from line 1 to its end:
    the lines seen since the last compaction (`restore_seen`), else the range last read (profiles
    with `restore_ranges`)."""
    if step.policy.restore_seen:
        out: dict[str, tuple[int, int | None]] = {}
        for path, _, state in selected:
            seen = agent.seen.get(path)
            if seen is not None and seen.first > 0 and (state is None or not state.partial_view):
                out[path] = (seen.first, seen.last - seen.first + 1)
        return out
    if not step.rules.restore_ranges:
        return None
    return {
        path: (state.offset, state.limit)
        for path, _, state in selected
        if state is not None
        and state.offset is not None
        and state.offset > 1
        and not state.partial_view
    }


# The left-out index names at most this many files (the most recently used first).
MAX_LEFT_OUT = 20


def _left_out(step: FileStep, agent: AgentState, paths: Sequence[str]) -> Pending:
    """The index of candidates not restored (`RestorePolicy.left_out_index`), in rank order:
    path, lines seen, edited; one user-placed block."""
    files: list[pb.LeftOutFile] = []
    for path in paths[:MAX_LEFT_OUT]:
        seen = agent.seen.get(path)
        first, last = (seen.first, seen.last) if seen is not None else (0, 0)
        files.append(
            pb.LeftOutFile(
                path=path,
                display_path=step._display(path),
                first_line=first,
                last_line=last,
                edited=seen is not None and seen.edited,
            )
        )
    entries = [render.LeftOut(f.path, f.first_line, f.last_line, f.edited) for f in files]
    body = render.left_out_files(entries, len(paths) - len(files), step.templates)
    blocks = render.blocks([body], render.USER, step.templates)
    return Pending(
        kind=pb.ATTACHMENT_KIND_LEFT_OUT_FILES,
        placement=render.USER,
        blocks=blocks,
        tokens=rough("\n".join(blocks)),
        left_out_files=pb.LeftOutFiles(files=files),
    )


def _unreadable(path: str, rank: int, exc: diskaccess.FileReadError) -> _Restored:
    """A selected file that could not be re-read: its outcome and why."""
    return _Restored(path, rank, read_outcome(exc.kind), detail=f"{exc.kind}: {exc.message}")


def _held(state: core.FileState | None, rendered: RenderedFile | None = None) -> int:
    """The rough estimate of the content the cache held for a candidate (0: none, a file known
    by name only); `rendered`: the last compaction's attachment of the file, whose estimate
    stands while the cache holds that very content."""
    if state is None:
        return 0
    content = state.content
    if rendered is not None and rendered.content is content:
        return rendered.held
    return int(core.estimate(content))


_EXCLUSION_DETAIL: dict[pb.Outcome.ValueType, str] = {
    pb.OUTCOME_EXCLUDED_PLAN_FILE: "the plan file (restored by the plan attachment)",
    pb.OUTCOME_EXCLUDED_MEMORY_FILE: "a memory file (re-read by the harness)",
    pb.OUTCOME_EXCLUDED_VISIBLE_IN_TAIL: "its Read is still visible in the preserved messages",
    pb.OUTCOME_EXCLUDED_ARTIFACT: "a saved tool-result artifact",
}
