"""The daemon's guarded access to files on disk, for ReadFile, restoration's re-reads and every
other read (docs/architecture.md §4, §5): the checks of a path (`resolve`: roots, deny globs,
symlinks), what a refused read raises (`refusal_error`), reads on the event loop (`off_loop`),
and `read_text`, a file's bytes for the callers that do not render them (CheckWrite's comparison).
ReadFile and restoration read through the core, which renders as it reads (`core.read_file`,
`core.restore_files`).

`read_text` is synchronous. Callers on the event loop use `off_loop`: the read runs inline when it
is small and every byte is in the page cache (`inline=True`: `preadv2(RWF_NOWAIT)`, which fails
rather than wait for the disk), else on a worker thread — a thread hop costs ~100 µs here, more
than reading a few cached files.

It never follows a symlink out of the session roots, never opens a device, FIFO or socket, refuses
binaries (by extension, then by a NUL byte in the first 8 KiB) and files matching a deny glob, and
reads a whole file only when it is within `max_bytes`.

Line model (Claude Code's `readFileInRange`): a file is split on "\\n"; a trailing newline
leaves a final empty line, so "a\\nb\\n" has 3 lines and an empty file has 0 (postcompact's
choice, so that an empty file gets Claude Code's empty-file warning). `content` is the exact
bytes of the selected lines (CRLF kept inside the range, the terminator of the last selected line
excluded), so a whole read of a file returns the file's bytes unchanged; rendering splits lines on
`\\r?\\n` as Claude Code does. Bytes are not decoded here: renderers decode with replacement, as
Node's utf8 decoding does.
"""

from __future__ import annotations

import asyncio
import errno
import fnmatch
import functools
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from postcompact import core
from postcompact.paths import within_roots

__all__ = [
    "BINARY_EXTENSIONS",
    "DEFAULT_DENY_GLOBS",
    "INLINE_READ_BYTES",
    "SNIFF_BYTES",
    "FileReadError",
    "FileReadErrorKind",
    "ReadScope",
    "TextFile",
    "WouldBlock",
    "binary_name",
    "effective_deny_globs",
    "is_denied",
    "off_loop",
    "read_text",
    "realpath",
    "refusal_error",
    "resolve",
    "resolve_roots",
]

FileReadErrorKind = Literal[
    "invalid_path",
    "outside_roots",
    "denied",
    "missing",
    "permission",
    "directory",
    "device",
    "binary",
    "too_large",
    "invalid_range",
    "answer_too_large",
]

# Secrets never injected into a model's context. Matched against the full path and the base name.
DEFAULT_DENY_GLOBS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pgpass",
    "*/.ssh/*",
    "*/.aws/credentials",
    "*/.gnupg/*",
)

# Not text (after Claude Code's BINARY_EXTENSIONS; images and PDFs are binary to a text reader).
BINARY_EXTENSIONS: frozenset[str] = frozenset(
    {
        # images
        ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".tiff", ".tif", ".heic",
        ".heif", ".avif", ".psd", ".raw", ".cr2", ".nef",
        # video
        ".mp4", ".mov", ".avi", ".mkv", ".webm", ".wmv", ".flv", ".m4v", ".mpeg", ".mpg",
        # audio
        ".mp3", ".wav", ".ogg", ".flac", ".aac", ".m4a", ".wma", ".aiff", ".opus",
        # archives and compressed data
        ".zip", ".tar", ".gz", ".gzip", ".tgz", ".bz2", ".7z", ".rar", ".xz", ".z", ".tbz",
        ".tbz2", ".txz", ".lz", ".lzma", ".zst", ".br", ".cab", ".iso", ".dmg",
        # executables, objects, libraries
        ".exe", ".dll", ".so", ".dylib", ".bin", ".o", ".a", ".obj", ".lib", ".app", ".msi",
        ".deb", ".rpm", ".elf", ".out", ".ko",
        # documents
        ".pdf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp",
        # fonts
        ".ttf", ".otf", ".woff", ".woff2", ".eot",
        # bytecode and packages
        ".pyc", ".pyo", ".pyd", ".class", ".jar", ".war", ".ear", ".node", ".wasm", ".rlib",
        ".whl", ".egg",
        # databases and data blobs
        ".sqlite", ".sqlite3", ".db", ".mdb", ".idx", ".pack", ".dat", ".npy", ".npz", ".pkl",
        ".pickle", ".parquet", ".avro", ".orc", ".h5", ".hdf5", ".pt", ".pth", ".onnx",
        ".safetensors", ".lockb",
        # design and 3D
        ".ai", ".eps", ".sketch", ".fig", ".xd", ".blend", ".3ds", ".max", ".swf", ".fla",
    }
)  # fmt: skip

