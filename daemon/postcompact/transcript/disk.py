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
"""

from __future__ import annotations

import os
from collections.abc import Iterable
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

__all__ = ["Disk", "FileModel"]

_FILLER = "x"
_DEFAULT_LINE = 40


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
        """The best text for the file: the whole text, or the known lines with filler."""
        if self.text is not None:
            return self.text
        if self.size_hint is not None and not self.lines:
            return _FILLER * self.size_hint
        total = max([self.total_lines or 0, *self.lines]) if self.lines else (self.total_lines or 0)
        known = list(self.lines.values())
        width = round(sum(map(len, known)) / len(known)) if known else _DEFAULT_LINE
        filler = _FILLER * max(1, width)
        return "\n".join(self.lines.get(n, filler) for n in range(1, total + 1))


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
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w", encoding="utf-8", errors="surrogatepass", newline="") as out:
                out.write(f.known_text())
            t = self.mtime_of(path) / 1000
            os.utime(target, (t, t))
