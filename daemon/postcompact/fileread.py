"""The daemon's file-read backend for ReadFile and restoration's re-reads (DESIGN.md §4, §5).

`read_text` is synchronous; callers run it with `asyncio.to_thread` to read several files in
parallel. It never follows a symlink out of the session roots, never opens a device, FIFO or
socket, refuses binaries (by extension, then by a NUL byte in the first 8 KiB) and files matching
a deny glob, and reads a whole file only when it is within `max_bytes`.

Line model (Claude Code's `readFileInRange`): a file is split on "\\n"; a trailing newline
leaves a final empty line, so "a\\nb\\n" has 3 lines and an empty file has 0 (postcompact's
choice, so that an empty file gets the reference's empty-file warning). `content` is the exact
bytes of the selected lines (CRLF kept inside the range, the terminator of the last selected line
excluded), so a whole read of a file returns the file's bytes unchanged; rendering splits lines on
`\\r?\\n` as Claude Code does. Bytes are not decoded here: renderers decode with replacement, as
Node's utf8 decoding does.
"""

from __future__ import annotations

import errno
import fnmatch
import functools
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from postcompact import _core

__all__ = [
    "BINARY_EXTENSIONS",
    "DEFAULT_DENY_GLOBS",
    "SNIFF_BYTES",
    "FileReadError",
    "FileReadErrorKind",
    "ReadScope",
    "TextFile",
    "effective_deny_globs",
    "is_denied",
    "read_text",
    "realpath",
    "resolve_roots",
    "within_roots",
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
_CHUNK = 1 << 16


class FileReadError(Exception):
    """A read refused or failed; `kind` is machine-readable, `message` names the path."""

    def __init__(self, kind: FileReadErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: FileReadErrorKind = kind
        self.message = message


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


def within_roots(real_path: str, real_roots: Iterable[str]) -> bool:
    """True when `real_path` is one of the roots or below one (both already resolved)."""
    for root in real_roots:
        if real_path == root:
            return True
        prefix = root if root.endswith(os.sep) else root + os.sep
        if real_path.startswith(prefix):
            return True
    return False


def effective_deny_globs(configured: Iterable[str] = ()) -> tuple[str, ...]:
    """The deny globs every read path applies: the defaults, then the configured ones (the
    configuration adds to the defaults, it cannot remove them)."""
    return tuple(dict.fromkeys((*DEFAULT_DENY_GLOBS, *configured)))


@functools.lru_cache(maxsize=32)
def _deny_pattern(deny_globs: tuple[str, ...]) -> re.Pattern[str]:
    """One regex matching what any of `deny_globs` matches (`fnmatch.fnmatchcase` semantics)."""
    return re.compile("|".join(fnmatch.translate(glob) for glob in deny_globs))


def is_denied(paths: Iterable[str], deny_globs: Sequence[str]) -> str | None:
    """The first glob matching one of `paths` or its base name (case-sensitive), or None."""
    if not deny_globs:
        return None
    paths = tuple(paths)
    match = _deny_pattern(tuple(deny_globs)).match
    if not any(match(p) or match(os.path.basename(p)) for p in paths):
        return None
    for path in paths:  # a hit: name the first glob, in order
        base = os.path.basename(path)
        for glob in deny_globs:
            if fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(base, glob):
                return glob
    return None


def realpath(path: str) -> str:
    """`os.path.realpath(path)`, resolved in the core where it can (`_core.realpath`)."""
    real = _core.realpath(path)
    return os.path.realpath(path) if real is None else real


def resolve_roots(roots: Iterable[str]) -> tuple[str, ...]:
    """The real paths of `roots`, as `read_text` checks against."""
    return tuple(realpath(r) for r in roots)


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
            base = _core.realpath(head)
            if base is None:
                return os.path.realpath(path)
            self.real_dirs[head] = base
        real = _core.realpath(tail, base)
        return os.path.realpath(path) if real is None else real


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
) -> TextFile:
    """Read lines [offset, offset+limit) (1-based; default the whole file) of a text file.

    - `path` must be absolute (callers expand it first); it and its real path must be inside a
      root, and neither may match a deny glob.
    - A whole-file read of a file larger than `max_bytes` raises `too_large`; a ranged read
      (offset > 1 or a limit) streams and keeps only the range.
    - `head_bytes` (restoration's TRUNCATE_HEAD of a file over the size cap): read at most this
      many bytes of the range, cut back to a line boundary (or to a UTF-8 character boundary when
      the first line alone is longer), and set `truncated`. `total_lines` is still exact.
    - `scope`: `ReadScope.of(roots)`, shared by a caller reading several files.
    """
    if not path or "\0" in path:
        raise FileReadError("invalid_path", f"invalid path {path!r}")
    if not os.path.isabs(path):
        raise FileReadError("invalid_path", f"path is not absolute: {path}")
    if offset is not None and offset < 1:
        raise FileReadError("invalid_range", f"offset must be at least 1, got {offset}")
    if limit is not None and limit < 1:
        raise FileReadError("invalid_range", f"limit must be at least 1, got {limit}")

    requested = os.path.normpath(path)
    if scope is None:
        scope = ReadScope.of(roots)
    real = scope.realpath(requested)
    real_roots = scope.real_roots
    if not within_roots(real, real_roots):
        raise FileReadError("outside_roots", f"{path} is outside the session roots")
    glob = is_denied(dict.fromkeys((requested, real)), deny_globs)
    if glob is not None:
        raise FileReadError("denied", f"{path} matches the deny rule {glob!r}")

    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise FileReadError("missing", f"file does not exist: {path}") from None
    except PermissionError:
        raise FileReadError("permission", f"permission denied: {path}") from None
    except OSError as exc:
        raise FileReadError("missing", f"cannot stat {path}: {exc.strerror}") from None
    _check_kind(path, st.st_mode)

    ext = os.path.splitext(real)[1].lower()
    if ext in BINARY_EXTENSIONS:
        raise FileReadError("binary", f"{path} is a binary file ({ext})")

    ranged = (offset is not None and offset > 1) or limit is not None
    if not ranged and head_bytes is None and st.st_size > max_bytes:
        raise FileReadError(
            "too_large",
            f"{path} is {st.st_size} bytes, over the {max_bytes}-byte limit; "
            "read it with an offset and limit",
        )

    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        raise FileReadError("missing", f"file does not exist: {path}") from None
    except PermissionError:
        raise FileReadError("permission", f"permission denied: {path}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # swapped for a symlink since realpath
            raise FileReadError("outside_roots", f"{path} changed while reading") from None
        raise FileReadError("missing", f"cannot open {path}: {exc.strerror}") from None
    try:
        fst = os.fstat(fd)
        _check_kind(path, fst.st_mode)
        if (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
            raise FileReadError("outside_roots", f"{path} changed while reading")
        return _read_open(fd, path, real, fst, offset or 1, limit, max_bytes, ranged, head_bytes)
    except OSError as exc:
        raise FileReadError("permission", f"cannot read {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _check_kind(path: str, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise FileReadError("directory", f"{path} is a directory")
    if not stat.S_ISREG(mode):
        raise FileReadError("device", f"{path} is not a regular file (device, FIFO or socket)")


def _read_open(
    fd: int,
    path: str,
    real: str,
    st: os.stat_result,
    start: int,
    limit: int | None,
    max_bytes: int,
    ranged: bool,
    head_bytes: int | None,
) -> TextFile:
    mtime_ms = st.st_mtime_ns // 1_000_000
    binary = FileReadError("binary", f"{path} is a binary file (contains NUL bytes)")

    if not ranged and head_bytes is None:
        # The whole file in one read (its size is known), one more to see the end; the sniff
        # of the first SNIFF_BYTES comes first, as if they had been read on their own.
        data = _read_all(fd, max_bytes + 1, first=st.st_size + 1)
        if b"\0" in data[:SNIFF_BYTES]:
            raise binary
        if len(data) > max_bytes:  # grew since stat
            raise FileReadError(
                "too_large", f"{path} is over the {max_bytes}-byte limit; read it with a range"
            )
        if b"\0" in data:
            raise binary
        total = data.count(b"\n") + 1 if data else 0
        return TextFile(real, data, mtime_ms, total, 1, total, len(data))

    first = os.read(fd, SNIFF_BYTES)
    if b"\0" in first:
        raise binary

    # Pass 1: count lines and find the byte offsets where line `start` and line `end` begin.
    end = None if limit is None else start + limit  # exclusive, 1-based
    start_off: int | None = 0 if start == 1 else None
    end_off: int | None = None
    line = 1  # the line the next byte belongs to
    base = 0
    chunk = first
    while chunk:
        if b"\0" in chunk:
            raise binary
        if start_off is not None and (end is None or end_off is not None):
            line += chunk.count(b"\n")
        else:
            i = chunk.find(b"\n")
            while i >= 0:
                line += 1
                if line == start:
                    start_off = base + i + 1
                if line == end:
                    end_off = base + i + 1
                i = chunk.find(b"\n", i + 1)
        base += len(chunk)
        chunk = os.read(fd, _CHUNK)
    size = base
    total = line if size else 0
    if start_off is None or start > total:
        return TextFile(real, b"", mtime_ms, total, start, 0, size)

    # Pass 2: read the range. A range ending before EOF excludes its last line's terminator.
    stop = size if end_off is None else end_off - 1
    want = stop - start_off
    truncated = head_bytes is not None and want > head_bytes
    if truncated:
        assert head_bytes is not None
        buf = os.pread(fd, head_bytes + 1, start_off)
        cut = buf.rfind(b"\n", 0, head_bytes + 1)
        if cut <= 0:  # the first line alone is over the cap: cut on a UTF-8 boundary
            cut = min(head_bytes, len(buf))
            while 0 < cut < len(buf) and (buf[cut] & 0xC0) == 0x80:
                cut -= 1
        content = buf[:cut]
    else:
        content = os.pread(fd, want, start_off)
    if end_off is not None or truncated:
        content = content.removesuffix(b"\r")
    if truncated:
        num_lines = content.count(b"\n") + 1
    elif end is None:
        num_lines = total - start + 1
    else:
        num_lines = min(end, total + 1) - start
    return TextFile(real, content, mtime_ms, total, start, num_lines, size, truncated)


def _read_all(fd: int, limit: int, first: int = _CHUNK) -> bytes:
    """Up to `limit` bytes to EOF; the first read asks for `first` bytes, later ones _CHUNK."""
    parts: list[bytes] = []
    remaining = limit
    want = max(first, 1)
    while remaining > 0:
        chunk = os.read(fd, min(want, remaining))
        want = _CHUNK
        if not chunk:
            break
        parts.append(chunk)
        remaining -= len(chunk)
    return b"".join(parts)
