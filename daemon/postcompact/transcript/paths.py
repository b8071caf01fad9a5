"""Transcript paths to local paths, and back (docs/transcripts.md).

A transcript names files as the machine that wrote it saw them: POSIX (`/Users/a/app/x.ts`) or
Windows (`D:\\app\\x.ts`, `C:\\Users\\a\\.claude\\...`). A `PathMap` sends each to a local
absolute path by its longest matching prefix, and keeps the way back so that output shows the
transcript's own spelling.

- Import: the transcript's cwd goes to `--cwd`, further prefixes to their `--map` targets; a
  POSIX path no prefix covers stays as it is; a Windows one has no local place and is skipped.
- Replay: everything goes under one fresh tree (`PathMap.tree`): `/a/b` -> `<tree>/a/b`,
  `D:\\a\\b` -> `<tree>/D/a/b`.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["PathMap", "is_windows", "join", "split_parts"]

_DRIVE = re.compile(r"\A([A-Za-z]):[\\/]")


def is_windows(path: str) -> bool:
    return _DRIVE.match(path) is not None or path.startswith("\\\\")


def join(base: str, *parts: str) -> str:
    """`base` and `parts` joined with the separator the transcript's paths use."""
    sep = "\\" if is_windows(base) else "/"
    return sep.join([base.rstrip("\\/"), *parts])


def split_parts(path: str) -> tuple[str, ...] | None:
    """The components of an absolute transcript path, a Windows drive as its first one
    ("D"); None for a relative path or one that cannot be placed (UNC)."""
    m = _DRIVE.match(path)
    if m:
        rest = path[m.end() :].replace("\\", "/")
        parts = [p for p in posixpath.normpath("/" + rest).split("/") if p]
        return (m.group(1).upper(), *parts)
    if path.startswith("/"):
        return tuple(p for p in posixpath.normpath(path).split("/") if p)
    return None


@dataclass(slots=True)
class PathMap:
    """Prefixes (as component tuples) to local absolute directories; the longest wins."""

    prefixes: list[tuple[tuple[str, ...], str]] = field(default_factory=list)
    tree: str | None = None  # replay: every path under this directory
    back: dict[str, str] = field(default_factory=dict)  # local -> as in the transcript

    @classmethod
    def under(cls, tree: str) -> PathMap:
        return cls(tree=os.path.abspath(tree))

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> PathMap:
        m = cls()
        for source, target in pairs:
            m.add(source, target)
        return m

    def add(self, source: str, target: str) -> None:
        parts = split_parts(source)
        if parts is None:
            raise ValueError(f"a mapped prefix must be absolute: {source!r}")
        if not os.path.isabs(target):
            raise ValueError(f"a mapping target must be an absolute local path: {target!r}")
        self.prefixes.append((parts, os.path.normpath(target)))
        self.prefixes.sort(key=lambda item: -len(item[0]))

    def local(self, path: str) -> str | None:
        """The local path for `path`, or None when it has no place here."""
        parts = split_parts(path)
        if parts is None:
            return None
        out: str | None = None
        for prefix, target in self.prefixes:
            if parts[: len(prefix)] == prefix:
                out = os.path.join(target, *parts[len(prefix) :])
                break
        if out is None:
            if self.tree is not None:
                out = os.path.join(self.tree, *parts)
            elif not is_windows(path):
                out = "/" + "/".join(parts)
            else:
                return None
        out = os.path.normpath(out)
        self.back.setdefault(out, path)
        return out

    def original(self, local: str) -> str:
        """`local` as the transcript spells it (itself when it never came from there)."""
        return self.back.get(local, local)
