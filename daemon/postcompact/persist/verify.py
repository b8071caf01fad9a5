"""Content verification at load: a stored entry's content hash, checked against the file on disk
(docs/persistence.md, "Loading")."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from postcompact import diskaccess
from postcompact.state import content_digest

log = logging.getLogger("postcompact.persist")


# A file re-read at load larger than this is not verified (its entry stays unverified).
MAX_VERIFY_BYTES = 64 * 1024 * 1024


def _line_range(data: bytes, offset: int | None, limit: int | None) -> bytes:
    """diskaccess's range model: lines split on "\\n", the selected ones joined back."""
    start = (offset or 1) - 1
    lines = data.split(b"\n")
    return b"\n".join(lines[start : start + limit] if limit is not None else lines[start:])


def verified_content(
    path: str,
    offset: int | None,
    limit: int | None,
    digest: bytes,
    size: int,
    *,
    roots: Sequence[str],
    deny_globs: Sequence[str],
) -> bytes | None:
    """The entry's content re-read from disk when its hash matches `digest`, else None.

    Read as every read path does (`diskaccess.read_text`: inside `roots`, never a deny-globbed
    file, a device or a path swapped on the way): an entry recorded for anything else stays
    unverified, so a restart never reads it, nor answers about its content."""
    try:
        data = diskaccess.read_text(
            path, roots=roots, max_bytes=MAX_VERIFY_BYTES, deny_globs=deny_globs
        ).content
    except diskaccess.FileReadError:
        return None
    start = offset or 1
    if start == 1 and limit is None:
        candidates = [data]
    elif start == 1:
        # A head: lines 1..limit as ReadFile keeps them (without the last line's "\r\n"), or as
        # a Compact's TRUNCATE_HEAD seed does (possibly part of line 1): a prefix of the file.
        candidates = [data[:size]]
    else:
        # The range as ReadFile keeps it (a range ending before EOF without its last "\r"),
        # or as a harness recorded it split on "\n".
        joined = _line_range(data, offset, limit)
        candidates = [joined.removesuffix(b"\r"), joined]
    for c in candidates:
        if len(c) == size and content_digest(c) == digest:
            return c
    return None
