"""The daemon as the agents' file-read backend: ReadFile, RecordRead, RecordWrite, CheckWrite,
CheckStale (docs/claude-code.md §4; docs/profiles.md). The skills, plan, mode and tasks an agent
records are service/work.py's; the path rules below are SetPlan's too (`resolve_path`).

Paths. Every path a client names is resolved like Claude Code's `expandPath` (trim, `~`, relative
to the session cwd, normalise, NFC) and must lie inside the session's roots — or be one of the
session's memory files, which harnesses legitimately read from `~`. A path outside is
PERMISSION_DENIED (`PATH_OUTSIDE_ROOTS`), whether it was given absolute or as a relative path
escaping the roots; an empty path or one with a NUL byte is INVALID_ARGUMENT. The session's plans
directory counts as a root for its own files (`Session.read_roots`): a plan file there is read,
recorded and checked like a file of the roots.

Timestamps. The claude-code profiles: ReadFile stores the file's mtime (floor ms), as Claude Code
does. Default profile: ReadFile stores the read time (design chapter), and remembers the mtime it
saw in `AgentState.read_mtimes`, so the "unchanged" check compares the file's current mtime with
the mtime at that read (trusted only while the entry still carries that read's timestamp; otherwise
Claude Code's rule `entry.timestamp == mtime` applies).

The "unchanged" stub: ReadFile answers it for an unchanged range under the default and 2.1.88
profiles; current Claude Code returns the text again (`Rules.unchanged_stub`).

Lines seen. RecordWrite carries the span of lines the agent saw of the file over to the new
content and widens it by the lines the write changed: the request's `changed_lines` (each range
lines of the new content, at most `MAX_CHANGED_RANGES`: INVALID_ARGUMENT `BAD_CHANGED_LINES` or
`TOO_MANY_CHANGED_LINES` otherwise, naming the field), else the core's line diff against the
agent's entry when it holds the whole file (`state.seen.after_write`).

Carried read state (policy `carry_read_state`): after a compaction, CheckWrite allows a file that
has no entry but was fully read before the compaction, while its content on disk still has the
SHA-256 of what was read (`AgentState.carried_reads`).

Persistence. Each mutating call changes the agent in one unit of work (`Registry.mutate`),
which writes what it names through the store before the call returns. An entry re-created at
start-up whose content no longer matches the file on disk is in `AgentState.unverified`: it is
never "unchanged", and CheckWrite answers MODIFIED for it while the file exists
(docs/persistence.md).
"""

from __future__ import annotations

import dataclasses
import os
import re

from postcompact import core, diskaccess, failpoints, render
from postcompact.admission import reserve_answer
from postcompact.config import Config
from postcompact.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
)
from postcompact.paths import display_path, now_ms, within, within_roots
from postcompact.profiles import Rules
from postcompact.refusals import read_error
from postcompact.restore.policy import Policy
from postcompact.service.sessions import check_path_length
from postcompact.settings import Settings
from postcompact.state import AgentState, Change, Session, content_digest
from postcompact.state.registry import Registry
from postcompact.state.seen import (
    MAX_CHANGED_RANGES,
    after_write,
    bad_changed_lines,
    line_count,
    saw,
)
from postcompact.v1 import postcompact_pb2 as pb

# Bytes of a ReadFile answer besides the path, the content and the numbered text (its numbers,
# the tags): the room `max_answer` leaves (docs/reliability.md).
ANSWER_OVERHEAD = 1024

# Formatters and linters that rewrite files in place (docs/claude-code.md §4).
WRITE_COMMAND_MARKERS = re.compile(
    "|".join(
        [
            r"--write",
            r"--fix",
            r"--in-place",
            r"--auto-correct",
            r"\brun\s+format\b",
            r"\brun\s+fix\b",
            r"\b(yarn|pnpm)\s+format\b",
            r"\blint:file\b",
            r"\blint:fix\b",
            r"\bblack\b",
            r"\bisort\b",
            r"\bruff\s+format\b",
            r"\bcargo\s+(fmt|fix)\b",
            r"\brustfmt\b",
            r"\bgo\s+fmt\b",
            r"\bterraform\s+fmt\b",
            r"\bdprint\s+fmt\b",
            r"\bswiftformat\b",
            r"\bphpcbf\b",
        ]
    )
)
# Current Claude Code also gives the hint after an in-place sed.
SED_MARKERS = re.compile(r"\bg?sed\b[^|;&]*\s-[a-zA-Z]*i")


