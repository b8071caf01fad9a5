"""What the agent knew before each compaction and what it needed after it (docs/eval.md §1).

Main thread only. For each compaction boundary of a transcript:

- **seen**: per file the main thread read or wrote since the previous boundary, the line numbers
  it saw — a Read's range, a whole-file Read's every line, a Write's every line, an Edit's new
  text located in the file after it. (What the previous restoration carried is added by the
  scorer: it depends on the policy.)
- **touches**: the first `window` tool calls after the boundary (every tool counts; the records
  the compaction kept are not after it), and of those the file ones: a successful Read (its
  range; a whole-file Read is a whole-file touch), an Edit or MultiEdit (the lines its
  `old_string` covers in the file before it; not found: a whole-file touch), a Write (a
  whole-file touch). A failed Edit (refused because the file was not read) is a touch too; a
  failed Read is not. A Read's touch carries what its result cost: the rough token estimate
  (`core.estimate`) of the tool_result's text as the transcript records it, the numbered lines
  Claude Code returned (or its "unchanged" stub); an image block counts nothing.

Line numbers are those of the file at the time (edits between are not tracked to shift them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from postcompact import core
from postcompact.transcript.disk import Disk
from postcompact.transcript.parse import (
    Boundary,
    Edit,
    Event,
    FileRead,
    FileUnchanged,
    FileWritten,
    Record,
    Transcript,
)
from postcompact.units import DAY_MS

__all__ = ["Point", "Touch", "points"]

EDIT_TOOLS = ("Edit", "MultiEdit")
WRITE_TOOLS = ("Write", "NotebookEdit")

TouchKind = Literal["read", "edit", "write"]


@dataclass(frozen=True, slots=True)
class Touch:
    """A file tool call after a boundary: `call` is its 1-based place among all tool calls
    after it; `lines` the lines it used (None: the whole file); `tokens` the rough tokens of its
    result's text (a Read: what re-reading cost)."""

    path: str
    kind: TouchKind
    lines: frozenset[int] | None
    call: int
    ok: bool
    tokens: int = 0


@dataclass(slots=True)
class Point:
    """One boundary of the main thread, and what surrounds it."""

    boundary: Boundary
    number: int  # 1-based among the transcript's main-thread boundaries
    seen: dict[str, set[int]]  # since the previous boundary: path -> lines seen
    total_lines: dict[str, int]  # path -> the file's line count at the boundary, when known
    touches: list[Touch] = field(default_factory=list)
    calls: int = 0  # tool calls after the boundary, up to the window (fewer: the session ended)

    def needed(self, window: int, candidates: Mapping[str, set[int]]) -> dict[str, set[int]]:
        """Per candidate touched in the first `window` calls: the lines it needed (a whole-file
        touch needs the lines seen before the boundary)."""
        out: dict[str, set[int]] = {}
        for t in self.touches:
            if t.call > window or t.path not in candidates:
                continue
            lines = out.setdefault(t.path, set())
            lines |= set(candidates[t.path]) if t.lines is None else t.lines
        return {p: ls for p, ls in out.items() if ls}

    def first_touches(self, window: int) -> dict[str, Touch]:
        """Per file, its first touch within the window."""
        out: dict[str, Touch] = {}
        for t in self.touches:
            if t.call <= window:
                out.setdefault(t.path, t)
        return out


# The lines one span counts, at most: a record's claimed count (`numLines`, `totalLines`, a
# `limit`) may be 2**31 in a 2 KB transcript (issue 37); no file Claude Code reads has more.
MAX_SPAN_LINES = 100_000


def _span(first: int, count: int) -> set[int]:
    return set(range(first, first + min(max(count, 0), MAX_SPAN_LINES)))


def _locate(text: str | None, needle: str) -> set[int] | None:
    """The lines of `text` that `needle` spans at its first occurrence (None: not found)."""
    if text is None or not needle:
        return None
    at = text.find(needle)
    if at < 0:
        return None
    return _span(text.count("\n", 0, at) + 1, needle.count("\n") + 1)


def _edit_lines(before: str | None, edits: Iterable[Edit]) -> frozenset[int] | None:
    lines: set[int] = set()
    for e in edits:
        found = _locate(before, e.old)
        if found is None:
            return None
        lines |= found
    return frozenset(lines) if lines else None


def _seen_of(e: Event, disk: Disk) -> tuple[str, set[int]] | None:
    """The lines a main-thread event showed the agent."""
    if isinstance(e, FileRead):
        return e.path, _span(e.start_line, e.num_lines)
    if isinstance(e, FileWritten):
        if e.tool in WRITE_TOOLS and e.content is not None:
            return e.path, _span(1, e.content.count("\n") + 1)
        lines: set[int] = set()
        for x in e.edits:
            found = _locate(e.content, x.new)
            if found is not None:
                lines |= found
        if not lines:
            f = disk.files.get(e.path)
            total = f.total_lines if f is not None else None
            lines = _span(1, total or 0) if e.tool in WRITE_TOOLS else set()
        return e.path, lines
    return None


def _tool_input(block: Mapping[str, Any]) -> Mapping[str, Any]:
    inp = block.get("input")
    return inp if isinstance(inp, dict) else {}


