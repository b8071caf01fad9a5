"""Typed surface of the Rust extension `postcompact._core` (checked by mypy.stubtest)."""

from collections.abc import Iterable, Sequence
from os import PathLike
from typing import ClassVar, final, overload

# The module's __all__ (PyO3 adds every registered name); stubtest checks it is complete.
__all__ = [
    "ENCODINGS",
    "Charge",
    "Decision",
    "FileFrame",
    "FileState",
    "FileStateCache",
    "Framed",
    "LineDiff",
    "Ranged",
    "ReadAnswer",
    "ReadLimits",
    "ReadRefused",
    "ReadSpec",
    "Refusal",
    "RefusalKind",
    "RestoreSpec",
    "RestoredFile",
    "Skip",
    "Totals",
    "Whole",
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

__version__: str

# --- cache: FileState, FileStateCache, expand_path (rust_core/src/py/py_cache.rs) ---
#
# lru-cache 11 semantics throughout (Claude Code's readFileState): strict LRU bounded by entry
# count AND total size; an entry is accounted at max(1, its content's size); `get` promotes,
# `peek`/`has` do not; a state larger than max_size is not stored and removes any entry under its
# key; keys()/snapshot() are most recently used first. Values are held by reference: `get`
# returns the very object that was stored. Bad arguments raise ValueError.
#
# `LruCache` (the same LRU over arbitrary values with explicit sizes) exists only in a build with
# the core's `bench` feature, which the benchmarks and its tests use: its stub is
# tests/_bench_core.pyi.

def held_bytes() -> int:
    """Bytes of content held by live `FileState`s and `Charge`s (the daemon's content ledger)."""

@final
class Charge:
    """`size` bytes counted in `held_bytes` for as long as this object lives."""

    def __new__(cls, size: int) -> Charge: ...
    @property
    def size(self) -> int: ...

@final
class FileState:
    """One file-state entry, immutable; `content` is the given bytes object, never copied."""

    def __new__(
        cls,
        content: bytes,
        timestamp: int,
        offset: int | None = None,
        limit: int | None = None,
        partial_view: bool = False,
    ) -> FileState: ...
    @property
    def content(self) -> bytes: ...
    @property
    def timestamp(self) -> int: ...
    @property
    def offset(self) -> int | None: ...
    @property
    def limit(self) -> int | None: ...
    @property
    def partial_view(self) -> bool: ...
    def same_but_time(self, other: FileState) -> bool:
        """Whether `other` equals this entry in all but its timestamp (the content compared by
        identity, then by value)."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class FileStateCache:
    """Claude Code's readFileState: FileState by normalised path (expand_path with the cache's
    cwd and home), sized by content bytes; defaults 100 entries, 25 MiB."""

    def __new__(
        cls,
        max_entries: int = 100,
        max_size: int = 26214400,
        cwd: str | None = None,
        home: str | None = None,
    ) -> FileStateCache: ...
    def set(self, path: str, state: FileState) -> str:
        """Store `state`; returns the key (the argument itself when already normalised)."""
    def get(self, path: str) -> FileState | None: ...
    def peek(self, path: str) -> FileState | None: ...
    def has(self, path: str) -> bool: ...
    def __contains__(self, path: object, /) -> bool: ...
    def delete(self, path: str) -> bool: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...
    @property
    def total_size(self) -> int: ...
    @property
    def evictions(self) -> int: ...
    @property
    def max_entries(self) -> int: ...
    @property
    def max_size(self) -> int: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def home(self) -> str | None: ...
    def normalize(self, path: str) -> str: ...
    def keys(self) -> list[str]: ...
    def snapshot(self) -> list[tuple[str, FileState]]: ...
    def load(self, entries: Iterable[tuple[str, FileState]]) -> None:
        """Replace the contents with (path, state) given most recently used first."""
    def clone(self) -> FileStateCache: ...
    def merge(self, other: FileStateCache) -> FileStateCache:
        """mergeFileStateCaches(self, other): other's entry wins when missing here or strictly
        newer; every path of other ends up most recently used."""

def expand_path(path: str, cwd: str, home: str | None = None) -> str:
    """Claude Code's expandPath: trim, refuse NUL, expand ~ (given home), resolve against cwd,
    normalise (no trailing slash), NFC. Returns `path` itself when already in that form."""

# --- tokens: estimate, count, truncate_to_tokens, batch forms (rust_core/src/py/py_tokens.rs) ---
#
# Rough estimate = Claude Code's roughTokenCountEstimation(ForFileType): round-half-up of the
# UTF-16 length (JavaScript `.length`) / 4, or / 2 when `ext` is json, jsonl or jsonc (any case,
# leading dot optional). Exact count = tiktoken's len(get_encoding(encoding).encode_ordinary(text))
# for "o200k_base" and "cl100k_base", offline; special tokens such as "<|endoftext|>" are text.
#
# Text may be `str` or UTF-8 `bytes`:
# - estimate/utf16_len of invalid UTF-8 count what JavaScript sees after a lossy decode: every
#   maximal invalid subpart becomes one U+FFFD, one unit (b"\xff\xfe" is 2 units, b"\xe6\x97" 1).
#   A lone surrogate in a `str` counts 1 unit, as in JavaScript.
# - count and truncate_to_tokens need valid UTF-8 bytes (ValueError otherwise); lone surrogates
#   in a `str` are counted as U+FFFD, as tiktoken does.
# Errors are ValueError: unknown encoding or counter, max_tokens < 0, a marker that alone needs
# more than max_tokens (checked whether or not the text needs cutting), invalid UTF-8 bytes;
# TypeError for an argument that is neither str nor bytes.

ENCODINGS: tuple[str, ...]

def utf16_len(text: str | bytes) -> int:
    """UTF-16 code units of `text` (JavaScript `.length`); O(1) for a str without astral
    characters."""

def estimate(text: str | bytes, ext: str | None = None) -> int:
    """Claude Code's rough token estimate: round(utf16_len(text) / (2 if ext is json, jsonl or
    jsonc else 4)), halves rounding up."""

def estimate_batch(items: Sequence[str | bytes], ext: str | None = None) -> list[int]:
    """[estimate(t, ext) for t in items]; releases the GIL for large bytes inputs."""

def count(text: str | bytes, encoding: str = "o200k_base") -> int:
    """Exact BPE tokens of `text`, equal to tiktoken's len(encode_ordinary(text)). Releases the
    GIL above 8 KB."""

def count_batch(texts: Sequence[str | bytes], encoding: str = "o200k_base") -> list[int]:
    """[count(t, encoding) for t in texts], without the GIL (above 8 KB in total) and on several
    threads above 256 KB."""

# truncate_to_tokens: head-truncate `text` to `max_tokens`, the marker included; the result has
# the input's type. Unchanged (the same object) when it fits: counter "rough": estimate(text) <=
# max_tokens; "exact": count(text, encoding) <= max_tokens. Otherwise a prefix of `text` plus
# `marker`: rough keeps max_tokens * 4 - utf16_len(marker) UTF-16 units (Claude Code's
# truncateToTokens; one unit fewer when the cut would split a surrogate pair); exact keeps the
# longest prefix whose count with the marker appended stays within max_tokens. Never splits a
# character, never exceeds the budget. truncate_batch maps it over `texts`; with the exact
# counter it runs without the GIL and on several threads when the batch is large.
@overload
def truncate_to_tokens(
    text: str,
    max_tokens: int,
    marker: str = "",
    counter: str = "rough",
    encoding: str = "o200k_base",
) -> str: ...
@overload
def truncate_to_tokens(
    text: bytes,
    max_tokens: int,
    marker: str = "",
    counter: str = "rough",
    encoding: str = "o200k_base",
) -> bytes: ...
@overload
def truncate_batch(
    texts: Sequence[str],
    max_tokens: int,
    marker: str = "",
    counter: str = "rough",
    encoding: str = "o200k_base",
) -> list[str]: ...
@overload
def truncate_batch(
    texts: Sequence[bytes],
    max_tokens: int,
    marker: str = "",
    counter: str = "rough",
    encoding: str = "o200k_base",
) -> list[bytes]: ...
@overload
def truncate_batch(
    texts: Sequence[str | bytes],
    max_tokens: int,
    marker: str = "",
    counter: str = "rough",
    encoding: str = "o200k_base",
) -> list[str | bytes]: ...

# --- render: number_lines, json_utf16_len, estimate_from_utf16_len (rust_core/src/py/py_render.rs)
#
# The data-heavy part of a Read result and of a file's budget cost. `str` input is used as is
# (lone surrogates raise UnicodeEncodeError where noted); `bytes` input is decoded like
# bytes.decode("utf-8", "replace"). Large inputs (64 KB and more) run without the GIL.

def number_lines(text: str | bytes, start_line: int = 1) -> str:
    """Claude Code's addLineNumbers: every line of `text` (split on \\r?\\n) as f"{n}\\t{line}",
    numbered from `start_line`, joined by "\\n"; "" for empty text. UnicodeEncodeError for a str
    with lone surrogates."""

def escape_reminder_tags(text: str, opening: bool = False) -> str | None:
    """`text` with the `<` of each closing `</system-reminder` tag (with `opening`, each opening
    one too), any case, spaces allowed around the `/`, written as `&lt;`; None when there is
    none. UnicodeEncodeError for a str with lone surrogates."""

def json_utf16_len(text: str | bytes) -> int:
    """len(JSON.stringify(text)) in UTF-16 units, quotes included, without building the JSON
    (lone surrogates in a str count 6, as well-formed JSON.stringify escapes them)."""

def estimate_from_utf16_len(units: int, ext: str | None = None) -> int:
    """estimate() of a text whose UTF-16 length is `units` (ValueError when negative)."""

# --- linediff: line_diff, LineDiff (rust_core/src/py/py_linediff.rs, linediff.rs) ---
#
# Lines as the daemon counts them (state/seen.py): the text between "\n"s, the empty line after
# a final "\n" included, none in empty content; numbers are 1-based and ranges inclusive.

@final
class LineDiff:
    """What a write changed: the old and the new content trimmed of their common leading and
    trailing lines, one changed region between them."""

    @property
    def old_lines(self) -> int: ...
    @property
    def new_lines(self) -> int: ...
    @property
    def changed(self) -> list[tuple[int, int]]:
        """The new content's lines the write added or changed, as (first, last) ranges: one, or
        none when it changed nothing or only deleted lines."""

    def map_span(self, first: int, last: int) -> tuple[int, int] | None:
        """Old lines first..last in the new content: a line before the change keeps its number,
        one after it shifts by the change in length, the changed region's lines map to its new
        lines (a span overlapping it then covers it); a span deleted whole becomes the lines
        around the deletion. None when the new content has no line; ValueError unless
        1 <= first <= last."""

def line_diff(old: bytes, new: bytes) -> LineDiff:
    """The change from `old` to `new`, by lines; without the GIL from 64 KB of input on."""

# --- fsutil: realpath, read_whole, read_range (rust_core/src/py/py_fsutil.rs, readfile.rs) ---

def realpath(path: str | PathLike[str], base: str | PathLike[str] | None = None) -> str | None:
    """os.path.realpath(path) for an absolute path; None where the caller must use Python's
    (a relative path, a symlink loop, a link that cannot be read). With `base`, a real absolute
    directory (an earlier result), `path` is relative to it: realpath(base + "/" + path), looking
    up only `path`'s own components."""

