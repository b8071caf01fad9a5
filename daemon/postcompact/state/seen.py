"""What an agent saw of each file since its last compaction: the span of lines its reads showed
and its writes changed, and whether it edited the file (`AgentState.seen`; docs/eval.md §2).

One span per file (its first to its last line seen), not a set of ranges: two integers a file
is all the restoration needs to restore what was seen (`RestorePolicy.restore_seen`), to rank
edited files (`FileRanking.EDITS_FIRST`) and to name left-out files (`left_out_index`). Line
numbers are as the file was at the time (later edits are not tracked to shift them).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Seen", "line_count", "saw", "written_lines"]


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


def written_lines(held: bool, new: bytes) -> tuple[int, int]:
    """What a write adds to what was seen: every line of a file the agent held nothing of (it
    wrote it whole), else nothing new (0, 0): an edit of a file it had read, whose changed lines
    a whole-content write does not tell (the entry's span stays, marked edited)."""
    if held:
        return 0, 0
    total = line_count(new)
    return (1, total) if total else (0, 0)


def saw(seen: dict[str, Seen], path: str, first: int, last: int, *, edited: bool = False) -> None:
    """Widen what was seen of `path` by lines `first`..`last` (0, 0: a write of unknown lines)."""
    last = max(last, first)
    old = seen.get(path)
    seen[path] = Seen(first, last, edited) if old is None else old.widened(first, last, edited)
