"""What an agent saw of each file since its last compaction: the span of lines its reads showed
and its writes changed, and whether it edited the file (`AgentState.seen`; docs/eval.md §2).

One span per file (its first to its last line seen), not a set of ranges: two integers a file
is all the restoration needs to restore what was seen (`RestorePolicy.restore_seen`), to rank
edited files (`FileRanking.EDITS_FIRST`) and to name left-out files (`left_out_index`).

A read widens the span by its lines (`saw`). A write (`after_write`: RecordWrite, and a
transcript's Edit or Write on import and replay) carries the span over to the new content and
widens it by the lines the write changed:

- a file the agent held nothing of was written whole: every line of the new content;
- a file whose entry holds its whole content (read from line 1 without a limit, not a partial
  view): the old span mapped through the core's line diff of the held and the new content
  (`core.line_diff`: lines above the change keep their numbers, lines below it shift by the
  change in length, a span overlapping the change covers it), widened by the changed lines —
  the request's when it names them (`RecordWriteRequest.changed_lines`), else the diff's;
- an entry that holds only a range of the file (offset or limit), a partial view, or content
  not verified since a restart: the held text is not the file's, so there is nothing to diff;
  the span keeps its numbers (a change above it that adds or removes lines leaves it off by
  that many) and is widened by the request's changed lines when it names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from postcompact import core

__all__ = [
    "MAX_CHANGED_RANGES",
    "Seen",
    "after_write",
    "bad_changed_lines",
    "line_count",
    "saw",
]

# The most ranges a write may name as changed (an Edit's hunks, an apply_patch's): a bound on
# the request, far above what an edit makes.
MAX_CHANGED_RANGES = 10_000


class Seen(NamedTuple):
    """Lines `first`..`last` seen (a tuple: made for every restored file of every Compact)."""

    first: int  # 1-based; 0: lines not known (a write whose text was not seen)
    last: int  # inclusive
    edited: bool = False

    def widened(self, first: int, last: int, edited: bool) -> Seen:
        if self.first == 0 or first == 0:
            lo, hi = (first, last) if self.first == 0 else (self.first, self.last)
        else:
            lo, hi = min(self.first, first), max(self.last, last)
        return Seen(lo, hi, self.edited or edited)


def line_count(content: bytes) -> int:
    """Lines of `content` as a Read counts them (`totalLines`: the empty line after a final
    "\\n" counts, as in Claude Code's `content.split("\\n")`)."""
    return content.count(b"\n") + 1 if content else 0


def saw(seen: dict[str, Seen], path: str, first: int, last: int, *, edited: bool = False) -> None:
    """Widen what was seen of `path` by lines `first`..`last` (0, 0: a write of unknown lines)."""
    last = max(last, first)
    old = seen.get(path)
    seen[path] = Seen(first, last, edited) if old is None else old.widened(first, last, edited)


def bad_changed_lines(ranges: Sequence[tuple[int, int]], total: int) -> tuple[int, str] | None:
    """Why `ranges` are not changed lines of a content of `total` lines: (the index of the first
    bad range, what is wrong), or (-1, ...) when there are too many; None when they are."""
    if len(ranges) > MAX_CHANGED_RANGES:
        return -1, f"{len(ranges)} ranges, over {MAX_CHANGED_RANGES}"
    for i, (first, last) in enumerate(ranges):
        if first < 1:
            return i, f"first must be >= 1 (lines are 1-based), got {first}"
        if last < first:
            return i, f"last must be >= first, got {first}..{last}"
        if last > total:
            return i, f"last {last} is past the {total} lines of the new content"
    return None


def _whole(entry: core.FileState) -> bool:
    """Whether `entry` holds the file's whole content (0 is an offset an import may record)."""
    return (entry.offset or 1) == 1 and entry.limit is None and not entry.partial_view


def after_write(
    seen: Seen | None,
    held: core.FileState | None,
    new: bytes | None,
    changed: Sequence[tuple[int, int]] | None = None,
    *,
    verified: bool = True,
) -> Seen:
    """What was seen of a file after a write of `new` (the module doc): `seen` and `held` are
    the agent's span and entry for it before the write (`verified` false: the entry's content
    is not known to be the file's), `changed` the lines of `new` the write names as changed
    (checked by `bad_changed_lines`; None: not named, an empty list: a deletion only). `new`
    None: a write whose text is not known (a transcript's that does not tell it): the span
    stays, edited."""
    if new is None:
        return Seen(0, 0, True) if seen is None else seen._replace(edited=True)
    total = line_count(new)
    if held is None:
        return Seen(1, total, True) if total else Seen(0, 0, True)
    diff = core.line_diff(held.content, new) if verified and _whole(held) else None
    span: tuple[int, int] | None = None
    if seen is not None and seen.first > 0 and total:
        if diff is not None:
            span = diff.map_span(seen.first, seen.last)
        else:
            span = (min(seen.first, total), min(seen.last, total))
    if changed is None and diff is not None:
        changed = diff.changed
    first, last = span if span is not None else (0, 0)
    for lo, hi in changed or ():
        first, last = (lo, hi) if first == 0 else (min(first, lo), max(last, hi))
    return Seen(first, last, True)