def mtime_ms(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns // 1_000_000
    except OSError:
        return None


def resolve_path(
    s: Session,
    raw: str,
    *,
    field: str = "path",
    memory_files: bool = True,
) -> str:
    """`raw` made absolute (`~`, cwd, `.`/`..`, NFC); PermissionDenied unless it is inside the
    session roots or its plans directory (`Session.read_roots`), or (with `memory_files`) one of
    the session's memory files."""
    if not raw or not raw.strip():
        raise InvalidArgument("PATH_REQUIRED", f"{field} must not be empty")
    if "\x00" in raw:
        raise InvalidArgument("PATH_HAS_NUL", f"{field} contains a NUL byte")
    check_path_length(field, raw)
    try:
        path: str = core.expand_path(raw, s.cwd, s.home)
    except ValueError as exc:
        raise InvalidArgument("BAD_PATH", f"{field}: {exc}") from None
    roots = tuple(s.read_roots)
    memory = memory_files and path in s.memory_paths
    if not any(within(path, r) for r in roots) and not memory:
        raise PermissionDenied(
            "PATH_OUTSIDE_ROOTS",
            f"{raw!r} resolves to {path}, outside the session's {_roots_named(roots)}",
            {"path": path},
        )
    return path


def _roots_named(roots: tuple[str, ...], shown: int = 3) -> str:
    """The roots for a message: a session may have hundreds, each up to 4 KiB."""
    if len(roots) <= shown:
        return f"roots {list(roots)}"
    return f"{len(roots)} roots ({', '.join(roots[:shown])}, and {len(roots) - shown} more)"


def check_utf8(field: str, data: bytes) -> str:
    """`data` decoded; INVALID_ARGUMENT `NOT_UTF8` naming `field` when it is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgument(
            "NOT_UTF8", f"{field} is not valid UTF-8 (byte {exc.start})", {"field": field}
        ) from None


def _range(offset: int | None, limit: int | None) -> None:
    if offset is not None and offset < 1:
        raise InvalidArgument("BAD_OFFSET", f"offset is 1-based and must be >= 1, got {offset}")
    if limit is not None and limit < 1:
        raise InvalidArgument("BAD_LIMIT", f"limit must be >= 1, got {limit}")


def _check_entry(a: AgentState, path: str, expected: int) -> None:
    """FAILED_PRECONDITION `WRITE_CONFLICT` unless the agent's entry for `path` is still the one
    a CheckWrite answered with (its timestamp; 0: no entry)."""
    entry = a.files.peek(path)
    current = entry.timestamp if entry is not None else 0
    if current != expected:
        raise FailedPrecondition(
            "WRITE_CONFLICT",
            f"{path}: the agent's read state changed since the check this write is based on "
            f"(entry timestamp {current}, expected {expected}): another read or write of it was "
            "recorded in between; nothing was recorded. Read the file again and redo the edit",
            {"path": path, "entry_timestamp_ms": str(current)},
        )


def _changed_lines(req: pb.RecordWriteRequest) -> list[tuple[int, int]] | None:
    """The lines of the new content the request names as changed (None: not named, the daemon
    diffs); INVALID_ARGUMENT unless each range is lines of that content."""
    if not req.HasField("changed_lines"):
        return None
    ranges = req.changed_lines.ranges
    if len(ranges) > MAX_CHANGED_RANGES:
        raise InvalidArgument(
            "TOO_MANY_CHANGED_LINES",
            f"changed_lines.ranges has {len(ranges)} ranges, over {MAX_CHANGED_RANGES}",
            {"field": "changed_lines.ranges", "limit": str(MAX_CHANGED_RANGES)},
        )
    pairs = [(r.first, r.last) for r in ranges]
    bad = bad_changed_lines(pairs, line_count(req.content))
    if bad is not None:
        field = f"changed_lines.ranges[{bad[0]}]"
        raise InvalidArgument("BAD_CHANGED_LINES", f"{field}: {bad[1]}", {"field": field})
    return pairs


def _timestamp(value: int, field: str = "timestamp_ms") -> int:
    if value < 0:
        raise InvalidArgument("BAD_TIMESTAMP", f"{field} must be >= 0 (0 = now), got {value}")
    return value or now_ms()


def session_policy(s: Session, settings: Settings) -> Policy:
    """The session's resolved policy (daemon config, then the session's, over its profile)."""
    return settings.resolve(s.profile, s.policy)


def _mtime_seen(s: Session, a: AgentState, path: str, entry: core.FileState) -> int | None:
    """The file's mtime as the read that made `entry` saw it, when known. Under the default
    profile an entry's timestamp is the read time, and a change in the same clock tick as the
    read has an mtime no later than it: the mtime the read saw is what tells."""
    mark = a.read_mtimes.get(path)
    if not s.rules.mtime_timestamps and mark is not None and mark[0] == entry.timestamp:
        return mark[1]
    return None


def _changed(s: Session, a: AgentState, path: str, entry: core.FileState, current: int) -> bool:
    """Whether the file was modified since `entry` was read (docs/claude-code.md §4: its mtime is
    newer than the entry's timestamp; with the mtime the read saw, any other mtime)."""
    seen = _mtime_seen(s, a, path, entry)
    return current > entry.timestamp if seen is None else current != seen


class FileService:
    def __init__(self, registry: Registry, config: Config):
        self.registry = registry
        self.config = config
        self.settings = Settings.of(config)

    # --- ReadFile -----------------------------------------------------------------------------

    def _unchanged(self, s: Session, a: AgentState, path: str, entry: core.FileState) -> int | None:
        """The file's current mtime when the agent's view of it (`entry`) is current, else
        None."""
        if a.unverified.get(path) is entry:
            return None
        current = mtime_ms(path)
        if current is None:
            return None
        seen = _mtime_seen(s, a, path, entry)
        return current if current == (entry.timestamp if seen is None else seen) else None

    async def read_file(self, req: pb.ReadFileRequest) -> bytes | pb.ReadFileResponse:
        """ReadFile's answer: serialised by the core (`_answer`), or the message of the
        "unchanged" stub."""
        s, a = await self.registry.agent(req.session_id, req.agent_id)
        path = resolve_path(s, req.path)
        offset = req.offset if req.HasField("offset") else None
        limit = req.limit if req.HasField("limit") else None
        _range(offset, limit)
        offset = offset or 1
        deny = self.settings.deny_globs
        self._refuse_denied(path)  # before the unchanged stub: a denied path is never answered
        # peek: a read that fails below must not change the entry's recency (in memory only).
        entry = a.files.peek(path)
        current = (
            self._unchanged(s, a, path, entry)
            if entry is not None
            and s.rules.unchanged_stub
            and not entry.partial_view
            and entry.offset is not None
            and entry.offset == offset
            and entry.limit == limit
            else None
        )
        if entry is not None and current is not None:
            stub = s.templates.file_unchanged_stub
            # The stub is a use of the file. Under the default profile (timestamps are read
            # times) it is a read now: restoration ranks the file by it (docs/profiles.md).
            # Under claude-code-2.1.88 the timestamp stays the file's mtime; only the recency
            # moves.
            stamp = entry.timestamp
            async with self.registry.mutate(s, a, room=None) as change:
                if not s.rules.mtime_timestamps:
                    stamp = max(now_ms(), entry.timestamp)
                    a.files.set(path, core.FileState(entry.content, stamp, offset, limit, False))
                    a.read_mtimes[path] = (stamp, current)
                else:
                    a.files.get(path)
                change.files = True
                change.entry = path
            return pb.ReadFileResponse(
                path=path,
                unchanged=True,
                text=stub.encode(),
                timestamp_ms=stamp,
                start_line=offset,
                tokens=core.estimate(stub),
            )
        async with self.registry.mutate(s, a) as change:
            return await self._read(s, a, path, offset, limit, entry, deny, change)

    async def _read(
        self,
        s: Session,
        a: AgentState,
        path: str,
        offset: int,
        limit: int | None,
        entry: core.FileState | None,
        deny: tuple[str, ...],
        change: Change,
    ) -> bytes | pb.ReadFileResponse:
        """The read of a ReadFile that is not answered by the stub, recorded on `change`: the
        answer, serialised by the core (`_answer`)."""
        read_at = now_ms()
        policy = session_policy(s, self.settings)
        max_bytes = policy.max_file_size_bytes
        hashing = self.registry.keeps_digests
        previous = entry.content if entry is not None else None

        # What the answer may take: the message limit less room for the path and the numbers.
        max_answer = self.config.max_message_bytes - 2 * len(path.encode()) - ANSWER_OVERHEAD
        stamp = None if s.rules.mtime_timestamps else read_at

        def read(inline: bool) -> _Read:
            """The read, and everything proportional to its size (the first page, the content
            hash, the numbered text, the answer itself), done here rather than on the event
            loop: a large answer's work never stalls the other calls."""
            if not inline:
                failpoints.hit("readfile.worker")
            done = _answer(s, path, offset, limit, policy, stamp, inline, max_answer, deny)
            # Not needed for the content the entry already held (the store keeps its hash).
            if hashing and done.content != previous:
                done.digest = content_digest(done.content)
            return done

        try:
            got = await diskaccess.off_loop(read)
        except diskaccess.FileReadError as exc:
            if exc.kind == "too_large" and exc.size is not None and s.rules.claude_read_errors:
                # Current Claude Code's own refusal, word for word (docs/claude-code.md §4).
                exc.message = render.file_too_large(exc.size, max_bytes)
            raise read_error(exc, path) from None
        if got.paged:  # the first page stands for a read of its lines
            limit = got.num_lines
        if not self.registry.live(s, a):
            # Closed or expired during the read: recording it would write rows for a session
            # that is no longer stored.
            raise NotFound(
                "SESSION_CLOSED",
                f"session {s.session_id!r} was closed or expired while {path} was being read; "
                "nothing was recorded",
                {"session_id": s.session_id, "path": path},
            )
        await self._admit(s, a, path, len(got.content), "ReadFile")
        # An answer gRPC would refuse to send must not be recorded: the retry would get the
        # "unchanged" stub for content the client never received.
        size, cap = got.size, self.config.max_message_bytes
        if size > cap:
            raise ResourceExhausted(
                "RESPONSE_TOO_LARGE",
                f"the answer for {path} ({size} bytes: the content and its numbered text) is over "
                f"limits.max_message_bytes ({cap}); read it in parts with offset and limit",
                {"path": path, "limit": "max_message_bytes"},
            )
        reserve_answer(size)  # until the client has read it (admission.py)
        stored = got.timestamp
        a.files.set(path, core.FileState(got.content, stored, offset, limit, False))
        a.read_mtimes[path] = (stored, got.mtime_ms)
        saw(a.seen, path, offset, offset + got.num_lines - 1)
        if got.digest is not None:
            change.digests[path] = (got.content, got.digest)
        self._prune_marks(a)
        change.files = True
        change.entry = path
        return got.answer

    def _refuse_denied(self, path: str) -> None:
        """PERMISSION_DENIED `PATH_DENIED` for a path a deny glob matches: ReadFile never
        answers such a file, and RecordRead/RecordWrite do not take its content from a harness
        either (docs/security.md)."""
        glob = diskaccess.is_denied((path,), self.settings.deny_globs)
        if glob is not None:
            raise PermissionDenied(
                "PATH_DENIED", f"{path} matches the deny rule {glob!r}", {"path": path}
            )

    async def _admit(self, s: Session, a: AgentState, path: str, size: int, what: str) -> None:
        """The content ceiling for a new entry of `size` bytes under `path` (its old entry's
        bytes are released by it)."""
        old = a.files.peek(path)
        released = len(old.content) if old is not None else 0
        await self.registry.admit(
            size, f"{what} of {path} ({size} bytes)", released=released, keep=s
        )

    @staticmethod
    def _prune_marks(a: AgentState) -> None:
        """Forget the marks and seen lines of entries the cache evicted (in bulk, rarely)."""
        if len(a.read_mtimes) > 2 * len(a.files) + 64 or len(a.seen) > 2 * len(a.files) + 64:
            live = set(a.files.keys())
            for p in [p for p in a.read_mtimes if p not in live]:
                del a.read_mtimes[p]
            for p in [p for p in a.seen if p not in live]:
                del a.seen[p]

    # --- RecordRead / RecordWrite ------------------------------------------------------------

    async def record_read(self, req: pb.RecordReadRequest) -> pb.RecordReadResponse:
        s, a = await self.registry.agent(req.session_id, req.agent_id)
        path = resolve_path(s, req.path)
        self._refuse_denied(path)
        check_utf8("content", req.content)
        offset = req.offset if req.HasField("offset") else None
        limit = req.limit if req.HasField("limit") else None
        _range(offset, limit)
        ts = _timestamp(req.timestamp_ms)
        await self._admit(s, a, path, len(req.content), "RecordRead")
        async with self.registry.mutate(s, a) as change:
            a.files.set(path, core.FileState(req.content, ts, offset, limit, req.partial_view))
            a.read_mtimes.pop(path, None)
            first = offset or 1
            saw(a.seen, path, first, first + line_count(req.content) - 1)
            self._prune_marks(a)
            change.files = True
            change.entry = path
            if req.nested_memory and path not in a.nested_memory:
                a.nested_memory.add(path)
                change.agent = True
        return pb.RecordReadResponse(path=path)

    async def record_write(self, req: pb.RecordWriteRequest) -> pb.RecordWriteResponse:
        s, a = await self.registry.agent(req.session_id, req.agent_id)
        path = resolve_path(s, req.path)
        self._refuse_denied(path)
        check_utf8("content", req.content)
        if req.timestamp_ms < 0:
            raise InvalidArgument(
                "BAD_TIMESTAMP", "timestamp_ms must be >= 0 (0 = the file's mtime)"
            )
        ts = req.timestamp_ms
        if ts == 0:
            m = mtime_ms(path)
            if m is None:
                raise NotFound(
                    "FILE_NOT_FOUND",
                    f"{path} does not exist; pass timestamp_ms or record the write after it",
                    {"path": path},
                )
            ts = m
        changed = _changed_lines(req)
        if req.HasField("if_entry_timestamp_ms"):
            _check_entry(a, path, req.if_entry_timestamp_ms)
        await self._admit(s, a, path, len(req.content), "RecordWrite")
        async with self.registry.mutate(s, a) as change:
            held = a.files.peek(path)
            verified = held is None or a.unverified.get(path) is not held
            a.files.set(path, core.FileState(req.content, ts, None, None, False))
            a.read_mtimes.pop(path, None)
            a.seen[path] = after_write(
                a.seen.get(path), held, req.content, changed, verified=verified
            )
            self._prune_marks(a)
            change.files = True
            change.entry = path
        return pb.RecordWriteResponse(path=path)

    # --- CheckWrite ---------------------------------------------------------------------------

    async def check_write(self, req: pb.CheckWriteRequest) -> pb.CheckWriteResponse:
        """docs/claude-code.md §4 A file that does not exist yet may be written without a read."""
        s, a = await self.registry.agent(req.session_id, req.agent_id)
        path = resolve_path(s, req.path)
        current = mtime_ms(path)
        if current is None:
            known = a.files.peek(path)
            return pb.CheckWriteResponse(
                result=pb.WRITE_CHECK_ALLOWED,
                path=path,
                entry_timestamp_ms=known.timestamp if known is not None else 0,
            )
        templates = s.templates
        async with self.registry.mutate(s, a, room=None) as change:
            entry = a.files.get(path)
            change.files = entry is not None  # the get made it the most recently used
        if entry is None and self._carried(s, a, path):
            return pb.CheckWriteResponse(result=pb.WRITE_CHECK_ALLOWED, path=path)
        if entry is None or entry.partial_view:
            return pb.CheckWriteResponse(
                result=pb.WRITE_CHECK_NOT_READ,
                message=templates.write_not_read,
                error_code=6,
                path=path,
            )
        if a.unverified.get(path) is entry or _changed(s, a, path, entry, current):
            full_read = entry.offset is None and entry.limit is None
            unverified = a.unverified.get(path) is entry
            if unverified or not (
                full_read and _same_content(s, path, entry.content, self.settings)
            ):
                return pb.CheckWriteResponse(
                    result=pb.WRITE_CHECK_MODIFIED,
                    message=templates.write_modified,
                    error_code=7,
                    path=path,
                    entry_timestamp_ms=entry.timestamp,
                )
        return pb.CheckWriteResponse(
            result=pb.WRITE_CHECK_ALLOWED, path=path, entry_timestamp_ms=entry.timestamp
        )

    def _carried(self, s: Session, a: AgentState, path: str) -> bool:
        """Whether a read carried over a compaction vouches for `path`: the policy keeps read
        state, and the file on disk still has the content that was read."""
        carried = a.carried_reads.get(path)
        if carried is None or not session_policy(s, self.settings).carry_read_state:
            return False
        content = _disk_content(s, path, carried.length, self.settings)
        if content is None or len(content) != carried.length:
            return False
        if carried.content is not None:
            return content == carried.content
        return content_digest(content) == carried.sha256

    # --- CheckStale ---------------------------------------------------------------------------

    async def check_stale(self, req: pb.CheckStaleRequest) -> pb.CheckStaleResponse:
        s, a = await self.registry.agent(req.session_id, req.agent_id)
        if req.started_at_ms < 0:
            raise InvalidArgument("BAD_TIMESTAMP", "started_at_ms must be >= 0 (0 = any)")
        stale: list[str] = []
        for path in a.files.keys():  # noqa: SIM118 (FileStateCache is not iterable)
            entry = a.files.peek(path)
            current = mtime_ms(path)
            if entry is None or current is None:
                continue
            if _changed(s, a, path, entry, current) and current > req.started_at_ms:
                stale.append(path)
        hint = ""
        if stale and (not req.command or _writes_files(s, req.command)):
            paths = [display_path(p, s.cwd) for p in stale]
            hint = render.stale_read_hint(paths, s.templates)
        return pb.CheckStaleResponse(stale_paths=stale, hint=hint)


def _writes_files(s: Session, command: str) -> bool:
    if WRITE_COMMAND_MARKERS.search(command):
        return True
    return s.rules.sed_markers and SED_MARKERS.search(command) is not None


def _disk_content(s: Session, path: str, max_bytes: int, settings: Settings) -> bytes | None:
    """The file's bytes when it holds at most `max_bytes`, else None. Read through `diskaccess`
    like every other read: inside the roots (no symlink out), deny globs, regular files only (a
    FIFO must not block the event loop). Anything unreadable is None."""
    try:
        tf = diskaccess.read_text(
            path,
            roots=s.read_roots,
            max_bytes=max_bytes,
            deny_globs=settings.deny_globs,
        )
    except diskaccess.FileReadError:
        return None
    return tf.content


def _same_content(s: Session, path: str, content: bytes, settings: Settings) -> bool:
    """Whether the file on disk still holds exactly `content` (anything unreadable is not)."""
    return _disk_content(s, path, len(content), settings) == content


@dataclasses.dataclass(slots=True)
class _Read:
    """A ReadFile's read, answered: what is recorded of it and the answer (`size` bytes, as the
    core serialised it)."""

    content: bytes
    mtime_ms: int
    num_lines: int
    total_lines: int
    timestamp: int  # the entry's
    paged: bool  # the first page of a whole read over max_read_tokens
    answer: bytes
    size: int
    digest: bytes | None = None


def _answer(
    s: Session,
    path: str,
    offset: int,
    limit: int | None,
    policy: Policy,
    stamp: int | None,
    inline: bool,
    max_answer: int,
    deny: tuple[str, ...],
) -> _Read:
    """ReadFile's answer, read and built by the core in one call (`core.read_file`): the lines
    asked for, numbered, or the first page of a whole read over `max_read_tokens` (under
    profiles that page; FailedPrecondition in Claude Code's words otherwise, or when not even
    the first line fits); FileReadError (or `diskaccess.WouldBlock`) when the read is refused.

    The core opens `path` as it is, without following a symlink (diskread.rs `open_resolved`):
    a canonical path under a root as given, and not denied (checked before), is then its own
    real path, inside the real root. Any other path, and one the core finds a symlink on
    ("changed"), is resolved and checked first (`diskaccess.resolve`)."""
    plan = _read_plan(s, policy)
    inline_max = diskaccess.INLINE_READ_BYTES if inline else None
    real, resolved = path, not within_roots(path, s.read_roots)
    binary = diskaccess.binary_name(path)
    if resolved:
        real, ext = diskaccess.resolve(path, diskaccess.ReadScope.of(s.read_roots), deny)
        binary = ext in diskaccess.BINARY_EXTENSIONS
    while True:
        spec = core.ReadSpec(
            real=real,
            binary_name=binary,
            path=path,
            start=offset,
            limit=limit,
            timestamp_ms=stamp,
            max_answer=max_answer,
        )
        res = core.read_file(spec, plan, inline_max=inline_max)
        if isinstance(res, core.ReadAnswer):
            break
        if isinstance(res, core.ReadTokensExceeded):
            cap = policy.max_read_tokens
            raise FailedPrecondition(
                "READ_TOKENS_EXCEEDED",
                render.read_tokens_exceeded(res.tokens, cap, s.templates),
                {"path": path, "tokens": str(res.tokens), "limit": "max_read_tokens"},
            )
        if res.kind == core.RefusalKind.CHANGED and not resolved:  # a symlink on the way
            real, ext = diskaccess.resolve(path, diskaccess.ReadScope.of(s.read_roots), deny)
            binary = ext in diskaccess.BINARY_EXTENSIONS
            resolved = True
            continue
        max_bytes = policy.max_file_size_bytes
        ext = os.path.splitext(real)[1].lower()
        raise diskaccess.refusal_error(
            res.kind, path, ext, max_bytes, res.errno, res.size, max_answer
        )
    mtime_ms = res.mtime_ns // 1_000_000
    timestamp = mtime_ms if stamp is None else stamp
    wire = res.wire
    return _Read(
        res.content,
        mtime_ms,
        res.num_lines,
        res.total_lines,
        timestamp,
        res.partial,
        wire,
        len(wire),
    )


# The plans `_read_plan` made, by the identities of what they are made of (a session's policy,
# templates and rules are objects kept and found again, never changed in place).
_READ_PLANS: dict[tuple[int, int, int], tuple[Policy, render.Templates, Rules, core.ReadPlan]] = {}


def _read_plan(s: Session, policy: Policy) -> core.ReadPlan:
    """The core's plan of a ReadFile under `policy` (the same for every read of a session)."""
    templates, rules = s.templates, s.rules
    key = (id(policy), id(templates), id(rules))
    kept = _READ_PLANS.get(key)
    if kept is not None and kept[0] is policy and kept[1] is templates and kept[2] is rules:
        return kept[3]
    plan = core.ReadPlan(
        templates=render.file_templates(templates),
        malware=policy.malware_reminder,
        max_tokens=policy.max_read_tokens,
        max_bytes=policy.max_file_size_bytes,
        sniff_bytes=diskaccess.SNIFF_BYTES,
        exact=policy.exact,
        encoding=policy.encoding,
        api_units=rules.api_units_per_token,
        page=rules.page_over_read_tokens,
    )
    if len(_READ_PLANS) >= 256:
        _READ_PLANS.clear()  # policies come and go: forget the old ones now and then
    _READ_PLANS[key] = (policy, templates, rules, plan)
    return plan
