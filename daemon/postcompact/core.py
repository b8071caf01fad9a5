"""The Rust core as the daemon uses it: the one module that imports `postcompact._core`
(`make lint` checks it, docs/architecture.md §8). Everything the daemon needs of the core is
named here, so what the core offers the daemon is one list, and `_core.pyi` stays the core's own
contract (stubtest checks it against the built module).
"""

from __future__ import annotations

from postcompact._core import (
    Charge,
    FileState,
    FileStateCache,
    Framed,
    LineDiff,
    ReadRefused,
    __version__,
    compact_tail,
    count,
    count_batch,
    escape_reminder_tags,
    estimate,
    estimate_batch,
    estimate_from_utf16_len,
    expand_path,
    held_bytes,
    json_utf16_len,
    line_diff,
    number_lines,
    read_answer,
    read_range,
    read_whole,
    realpath,
    restore_files,
    truncate_batch,
    truncate_to_tokens,
    utf16_len,
)

# One file of `restore_files`: (framed attachment, content, mtime_ns, total_lines, num_lines,
# tokens, blocks_units, text_units, json_units).
RestoredFile = tuple[Framed, bytes, int, int, int, int, int, int, int]

__all__ = [
    "Charge",
    "FileState",
    "FileStateCache",
    "Framed",
    "LineDiff",
    "ReadRefused",
    "RestoredFile",
    "__version__",
    "compact_tail",
    "count",
    "count_batch",
    "escape_reminder_tags",
    "estimate",
    "estimate_batch",
    "estimate_from_utf16_len",
    "expand_path",
    "held_bytes",
    "json_utf16_len",
    "line_diff",
    "number_lines",
    "read_answer",
    "read_range",
    "read_whole",
    "realpath",
    "restore_files",
    "truncate_batch",
    "truncate_to_tokens",
    "utf16_len",
]
