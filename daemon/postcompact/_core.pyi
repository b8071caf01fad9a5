"""Typed surface of the Rust extension `postcompact._core` (checked by mypy.stubtest)."""

from collections.abc import Iterable, Sequence
from os import PathLike
from typing import ClassVar, final, overload

# The module's __all__ (PyO3 adds every registered name); stubtest checks it is complete.
__all__ = [
    "ENCODINGS",
    "Charge",
    "Decision",
    "FileOutcome",
    "FileState",
    "FileStateCache",
    "FileTemplates",
    "Framed",
    "LineDiff",
    "Ranged",
    "ReadAnswer",
    "ReadPlan",
    "ReadRefused",
    "ReadSpec",
    "ReadTokensExceeded",
    "Refusal",
    "RefusalKind",
    "RestorePlan",
    "RestoreSpec",
    "RestoredFile",
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
    "file_blocks",
    "held_bytes",
    "json_utf16_len",
    "line_diff",
    "number_lines",
    "page_marker",
    "read_file",
    "read_range",
    "read_tool_result",
    "read_whole",
    "realpath",
    "restore_files",
    "truncate_batch",
    "truncate_to_tokens",
    "truncation_marker",
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
# `LruCache` (the same LRU over arbitrary values with explicit sizes), which only the benchmarks
# use, is not here: it is `postcompact_bench_lru` (bench/lru_py), outside the product.

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

# --- textops: number_lines, json_utf16_len, estimate_from_utf16_len ---
# (rust_core/src/py/py_textops.rs, textops.rs)
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

# --- fsutil: realpath, read_whole, read_range (rust_core/src/py/py_fsutil.rs, diskread.rs) ---

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

# --- fileanswer: restore_files, read_file, the renderer (rust_core/src/py/py_fileanswer.rs) ---
#
# The one renderer of a file as the model sees it (rust_core/src/fileview.rs): a restored
# file's blocks — the Read call (its input as JSON, escaped, wrapped), the Read result (the
# text numbered from its first line, closing reminder tags escaped, then the marker and the
# malware reminder; a byte-order mark on line 1 not shown; the empty-file or past-the-end
# warning when there is no text), the note when tags were escaped — and ReadFile's tool result
# (the same text, not escaped). Texts are decoded as bytes.decode("utf-8", "replace") does;
# templates are the `render.Templates` str.format strings.

@final
class Framed:
    """A restored file's attachment as `CompactResponse.attachments` bytes (key, length, the
    message), as the core wrote them: read through the buffer protocol (`b"".join`,
    `memoryview`), or copied with `bytes()`."""

    def __len__(self) -> int: ...
    def __bytes__(self) -> bytes: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...

@final
class FileTemplates:
    """The templates of a file's blocks and of a Read tool result (the `render.Templates`
    fields of the same names), parsed."""

    def __new__(
        cls,
        *,
        system_reminder: str,
        read_call: str,
        read_result: str,
        read_path_key: str,
        malware_reminder: str,
        empty_file_warning: str,
        offset_beyond_end_warning: str,
        escaped_note: str,
        read_page_marker: str,
    ) -> FileTemplates: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __ne__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class RestorePlan:
    """What a restoration does with each file: the templates and the truncation marker's
    template (`{path}`, `{shown_lines}`, `{total_lines}`, `{next_offset}`), whether the malware
    reminder follows the text, the per-file cap (`max_tokens`), the byte cap of a whole read and
    the leading bytes sniffed for NUL first, the `OversizePolicy`, the counter (exact with its
    encoding, else rough), the profile's rules (`cap_rendered`: cap a whole file as the model
    sees it; `api_units`: Claude Code's countTokens estimate, UTF-16 units a token) and whether
    `FileAttachment.content` is filled."""

    def __new__(
        cls,
        *,
        templates: FileTemplates,
        marker: str,
        malware: bool,
        max_tokens: int,
        max_bytes: int,
        sniff_bytes: int,
        oversize: int,
        exact: bool,
        encoding: str,
        cap_rendered: bool,
        api_units: int | None,
        include_content: bool,
    ) -> RestorePlan: ...

@final
class FileOutcome:
    """What became of a restored file."""

    RESTORED: ClassVar[FileOutcome]  # attached whole (its range whole)
    TRUNCATED: ClassVar[FileOutcome]  # attached cut to the cap, with the marker
    REFERENCED: ClassVar[FileOutcome]  # over a cap: to be noted by name
    DROPPED: ClassVar[FileOutcome]  # over a cap: left out (OVERSIZE_POLICY_SKIP)
    def __int__(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __ne__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class RestoreSpec:
    """One file for `restore_files`: its path (`FileAttachment.path`, and what the blocks name),
    the path to open (its symlinks resolved and checked by the caller, or none on the way), its
    display path, whether its name is binary; the lines to restore (`ranged`: lines `first`..,
    `limit` of them, the whole file when that range is now past its end); the content the cache
    held, and the file as the last compaction restored it whole from that content with the same
    inputs (read back unchanged, it is not rendered again)."""

    def __new__(
        cls,
        *,
        path: str,
        real: str,
        display: str,
        binary_name: bool,
        first: int = 1,
        limit: int | None = None,
        ranged: bool = False,
        held: bytes | None = None,
        prior: RestoredFile | None = None,
    ) -> RestoreSpec: ...
    @property
    def path(self) -> str: ...
    @property
    def real(self) -> str: ...
    @property
    def display(self) -> str: ...
    @property
    def binary_name(self) -> bool: ...
    @property
    def first(self) -> int: ...
    @property
    def limit(self) -> int | None: ...
    @property
    def ranged(self) -> bool: ...
    @property
    def held(self) -> bytes | None: ...
    @property
    def prior(self) -> RestoredFile | None: ...

@final
class RestoredFile:
    """What `restore_files` made of a file.

    Attached (RESTORED, TRUNCATED): `framed` is its `Attachment` as `CompactResponse.attachments`
    bytes (kind FILE, placement USER, `tokens` the rough estimate of its blocks joined by "\\n",
    the blocks, the `FileAttachment`: path, display path, the text when the plan includes
    content, whether cut, the file's lines, the lines attached, the first line); `content` the
    cache entry's bytes (the bytes read — the object the cache held when they are the same — or
    the head of them attached), to be held from `start_line` with `seed_limit`; `json_units` the
    UTF-16 units of `JSON.stringify` of the text attached and its marker; `content_tokens` the
    rough estimate of `content`; `reused`: read back unchanged, the spec's prior again (its
    attachment and measures, the mtime now).

    Why (every outcome): `measured`, the tokens weighed against the cap and whether over it;
    `over_size` (the whole file is over the byte cap: only a head of it was read); `ranged` (the
    range asked for, of `range_lines` lines, not the whole file); `no_room` (not even the marker
    fits the cap); `cut` (attached cut to the cap)."""

    @property
    def outcome(self) -> FileOutcome: ...
    @property
    def attached(self) -> bool:
        """RESTORED or TRUNCATED: `framed` and `content` are set."""
    @property
    def framed(self) -> Framed | None: ...
    @property
    def content(self) -> bytes | None: ...
    @property
    def mtime_ns(self) -> int: ...
    @property
    def total_lines(self) -> int: ...
    @property
    def start_line(self) -> int: ...
    @property
    def num_lines(self) -> int: ...
    @property
    def seed_limit(self) -> int | None: ...
    @property
    def tokens(self) -> int: ...
    @property
    def measured(self) -> int: ...
    @property
    def over_cap(self) -> bool: ...
    @property
    def over_size(self) -> bool: ...
    @property
    def ranged(self) -> bool: ...
    @property
    def range_lines(self) -> int: ...
    @property
    def no_room(self) -> bool: ...
    @property
    def cut(self) -> bool: ...
    @property
    def json_units(self) -> int: ...
    @property
    def content_tokens(self) -> int: ...
    @property
    def reused(self) -> bool: ...

def restore_files(
    specs: Sequence[RestoreSpec], plan: RestorePlan, *, inline_max: int | None = None
) -> list[RestoredFile | Refusal]:
    """Compact's restored files in one call, read and rendered without the GIL: per spec, what
    became of it, or the read's `Refusal` (WOULD_BLOCK: `inline_max` set, the read would wait
    for the disk or the file is larger; retry on a thread).

    A range is capped as the model sees it, and so is a whole file under `cap_rendered`: the
    attachment's `tokens`, and with the exact counter or a JSON file the counter's count of its
    blocks, at most the cap; over it (or a head the agent saw of a longer file, or a file over
    the byte cap), the most whole lines that fit with the marker, else as much of the first line
    as fits, else REFERENCED (OVERSIZE_POLICY_REFERENCE: at once; SKIP: DROPPED). Otherwise a
    whole file is capped as Claude Code measures its text and cut to the longest head within the
    cap with the marker."""

@final
class ReadPlan:
    """What ReadFile does with a file: the templates, the malware reminder, `max_read_tokens`
    (a whole read over it is answered with its first page when `page`, else refused), the byte
    cap of a whole read and the bytes sniffed for NUL, the counter, Claude Code's countTokens
    estimate (`api_units`)."""

    def __new__(
        cls,
        *,
        templates: FileTemplates,
        malware: bool,
        max_tokens: int,
        max_bytes: int,
        sniff_bytes: int,
        exact: bool,
        encoding: str,
        api_units: int | None,
        page: bool,
    ) -> ReadPlan: ...

@final
class ReadSpec:
    """One ReadFile for `read_file`: the path to open, whether its name is binary, the answer's
    path, lines [start, start+limit) (from line 1 without a limit: the whole file), the entry's
    timestamp (None: the file's mtime in ms), and the largest answer (None: any)."""

    def __new__(
        cls,
        *,
        real: str,
        binary_name: bool,
        path: str,
        start: int = 1,
        limit: int | None = None,
        timestamp_ms: int | None = None,
        max_answer: int | None = None,
    ) -> ReadSpec: ...
    @property
    def real(self) -> str: ...
    @property
    def binary_name(self) -> bool: ...
    @property
    def path(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def limit(self) -> int | None: ...
    @property
    def timestamp_ms(self) -> int | None: ...
    @property
    def max_answer(self) -> int | None: ...

@final
class ReadAnswer:
    """ReadFile's answer: `wire` is the `ReadFileResponse` (`path`, `text` — the tool result —,
    `content`, `timestamp_ms`, the lines, `tokens`: the rough estimate of `text`, `partial`);
    `content` the bytes answered (a first page's when `partial`)."""

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
    def partial(self) -> bool: ...

@final
class ReadTokensExceeded:
    """A whole ReadFile over `max_read_tokens`, refused: the file's tokens."""

    @property
    def tokens(self) -> int: ...

def read_file(
    spec: ReadSpec, plan: ReadPlan, *, inline_max: int | None = None
) -> ReadAnswer | Refusal | ReadTokensExceeded:
    """ReadFile's answer, read and rendered without the GIL: the lines asked for as the Read
    tool shows them, or the first page of a whole read over the token limit (the longest head
    of whole lines within it, with the page marker); the read's `Refusal` (as `read_whole` and
    `read_range`, ANSWER_TOO_LARGE over the spec's `max_answer`); or ReadTokensExceeded."""

def file_blocks(
    templates: FileTemplates,
    path: str,
    text: str,
    *,
    total_lines: int,
    malware: bool = True,
    marker: str = "",
    start_line: int = 1,
    read_limit: int | None = None,
) -> list[str]:
    """A restored file's blocks of `text` (lines `start_line`.. of a file of `total_lines`),
    as `restore_files` renders them; a range (`start_line` > 1) has the offset and `read_limit`
    in its Read call."""

def read_tool_result(
    templates: FileTemplates,
    text: str,
    *,
    start_line: int = 1,
    total_lines: int = 0,
    malware: bool = True,
    marker: str = "",
) -> str:
    """A Read tool result of `text`, as `read_file` renders it."""

def truncation_marker(template: str, path: str, *, shown_lines: int, total_lines: int) -> str:
    """A truncation marker (the path made safe for a note), as `restore_files` renders it."""

def page_marker(
    templates: FileTemplates,
    path: str,
    *,
    shown_lines: int,
    total_lines: int,
    tokens: int,
    max_tokens: int,
) -> str:
    """The note after the first page of a whole ReadFile, as `read_file` renders it."""

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