def _content(r: Record) -> list[Any]:
    msg = r.data.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    return content if isinstance(content, list) else []


def _result_tokens(content: Any) -> int:
    """The rough tokens of a tool_result's text (a string, or its text blocks)."""
    if isinstance(content, str):
        return core.estimate(content)
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict)]
        return core.estimate("".join(x for x in texts if isinstance(x, str)))
    return 0


def _window_calls(
    t: Transcript, b: Boundary, window: int
) -> tuple[list[tuple[int, str, Mapping[str, Any], str]], dict[str, tuple[int, bool, int]]]:
    """The first `window` main-thread tool calls after `b` (call number, tool, input, id), and
    for their ids the line of their result, whether it was an error and its rough tokens."""
    kept = {r.uuid for r in b.preserved}
    calls: list[tuple[int, str, Mapping[str, Any], str]] = []
    results: dict[str, tuple[int, bool, int]] = {}
    ids: set[str] = set()
    for r in t.records:
        if r.line <= b.line or r.agent or (r.uuid and r.uuid in kept):
            continue
        if r.type == "system" and r.data.get("subtype") == "compact_boundary":
            break
        if r.type == "assistant" and len(calls) < window:
            for block in _content(r):
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    uid, name = block.get("id"), block.get("name")
                    if isinstance(uid, str) and isinstance(name, str) and len(calls) < window:
                        calls.append((len(calls) + 1, name, _tool_input(block), uid))
                        ids.add(uid)
        elif r.type == "user":
            for block in _content(r):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    uid = block.get("tool_use_id")
                    if isinstance(uid, str) and uid in ids and uid not in results:
                        error = block.get("is_error") is True
                        results[uid] = (r.line, error, _result_tokens(block.get("content")))
        if len(calls) >= window and all(i in results for i in ids):
            break
    return calls, results


def _touches(
    t: Transcript,
    b: Boundary,
    window: int,
    disk: Disk,
    by_line: Mapping[tuple[int, str], Event],
) -> tuple[list[Touch], int]:
    calls, results = _window_calls(t, b, window)
    out: list[Touch] = []
    for call, name, inp, uid in calls:
        path = inp.get("file_path") or inp.get("notebook_path")
        if not isinstance(path, str) or not path:
            continue
        line, error, tokens = results.get(uid, (0, True, 0))
        event = by_line.get((line, path))
        f = disk.files.get(path)
        known = f.text if f is not None else None
        if name == "Read":
            if isinstance(event, FileRead):
                whole = event.start_line == 1 and event.num_lines >= event.total_lines
                lines = None if whole else frozenset(_span(event.start_line, event.num_lines))
                out.append(Touch(path, "read", lines, call, True, tokens))
            elif isinstance(event, FileUnchanged):
                out.append(Touch(path, "read", _unchanged_lines(event, f), call, True, tokens))
        elif name in EDIT_TOOLS:
            if isinstance(event, FileWritten):
                before = event.original if event.original is not None else known
                lines = _edit_lines(before, event.edits)
            else:
                raw = inp.get("edits") if name == "MultiEdit" else [inp]
                edits = [
                    Edit(str(x.get("old_string") or ""), str(x.get("new_string") or ""), False)
                    for x in (raw if isinstance(raw, list) else [])
                    if isinstance(x, dict)
                ]
                lines = _edit_lines(known, edits)
            out.append(Touch(path, "edit", lines, call, not error and event is not None))
        elif name in WRITE_TOOLS:
            out.append(Touch(path, "write", None, call, not error and event is not None))
    return out, len(calls)


def _unchanged_lines(e: FileUnchanged, f: Any) -> frozenset[int] | None:
    if e.offset in (None, 1) and e.limit is None:
        return None
    first = e.offset or 1
    total = f.total_lines if f is not None and f.total_lines is not None else first
    count = e.limit if e.limit is not None else max(1, total - first + 1)
    return frozenset(_span(first, count))


def points(t: Transcript, window: int) -> list[Point]:
    """Every main-thread boundary of `t` with what was seen before it and the file touches in
    the first `window` tool calls after it."""
    first = min((r.time_ms for r in t.records if r.time_ms), default=0)
    disk = Disk(unknown_mtime_ms=max(0, first - DAY_MS))
    by_line: dict[tuple[int, str], Event] = {}
    for e in t.events:
        path = getattr(e, "path", None)
        if not e.agent and isinstance(path, str) and not isinstance(e, Boundary):
            by_line.setdefault((e.line, path), e)
    out: list[Point] = []
    seen: dict[str, set[int]] = {}
    for e in t.events:
        if isinstance(e, Boundary):
            if e.agent:
                continue
            totals = {
                p: f.total_lines
                for p in seen
                if (f := disk.files.get(p)) is not None and f.total_lines is not None
            }
            point = Point(e, len(out) + 1, seen, totals)
            point.touches, point.calls = _touches(t, e, window, disk, by_line)
            out.append(point)
            seen = {}
            continue
        if not e.agent:
            got = _seen_of(e, disk)
            if got is not None:
                seen.setdefault(got[0], set()).update(got[1])
        disk.event(e)
    return out