SNIFF_BYTES = 8192
# The largest file an inline read takes on (see `off_loop`); larger ones go to a worker thread.
INLINE_READ_BYTES = 256 * 1024
# Linux >= 4.14: a read that would wait for the disk fails with EAGAIN instead (0: not available).
_RWF_NOWAIT: int = getattr(os, "RWF_NOWAIT", 0)

_T = TypeVar("_T")


class WouldBlock(Exception):
    """An inline read that would wait for the disk or is over `INLINE_READ_BYTES`: run it on a
    worker thread instead. Never reaches a client."""


async def off_loop(read: Callable[[bool], _T]) -> _T:
    """`read(True)` (inline: page cache only) on the event loop; if it raises `WouldBlock`,
    `read(False)` on a worker thread. `read` must be safe to run twice (reads, no writes)."""
    if _RWF_NOWAIT:
        try:
            return read(True)
        except WouldBlock:
            pass
    return await asyncio.to_thread(read, False)


class FileReadError(Exception):
    """A read refused or failed; `kind` is machine-readable, `message` names the path."""

    def __init__(self, kind: FileReadErrorKind, message: str, size: int | None = None) -> None:
        super().__init__(message)
        self.kind: FileReadErrorKind = kind
        self.message = message
        self.size = size  # too_large: the file's size in bytes, when known


@dataclass(frozen=True, slots=True)
class TextFile:
    path: str  # the real path read (symlinks resolved)
    content: bytes  # the bytes of the selected range
    mtime_ms: int  # floor of the file's mtime in milliseconds
    total_lines: int  # lines in the whole file (0 when empty)
    start_line: int  # 1-based first line of `content`
    num_lines: int  # lines in `content`
    size: int  # the file's size in bytes
    truncated: bool = False  # `head_bytes` cut the read short of the requested range


def effective_deny_globs(configured: Iterable[str] = ()) -> tuple[str, ...]:
    """The deny globs every read path applies: the defaults, then the configured ones (the
    configuration adds to the defaults, it cannot remove them)."""
    return _effective(tuple(configured))


@functools.lru_cache(maxsize=32)
def _effective(configured: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*DEFAULT_DENY_GLOBS, *configured)))


@functools.lru_cache(maxsize=32)
def _deny_pattern(deny_globs: tuple[str, ...]) -> re.Pattern[str]:
    """One regex matching what any of `deny_globs` matches (`fnmatch.fnmatchcase` semantics)."""
    return re.compile("|".join(fnmatch.translate(glob) for glob in deny_globs))


def is_denied(paths: Iterable[str], deny_globs: Sequence[str]) -> str | None:
    """The first glob matching one of `paths` or its base name (case-sensitive), or None."""
    if not deny_globs:
        return None
    globs = tuple(deny_globs)
    for path in paths:
        glob = _denied(path, globs)
        if glob is not None:
            return glob
    return None


@functools.lru_cache(maxsize=4096)
def _denied(path: str, deny_globs: tuple[str, ...]) -> str | None:
    """The first of `deny_globs` matching `path` or its base name, or None. Cached: the deny
    globs are fixed for the daemon's life and the same paths are checked call after call (every
    ReadFile and every restored file checks both the path asked for and its real path)."""
    base = os.path.basename(path)
    match = _deny_pattern(deny_globs).match
    if not (match(path) or match(base)):
        return None
    for glob in deny_globs:  # a hit: name the first glob, in order
        if fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(base, glob):
            return glob
    return None


def _os_realpath(path: str) -> str:
    try:
        return os.path.realpath(path)
    except OSError:  # a component swapped while it was resolved (e.g. readlink: EINVAL)
        raise FileReadError("outside_roots", f"{path} changed while it was resolved") from None


def realpath(path: str) -> str:
    """`os.path.realpath(path)`, resolved in the core where it can (`core.realpath`)."""
    real = core.realpath(path)
    return _os_realpath(path) if real is None else real


