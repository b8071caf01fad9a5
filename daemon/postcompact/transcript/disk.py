"""What a transcript tells about the files on disk, recreated for a replay (docs/parity.md).

A transcript records no file contents as such, only what the agent saw and did. For each path
the model keeps what the records before a point tell:

- the whole text, when a record gives it: a Write's content, an Edit applied to the
  `originalFile` its result carries (or to a whole text known before), a Read of the whole file;
- otherwise the lines some ranged Reads showed, and the file's line count;
- the size, when a Read was refused for it ("File content (N tokens) exceeds ...", "(3.1MB)");
- missing, when a Read said "File does not exist" and nothing wrote it since;
- the mtime: the time of the last record that wrote it (an Edit, a Write, an
  `edited_text_file` notice); for a file the transcript never saw written, a time before the
  session began (`Disk.unknown_mtime_ms`): it existed before, and its real mtime is not
  recorded. A Read that shows other text than the model holds for the lines it shows means the
  file changed outside the transcript (a `git merge`, a formatter): its mtime becomes the time
  of the last shell command before that Read (or the Read's own time when none ran since).

`materialize` writes the files into a directory and sets their mtimes. A file known only in part
gets its unknown lines filled with filler of the known lines' average length (`approximate`
says which): its size, and so whether Claude Code would restore it whole or as a too-large
note, is then an estimate. Shell commands (`rm`, `git checkout`, formatters) are not modelled.

What is written is bounded (issue 37: a 2 KB transcript claiming `totalLines: 10**9`, or four
"(1.0GB)" size claims, must not write gigabytes): each file's first `WRITE_BYTES` are written,
the rest of its size (up to `MAX_SPARSE_BYTES`) is a hole (`truncate`: no disk, no time), which
only a file over every policy's size cap can have, so no restoration reads it; and the bytes
written in all are held within `disk_budget`, past which `DiskBudgetExceeded` names the limit.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from postcompact.transcript.parse import (
    Event,
    FileChanged,
    FileRead,
    FileReadFailed,
    FileWritten,
    ShellRan,
    apply_edits,
)

__all__ = ["DISK_BUDGET", "Disk", "DiskBudgetExceeded", "FileModel"]

_FILLER = "x"
_DEFAULT_LINE = 40
# Written of one file: its size decides whether it is restored whole (max_file_size_bytes: 256
# KiB by default) and that is kept whole by the hole; its text is read only when it is under the
# cap, or its head (one file's token cap) when over: 4 MiB covers every profile's cap. A policy
# over 4 MiB would see such a file's tail as NULs (docs/parity.md).
WRITE_BYTES = 4 * 1024 * 1024 + 4096
MAX_SPARSE_BYTES = 2**40  # the size a claim may give a file (a hole; ext4 and tmpfs hold it)
DISK_BUDGET = 512 * 1024 * 1024  # written by one replay, every file together
_CHUNK = 1 << 20


class DiskBudgetExceeded(Exception):
    """A replay would write more than its disk budget: refused by name, nothing more written."""

    def __init__(self, path: str, budget: int) -> None:
        super().__init__(
            f"recreating {path!r} would write more than the replay's disk budget "
            f"({budget} bytes, replay_disk_bytes)"
        )
        self.path = path


@dataclass(slots=True)
class FileModel:
    text: str | None = None  # the whole text, when known
    lines: dict[int, str] = field(default_factory=dict)  # 1-based line -> text (text unknown)
    total_lines: int | None = None
    size_hint: int | None = None  # characters, from a refused Read
    missing: bool = False
    mtime_ms: int | None = None  # None: never written in the transcript
    dirty: bool = True

    @property
    def approximate(self) -> bool:
        return self.text is None and not self.missing

    def known_text(self) -> str:
        """The best text for the file: the whole text, or the known lines with filler (whole:
        for tests and small files; `materialize` writes `pieces`, bounded)."""
        return "".join(self.pieces())

    def pieces(self) -> Iterator[str]:
        """`known_text` in pieces, made as they are written (a claimed size or line total of
        10**9 is never built in memory)."""
        if self.text is not None:
            yield self.text
            return
        if self.size_hint is not None and not self.lines:
            left = self.size_hint
            while left > 0:
                yield _FILLER * min(left, _CHUNK)
                left -= _CHUNK
            return
        total, filler = self._shape()
        for n in range(1, total + 1):
            yield self.lines.get(n, filler) + ("\n" if n < total else "")

    def _shape(self) -> tuple[int, str]:
        total = max([self.total_lines or 0, *self.lines]) if self.lines else (self.total_lines or 0)
        known = list(self.lines.values())
        width = round(sum(map(len, known)) / len(known)) if known else _DEFAULT_LINE
        return total, _FILLER * max(1, width)

    def size(self) -> int:
        """The size `known_text` has, in characters (estimated without building it)."""
        if self.text is not None:
            return len(self.text)
        if self.size_hint is not None and not self.lines:
            return self.size_hint
        total, filler = self._shape()
        if total == 0:
            return 0
        known = sum(len(x) for n, x in self.lines.items() if n <= total)
        unknown = total - sum(1 for n in self.lines if n <= total)
        return known + unknown * len(filler) + total - 1


def _norm(text: str) -> str:
    return text.replace("\r\n", "\n").rstrip("\n")


def _differs(f: FileModel, e: FileRead) -> bool:
    """Whether the Read `e` shows text other than what `f` holds for the lines it shows."""
    if f.missing or (f.text is None and not f.lines):
        return False
    shown = e.content.split("\n")[: e.num_lines]
    if f.text is not None:
        known = f.text.split("\n")
        if e.start_line == 1 and e.num_lines >= e.total_lines:
            return _norm(f.text) != _norm(e.content)
        part = known[e.start_line - 1 : e.start_line - 1 + len(shown)]
        return [x.rstrip("\r") for x in part] != [x.rstrip("\r") for x in shown]
    for i, line in enumerate(shown):
        old = f.lines.get(e.start_line + i)
        if old is not None and old.rstrip("\r") != line.rstrip("\r"):
            return True
    return False


@dataclass(slots=True)
class Disk:
    """Per transcript path, what is known; `unknown_mtime_ms` for files never written."""

    unknown_mtime_ms: int
    files: dict[str, FileModel] = field(default_factory=dict)
    last_shell_ms: int = 0
    disk_budget: int = DISK_BUDGET
    written: dict[str, int] = field(default_factory=dict)  # bytes written, per target
    total_written: int = 0  # their sum

    def apply(self, events: Iterable[Event]) -> None:
        for e in events:
            self.event(e)

    def event(self, e: Event) -> None:
        if isinstance(e, ShellRan):
            self.last_shell_ms = max(self.last_shell_ms, e.time_ms)
        elif isinstance(e, FileRead):
            f = self.files.setdefault(e.path, FileModel())
            if _differs(f, e):  # changed outside the transcript since it was last seen
                seen = f.mtime_ms if f.mtime_ms is not None else self.unknown_mtime_ms
                f.mtime_ms = self.last_shell_ms if self.last_shell_ms > seen else e.time_ms
            f.missing = False
            f.dirty = True
            whole = e.start_line == 1 and e.num_lines >= e.total_lines
            if whole:
                f.text = e.content
                f.lines.clear()
            elif f.text is None:
                for i, line in enumerate(e.content.split("\n")[: e.num_lines]):
                    f.lines[e.start_line + i] = line
            f.total_lines = e.total_lines
        elif isinstance(e, FileReadFailed):
            f = self.files.setdefault(e.path, FileModel())
            f.dirty = True
            if e.missing:
                f.missing = f.mtime_ms is None or f.text is None
                if f.missing:
                    f.text = None
                    f.lines.clear()
            elif e.tokens is not None:
                f.size_hint = e.tokens * 4
            elif e.size_bytes is not None:
                f.size_hint = e.size_bytes
        elif isinstance(e, FileWritten):
            f = self.files.setdefault(e.path, FileModel())
            f.missing = False
            f.dirty = True
            f.mtime_ms = e.time_ms
            if e.content is not None:
                f.text = e.content
                f.lines.clear()
            elif e.edits and f.text is not None:
                f.text = apply_edits(f.text, e.edits)
            else:
                f.text = None
            if f.text is not None:
                f.total_lines = f.text.count("\n") + 1 if f.text else 0
            elif e.edits and f.total_lines is not None:
                delta = sum(x.new.count("\n") - x.old.count("\n") for x in e.edits)
                f.total_lines = max(0, f.total_lines + delta)
        elif isinstance(e, FileChanged):
            f = self.files.setdefault(e.path, FileModel())
            f.dirty = True
            f.mtime_ms = e.time_ms

    def mtime_of(self, path: str) -> int:
        f = self.files.get(path)
        return f.mtime_ms if f is not None and f.mtime_ms is not None else self.unknown_mtime_ms

    def materialize(self, local: dict[str, str]) -> None:
        """Write each changed file at `local[path]` and set its mtime (a missing one removed)."""
        for path, f in self.files.items():
            target = local.get(path)
            if target is None or not f.dirty:
                continue
            f.dirty = False
            if f.missing:
                if os.path.isfile(target) or os.path.islink(target):
                    os.unlink(target)
                continue
            try:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                self._write(target, f)
                t = self.mtime_of(path) / 1000
                os.utime(target, (t, t))
            except OSError:  # a name over NAME_MAX, a file where a directory must be
                continue  # not recreated: the restoration finds it unreadable, as it would

    def _write(self, target: str, f: FileModel) -> None:
        """`f`'s text at `target`: its first WRITE_BYTES written, the rest of its size a hole;
        DiskBudgetExceeded before the bytes written in all would pass the budget."""
        self.total_written -= self.written.pop(target, 0)
        room = min(WRITE_BYTES, self.disk_budget - self.total_written)
        done = 0
        with open(target, "wb") as out:
            for piece in f.pieces():
                raw = piece.encode("utf-8", "surrogatepass")
                if done + len(raw) > room:
                    if room < WRITE_BYTES:  # the budget, not the file's own cap, stops it
                        out.truncate(0)
                        raise DiskBudgetExceeded(target, self.disk_budget)
                    out.write(raw[: room - done])
                    done = room
                    out.truncate(min(max(f.size(), done), MAX_SPARSE_BYTES))
                    break
                out.write(raw)
                done += len(raw)
        self.written[target] = done
        self.total_written += done
