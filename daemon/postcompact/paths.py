"""Paths and time, one owner for each helper the daemon's modules share: the clock in Unix
milliseconds, whether a path lies within a root (lexically, or both already resolved), and how a
path is shown to the agent.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

__all__ = ["display_path", "now_ms", "within", "within_roots"]


def now_ms() -> int:
    """The wall clock in whole Unix milliseconds (the unit of every timestamp stored or sent)."""
    return time.time_ns() // 1_000_000


def within(path: str, root: str) -> bool:
    """`path` is `root` or below it, compared as written (both absolute and normalised)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def within_roots(real_path: str, real_roots: Iterable[str]) -> bool:
    """True when `real_path` is one of the roots or below one (both already resolved)."""
    for root in real_roots:
        if real_path == root:
            return True
        prefix = root if root.endswith(os.sep) else root + os.sep
        if real_path.startswith(prefix):
            return True
    return False


def display_path(path: str, cwd: str, *, relative: bool = False) -> str:
    """Relative to cwd when inside it, else the path itself; with `relative`, Node's
    `path.relative(cwd, path)` (`../x` outside cwd), as current Claude Code shows it."""
    if relative:
        return os.path.relpath(path, cwd) if path != cwd else ""
    prefix = cwd.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path