@final
class RefusalKind:
    """Why a read was refused or failed."""

    STAT: ClassVar[RefusalKind]  # stat failed (with the errno)
    DIRECTORY: ClassVar[RefusalKind]
    DEVICE: ClassVar[RefusalKind]  # a device, FIFO or socket: not a regular file
    BINARY_NAME: ClassVar[RefusalKind]  # `binary_name` was set
    TOO_LARGE: ClassVar[RefusalKind]  # over `max_bytes` at stat time (with the size)
    WOULD_BLOCK: ClassVar[RefusalKind]  # an inline read that would wait: retry on a thread
    OPEN: ClassVar[RefusalKind]  # open failed (with the errno)
    CHANGED: ClassVar[RefusalKind]  # not the file stat saw, or the path holds a symlink now
    BINARY: ClassVar[RefusalKind]  # a NUL byte
    GREW: ClassVar[RefusalKind]  # past `max_bytes` since stat
    ANSWER_TOO_LARGE: ClassVar[RefusalKind]  # over `max_answer` (with the bytes it would take)
    READ: ClassVar[RefusalKind]  # read failed (with the errno)
    def __int__(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __ne__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Refusal:
    """A read refused or failed: its kind, and the errno (STAT, OPEN, READ) or the size
    (TOO_LARGE, ANSWER_TOO_LARGE) that goes with it (0 otherwise)."""

    @property
    def kind(self) -> RefusalKind: ...
    @property
    def errno(self) -> int: ...
    @property
    def size(self) -> int: ...

class ReadRefused(Exception):
    """A read refused or failed: args are (refusal,), a `Refusal`; see `read_whole`."""

@final
class Whole:
    """What `read_whole` read: the file's bytes, its mtime, its size and its lines (newlines
    + 1, 0 when empty)."""

    @property
    def content(self) -> bytes: ...
    @property
    def mtime_ns(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def total_lines(self) -> int: ...

def read_whole(
    path: str | PathLike[str],
    max_bytes: int,
    sniff_bytes: int,
    binary_name: bool = False,
    inline_max: int | None = None,
) -> Whole:
    """Read the regular file at `path` (a real path) whole, without the GIL.

    Raises ReadRefused(refusal): STAT / OPEN / READ (with the errno), DIRECTORY, DEVICE (not a
    regular file), BINARY_NAME (`binary_name` was set), TOO_LARGE (over `max_bytes` at stat
    time, with the size), WOULD_BLOCK (`inline_max` set: the file is larger, or a byte is not in
    the page cache: preadv2 RWF_NOWAIT), CHANGED (the file opened is not the one stat saw),
    BINARY (a NUL byte: in the first `sniff_bytes`, or anywhere once the size is within
    `max_bytes`), GREW (past `max_bytes` since stat)."""

@final
class Ranged:
    """What `read_range` read: the range's bytes, the file's mtime, size and lines, the range's
    lines, and whether `head_bytes` cut it short."""

    @property
    def content(self) -> bytes: ...
    @property
    def mtime_ns(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def total_lines(self) -> int: ...
    @property
    def num_lines(self) -> int: ...
    @property
    def truncated(self) -> bool: ...

def read_range(
    path: str | PathLike[str],
    start: int,
    limit: int | None,
    head_bytes: int | None,
    sniff_bytes: int,
    binary_name: bool = False,
    inline_max: int | None = None,
    max_answer: int | None = None,
) -> Ranged:
    """Read lines [start, start+limit) (1-based; limit None: to the end) of the regular file at
    `path` (a real path), streaming, without the GIL. The range excludes its last line's
    terminator (and a "\\r" before it) when it ends before EOF; `head_bytes` cuts it to at most
    that many bytes at a line boundary (a UTF-8 character boundary when the first line is
    longer) and sets `truncated`. Raises ReadRefused as read_whole does (a NUL anywhere is
    BINARY; never TOO_LARGE or GREW), and ANSWER_TOO_LARGE (size: the bytes it would take)
    before reading a range whose answer — its bytes twice, as content and as numbered text,
    plus each line's number — would be over `max_answer` (not checked with `head_bytes`)."""

# --- fileanswer: restore_files, read_answer (rust_core/src/py/py_fileanswer.rs, fileanswer.rs) --

@final
class Framed:
    """A restored file's attachment as `CompactResponse.attachments` bytes (key, length, the
    message), as the core wrote them: read through the buffer protocol (`b"".join`,
    `memoryview`), or copied with `bytes()`."""

    def __len__(self) -> int: ...
    def __bytes__(self) -> bytes: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

@final
class Skip:
    """Why the core leaves a file it read to the caller's general path."""

    NOT_UTF8: ClassVar[Skip]
    EMPTY: ClassVar[Skip]  # nothing to number: the empty-file or past-the-end warning
    BOM: ClassVar[Skip]  # a byte-order mark on line 1
    ESCAPE: ClassVar[Skip]  # a closing reminder tag in the text
    HEAD_ONLY: ClassVar[Skip]  # a head was asked for and the file has more lines
    ANSWER_TOO_LARGE: ClassVar[Skip]  # a ReadFile answer over its `max_answer`
    def __int__(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __ne__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class ReadLimits:
    """How the core reads: the byte cap of a whole read, the leading bytes sniffed for NUL
    first, and (`inline_max`: an inline read, on the event loop) the largest file read, from
    the page cache only (else WOULD_BLOCK)."""

    def __new__(
        cls, *, max_bytes: int, sniff_bytes: int, inline_max: int | None = None
    ) -> ReadLimits: ...
    @property
    def max_bytes(self) -> int: ...
    @property
    def sniff_bytes(self) -> int: ...
    @property
    def inline_max(self) -> int | None: ...

@final
class FileFrame:
    """A restored file's result block around its numbered text: `prefix`, the text, `malware`
    ("" when the policy has none), `suffix` (the caller's templates, rendered)."""

    def __new__(cls, *, prefix: str, malware: str, suffix: str) -> FileFrame: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __ne__(self, other: object, /) -> bool: ...
    @property
    def prefix(self) -> str: ...
    @property
    def malware(self) -> str: ...
    @property
    def suffix(self) -> str: ...

@final
class RestoreSpec:
    """One file for `restore_files`: the real path to read (checked by the caller), whether its
    name is binary, the first line (1-based) and the limit (None: to the end), the attachment's
    path and display path, its first block (the Read call, wrapped); the content the cache held,
    and the file as the last compaction restored it from that content with the same inputs."""

    def __new__(
        cls,
        *,
        real: str | PathLike[str],
        binary_name: bool,
        start: int,
        limit: int | None,
        path: str,
        display: str,
        call_block: str,
        held: bytes | None = None,
        prior: RestoredFile | None = None,
    ) -> RestoreSpec: ...
    @property
    def real(self) -> str: ...
    @property
    def binary_name(self) -> bool: ...
    @property
    def start(self) -> int: ...
    @property
    def limit(self) -> int | None: ...
    @property
    def path(self) -> str: ...
    @property
    def display(self) -> str: ...
    @property
    def call_block(self) -> str: ...
    @property
    def held(self) -> bytes | None: ...
    @property
    def prior(self) -> RestoredFile | None: ...

@final
class RestoredFile:
    """A file `restore_files` restored: its attachment and its measures.

    `framed` is the file's `Attachment` as `CompactResponse.attachments` bytes (key, length,
    message): its kind (FILE) and placement (USER), `tokens` (the rough estimate of the blocks
    joined by "\\n", whose UTF-16 units are `blocks_units`), the blocks — the Read call block,
    then the frame's prefix, the text numbered from the first line, its malware and suffix — and
    the `FileAttachment` (path, display path, the text when `include_content`, the line counts, the
    first line). The text is the file's bytes with each line's ending "\\r" removed
    (`render.strip_cr`); `text_units` and `json_units` are the UTF-16 units of it and of its
    `JSON.stringify`. `content` is the bytes read: the object the cache held when they are the
    same. `reused`: they are, the spec gave its `prior`, and nothing was rendered: `framed` and
    the measures are the prior's."""

    @property
    def framed(self) -> Framed: ...
    @property
    def content(self) -> bytes: ...
    @property
    def mtime_ns(self) -> int: ...
    @property
    def total_lines(self) -> int: ...
    @property
    def num_lines(self) -> int: ...
    @property
    def tokens(self) -> int: ...
    @property
    def blocks_units(self) -> int: ...
    @property
    def text_units(self) -> int: ...
    @property
    def json_units(self) -> int: ...
    @property
    def reused(self) -> bool: ...

def restore_files(
    specs: Sequence[RestoreSpec],
    frame: FileFrame,
    limits: ReadLimits,
    *,
    include_content: bool,
) -> list[RestoredFile | Skip | Refusal]:
    """Compact's restored files in one call, read and rendered without the GIL: per spec, a
    `RestoredFile` (a user-placed file attachment), or why the caller's general
    path must take the file: the read's `Refusal` (WOULD_BLOCK for an inline read to retry on a
    thread), or a `Skip` (NOT_UTF8, EMPTY, BOM, ESCAPE, HEAD_ONLY). The file is read as
    `read_whole` reads it from line 1 (a limit then only bounds the lines: a file with more is
    HEAD_ONLY), else as `read_range`."""

@final
class ReadSpec:
    """One ReadFile answer for `read_answer`: the real path, whether its name is binary, the
    first line and the limit, the answer's path, what follows the numbered text (the malware
    reminder, or ""), the entry's timestamp (None: the file's mtime in ms), and the largest
    answer (None: any)."""

    def __new__(
        cls,
        *,
        real: str | PathLike[str],
        binary_name: bool,
        start: int,
        limit: int | None,
        path: str,
        malware: str,
        timestamp_ms: int | None,
        max_answer: int | None,
    ) -> ReadSpec: ...
    @property
    def real(self) -> str: ...
    @property
    def binary_name(self) -> bool: ...
    @property
    def start(self) -> int: ...
    @property
    def limit(self) -> int | None: ...
    @property
    def path(self) -> str: ...
    @property
    def malware(self) -> str: ...
    @property
    def timestamp_ms(self) -> int | None: ...
    @property
    def max_answer(self) -> int | None: ...

@final
class ReadAnswer:
    """ReadFile's answer: `wire` is the `ReadFileResponse` (`path`, `text` — the content
    numbered from the first line, lines split on "\\r?\\n", then the malware reminder —
    `content`, `timestamp_ms`, the lines, `tokens`: the rough estimate of `text`); `content` the
    bytes read; `text_units` the UTF-16 units of the content."""

    @property
    def wire(self) -> bytes: ...
    @property
    def content(self) -> bytes: ...
    @property
    def mtime_ns(self) -> int: ...
    @property
    def total_lines(self) -> int: ...
    @property
    def num_lines(self) -> int: ...
    @property
    def text_units(self) -> int: ...

def read_answer(spec: ReadSpec, limits: ReadLimits) -> ReadAnswer | Skip | Refusal:
    """ReadFile's answer for `spec`, read and rendered without the GIL, or why the caller's
    general path must take it: the read's `Refusal`, or a `Skip` (as `restore_files`, and
    ANSWER_TOO_LARGE: over the spec's `max_answer`)."""

# --- compactwire: compact_tail, Decision, Totals (rust_core/src/py/py_compactwire.rs) ---

@final
class Decision:
    """One decision of a Compact: a `Decision` message's fields (`detail` None: "")."""

    def __new__(
        cls,
        subject: int,
        name: str,
        outcome: int,
        tokens: int = 0,
        rank: int = 0,
        detail: str | None = None,
        content_tokens: int = 0,
    ) -> Decision: ...
    @property
    def subject(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def outcome(self) -> int: ...
    @property
    def tokens(self) -> int: ...
    @property
    def rank(self) -> int: ...
    @property
    def detail(self) -> str: ...
    @property
    def content_tokens(self) -> int: ...

@final
class Totals:
    """One category's totals of a Compact: a `CategoryTotals` message's fields."""

    def __new__(
        cls, category: str, attachments: int = 0, dropped: int = 0, tokens: int = 0
    ) -> Totals: ...
    @property
    def category(self) -> str: ...
    @property
    def attachments(self) -> int: ...
    @property
    def dropped(self) -> int: ...
    @property
    def tokens(self) -> int: ...

def compact_tail(decisions: Sequence[Decision], totals: Sequence[Totals], compaction: int) -> bytes:
    """`CompactResponse(decisions=..., totals=..., compaction=...)` serialised, byte for byte as
    the protobuf runtime writes it (fields in order, default values left out, negative numbers
    as ten-byte varints): the part of a Compact's answer after its attachments."""