def resolve_roots(roots: Iterable[str]) -> tuple[str, ...]:
    """The real paths of `roots`, as `read_text` checks against (a root that cannot be
    resolved stays as given: it then only matches itself)."""
    out = []
    for r in roots:
        try:
            out.append(realpath(r))
        except FileReadError:
            out.append(os.path.normpath(r))
    return tuple(out)


@dataclass(slots=True)
class ReadScope:
    """What a batch of reads resolves once instead of per file: the roots' real paths, and the
    real path of each directory read from (five files of one directory cost one lookup of the
    directory's components, then one per file name)."""

    real_roots: tuple[str, ...]
    real_dirs: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, roots: Iterable[str]) -> ReadScope:
        return cls(resolve_roots(roots))

    def realpath(self, path: str) -> str:
        """`os.path.realpath(path)` for a normalised absolute `path`."""
        head, tail = os.path.split(path)
        base = self.real_dirs.get(head)
        if base is None:
            base = core.realpath(head)
            if base is None:
                return _os_realpath(path)
            self.real_dirs[head] = base
        real = core.realpath(tail, base)
        return _os_realpath(path) if real is None else real


def read_text(
    path: str,
    *,
    roots: Sequence[str],
    max_bytes: int,
    offset: int | None = None,
    limit: int | None = None,
    deny_globs: Sequence[str] = (),
    head_bytes: int | None = None,
    scope: ReadScope | None = None,
    inline: bool = False,
    max_answer: int | None = None,
) -> TextFile:
    """Read lines [offset, offset+limit) (1-based; default the whole file) of a text file.

    - `path` must be absolute (callers expand it first); it and its real path must be inside a
      root, and neither may match a deny glob.
    - A whole-file read of a file larger than `max_bytes` raises `too_large`; a ranged read
      (offset > 1 or a limit) streams and keeps only the range.
    - `head_bytes` (a head of a file over the size cap, as TRUNCATE_HEAD has): read at most this
      many bytes of the range, cut back to a line boundary (or to a UTF-8 character boundary when
      the first line alone is longer), and set `truncated`. `total_lines` is still exact.
    - `scope`: `ReadScope.of(roots)`, shared by a caller reading several files.
    - `inline`: read only from the page cache and only a file within `INLINE_READ_BYTES`;
      otherwise raise `WouldBlock` (see `off_loop`).
    - `max_answer`: refuse (`answer_too_large`) a read whose answer — the bytes twice, as content
      and as numbered text, plus each line's number — would take more bytes than this; a
      ranged read is refused before its range is read (the line scan streams), so the work is
      bounded before it is done.
    """
    _check_absolute(path)
    if offset is not None and offset < 1:
        raise FileReadError("invalid_range", f"offset must be at least 1, got {offset}")
    if limit is not None and limit < 1:
        raise FileReadError("invalid_range", f"limit must be at least 1, got {limit}")
    real, ext = _resolve_checked(path, scope or ReadScope.of(roots), deny_globs)
    binary_name = ext in BINARY_EXTENSIONS
    inline_max = INLINE_READ_BYTES if inline else None
    ranged = (offset is not None and offset > 1) or limit is not None
    try:
        if not ranged and head_bytes is None:
            w = core.read_whole(real, max_bytes, SNIFF_BYTES, binary_name, inline_max)
            content, total = w.content, w.total_lines
            if max_answer is not None:
                need = answer_bytes(len(content), total)
                if need > max_answer:
                    raise refusal_error(
                        core.RefusalKind.ANSWER_TOO_LARGE, path, ext, max_bytes, 0, need, max_answer
                    )
            return TextFile(real, content, w.mtime_ns // 1_000_000, total, 1, total, len(content))
        start = offset or 1
        r = core.read_range(
            real, start, limit, head_bytes, SNIFF_BYTES, binary_name, inline_max, max_answer
        )
    except core.ReadRefused as exc:
        refusal: core.Refusal = exc.args[0]
        raise refusal_error(
            refusal.kind, path, ext, max_bytes, refusal.errno, refusal.size, max_answer
        ) from None
    return TextFile(
        real,
        r.content,
        r.mtime_ns // 1_000_000,
        r.total_lines,
        start,
        r.num_lines,
        r.size,
        r.truncated,
    )


@functools.lru_cache(maxsize=4096)
def binary_name(path: str) -> bool:
    """Whether the extension of `path` names a binary file (`BINARY_EXTENSIONS`)."""
    return os.path.splitext(path)[1].lower() in BINARY_EXTENSIONS


def resolve(path: str, scope: ReadScope, deny_globs: Sequence[str]) -> tuple[str, str]:
    """The real path `read_text` reads for `path`, and its extension: FileReadError unless
    `path` is absolute, it and its real path are inside the roots of `scope`, and neither
    matches a deny glob (for a caller reading through the core itself)."""
    _check_absolute(path)
    return _resolve_checked(path, scope, deny_globs)


def _check_absolute(path: str) -> None:
    if not path or "\0" in path:
        raise FileReadError("invalid_path", f"invalid path {path!r}")
    if not os.path.isabs(path):
        raise FileReadError("invalid_path", f"path is not absolute: {path}")


def _resolve_checked(path: str, scope: ReadScope, deny_globs: Sequence[str]) -> tuple[str, str]:
    requested = os.path.normpath(path)
    real = scope.realpath(requested)
    if not within_roots(real, scope.real_roots):
        raise FileReadError("outside_roots", f"{path} is outside the session roots")
    glob = is_denied(dict.fromkeys((requested, real)), deny_globs)
    if glob is not None:
        raise FileReadError("denied", f"{path} matches the deny rule {glob!r}")
    return real, os.path.splitext(real)[1].lower()


def answer_bytes(size: int, lines: int, first: int = 1) -> int:
    """The bytes of an answer holding `size` bytes of `lines` lines numbered from `first`: the
    bytes as content and again as text, and `{n}\\t` before each line (the core's rule)."""
    last = max(1, first + max(lines, 1) - 1)
    return 2 * size + lines * (len(str(last)) + 1)


_KIND = core.RefusalKind


def refusal_error(
    kind: core.RefusalKind,
    path: str,
    ext: str,
    max_bytes: int,
    err: int,
    size: int,
    max_answer: int | None = None,
) -> FileReadError | WouldBlock:
    """What to raise for a read the core refused (`core.Refusal`, see `core.read_whole`)."""
    if kind == _KIND.WOULD_BLOCK:
        return WouldBlock()
    if kind in _OS_PHASES:
        return _os_error(path, _OS_PHASES[kind], err)
    messages: dict[core.RefusalKind, tuple[FileReadErrorKind, str]] = {
        _KIND.DIRECTORY: ("directory", f"{path} is a directory"),
        _KIND.DEVICE: ("device", f"{path} is not a regular file (device, FIFO or socket)"),
        _KIND.BINARY_NAME: ("binary", f"{path} is a binary file ({ext})"),
        _KIND.BINARY: ("binary", f"{path} is a binary file (contains NUL bytes)"),
        _KIND.TOO_LARGE: (
            "too_large",
            f"{path} is {size} bytes, over the {max_bytes}-byte limit; "
            "read it with an offset and limit",
        ),
        _KIND.GREW: (
            "too_large",
            f"{path} is over the {max_bytes}-byte limit; read it with a range",
        ),
        _KIND.CHANGED: ("outside_roots", f"{path} changed while reading"),
        _KIND.ANSWER_TOO_LARGE: (
            "answer_too_large",
            f"the answer for {path} would take {size} bytes (the text twice, as content and "
            f"numbered), over the {max_answer}-byte answer limit; read it in parts with offset "
            "and limit",
        ),
    }
    what, message = messages[kind]
    sized = kind in (_KIND.TOO_LARGE, _KIND.ANSWER_TOO_LARGE)
    return FileReadError(what, message, size if sized else None)


# The refusals that carry an errno, and the phase of the read that failed.
_OS_PHASES: dict[core.RefusalKind, str] = {
    _KIND.STAT: "stat",
    _KIND.OPEN: "open",
    _KIND.READ: "read",
}


def _os_error(path: str, phase: str, err: int | None) -> FileReadError:
    """The FileReadError for an OS error `err` (errno) while `phase`-ing `path`."""
    if phase == "read":
        return FileReadError("permission", f"cannot read {path}: {os.strerror(err or 0)}")
    if err == errno.ENOENT:
        return FileReadError("missing", f"file does not exist: {path}")
    if err in (errno.EACCES, errno.EPERM):
        return FileReadError("permission", f"permission denied: {path}")
    if phase == "open" and err == errno.ELOOP:  # swapped for a symlink since realpath
        return FileReadError("outside_roots", f"{path} changed while reading")
    return FileReadError("missing", f"cannot {phase} {path}: {os.strerror(err or 0)}")
