"""Durable state: an embedded SQLite database in WAL mode (docs/architecture.md §5,
docs/persistence.md).

What is stored is the small durable record of docs/architecture.md §2 — sessions (settings, policy,
profile, memory paths, roots, plans directory, times), agents (plan file, permission mode,
compaction count, nested-memory set, catalogue and what was announced, skill names already
listed), file-state METADATA (path, timestamp, range, partial view, SHA-256 and length of the
content, the mtime seen by the read — never the content), invoked skills and tasks. File contents
are re-read from disk: restoration does that anyway.

Write-through. Every mutating RPC writes its change in one small transaction before it returns,
so nothing acknowledged to a client is lost when the daemon process dies (`kill -9`): with WAL and
`synchronous=NORMAL` a committed transaction is in the WAL file (the OS page cache) once COMMIT
returns. An operating-system crash or power loss may lose the last transactions; that is not the
requirement (docs/persistence.md). Statements are fixed strings (sqlite3 caches them prepared);
nothing is rewritten in full per call: the file-state cache is mirrored by diffing it against what
was last written (new or changed entries are upserted, evicted ones deleted, a recency change or an
entry replaced by an equal one is a one-column update, each kind one executemany), so a Compact
that clears and re-seeds the cache becomes the upserts of the restored entries plus the deletes of
the others. Content hashes are reused from the replaced row when the content is equal, else taken
from the read that just produced the content (`AgentState.digests`), else computed here.

Failed writes. A transaction names what it writes: `(session_id, agent_id)` for an agent's rows
(its row, catalogue, files, skills), `(session_id, None)` for the session's own (its row, tasks).
When it fails (the disk is full, an I/O error), it is rolled back and exactly those are re-read
from the database into memory (`on_failed_write`, the registry's resync): the call that changed
memory before writing fails, and leaves nothing behind that a later call could see.

Loading. At start-up everything is read back; each agent's file-state cache is rebuilt in the same
most-recently-used order. The content of each entry is re-read from disk and kept only when its
SHA-256 matches the stored one; otherwise (the file changed, vanished or cannot be read) the entry
is kept with empty content and listed in `AgentState.unverified`, which makes it never "unchanged"
(ReadFile gives the full text, not the dedup stub) and makes CheckWrite's full-read equality
exception fail, so a file modified while the daemon was down is MODIFIED.

Bad rows. Every stored value is decoded by one set of checks (`scan_rows`, the `_*_of`
decoders): a row whose values the daemon cannot use (bad JSON, a protobuf that does not parse, a
relative path, an unknown profile...), and every row of a session or agent whose own row is bad or
missing, is moved at start-up to the `quarantine` table with a warning, and the daemon serves the
rest; `postcompact state check` runs the same checks and reports those rows without moving them.

Schema. `PRAGMA user_version` is the schema version; `MIGRATIONS` upgrades an older database in
one transaction. A database newer than this daemon, one that is corrupt, or one whose tables lack
a column refuses to start with an error naming the file and the way out (`postcompact state
check` / `state reset`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import math
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message

from postcompact import __version__, fileread
from postcompact._core import Charge, FileState, FileStateCache, expand_path
from postcompact.errors import InvalidArgument, ResourceExhausted, Unavailable
from postcompact.lifecycle import (
    LifecycleError,
    default_socket_path,
    ensure_private_dir,
    held_elsewhere,
    make_private_dirs,
)
from postcompact.restore.policy import validate_policy
from postcompact.state import (
    MAIN_AGENT,
    AgentState,
    CarriedRead,
    Catalog,
    InvokedSkill,
    Session,
)
from postcompact.v1 import postcompact_pb2 as pb

log = logging.getLogger("postcompact.persist")

# What a transaction writes: (session id, agent id), or (session id, None) for the session's own
# rows (see the module docstring).
Written = tuple[str, str | None]

STATE_DB_NAME = "state.db"
# A file re-read at load larger than this is not verified (its entry stays unverified).
MAX_VERIFY_BYTES = 64 * 1024 * 1024
# Rows without stored blobs (file metadata, plan, mode...) are budgeted at this many bytes.
ROW_BYTES = 512
# check_room's bound: each write may grow the b-trees by this many pages besides its bytes, and
# the size is measured again after this many checks at the latest.
_ROOM_SLACK_PAGES = 8
_ROOM_CHECKS = 256
# Quarantined rows logged one by one at start-up; the rest in one line (the table has them all).
_LOGGED_PROBLEMS = 100


class StateError(LifecycleError):
    """The state database cannot be used: corrupt, too new, locked or unreadable."""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# --- where the database lives ------------------------------------------------------------------


def default_state_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "postcompact"


def state_db_path(
    *,
    socket: Path,
    state_dir: Path | None = None,
    state_path: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """The database file of the daemon serving on `socket`.

    `state_path` wins; then `state_dir/state.db`. With neither, the daemon on the default socket
    uses `$XDG_STATE_HOME/postcompact/state.db` and a daemon on any other socket
    `state-<12 hex digits of the socket path's SHA-256>.db` there, so that two daemons on
    different sockets never share (or fight over) one state.
    """
    if state_path is not None:
        return state_path
    if state_dir is not None:
        return state_dir / STATE_DB_NAME
    d = default_state_dir(env)
    env_dict = dict(os.environ if env is None else env)
    if os.path.abspath(socket) == os.path.abspath(default_socket_path(env_dict)):
        return d / STATE_DB_NAME
    digest = hashlib.sha256(os.fsencode(os.path.abspath(socket))).hexdigest()[:12]
    return d / f"state-{digest}.db"


# Allocated beside the database and given up when the disk is full, so that a session can still
# be deleted (a delete appends to the write-ahead log before it frees anything).
RESERVE_BYTES = 4 * 1024 * 1024


def check_state_place(db: Path) -> None:
    """StateError unless the database's directory is the user's own and private (0700), and
    the database, if it exists, is the user's: as the runtime directory is checked."""
    try:
        ensure_private_dir(db.parent, "state directory")
    except LifecycleError as exc:
        raise StateError(str(exc)) from None
    with contextlib.suppress(FileNotFoundError):
        owner = os.lstat(db).st_uid
        if owner != os.getuid():
            raise StateError(
                f"the state database {db} is owned by uid {owner}, not by you "
                f"(uid {os.getuid()}); refusing to use it"
            )


def lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".lock")


def side_files(db: Path) -> list[Path]:
    """The database and its WAL and shared-memory files."""
    return [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]


# --- schema and migrations ---------------------------------------------------------------------

_V1 = """
CREATE TABLE sessions (
    session_id      TEXT PRIMARY KEY,
    seq             INTEGER NOT NULL,
    cwd             TEXT NOT NULL,
    home            TEXT NOT NULL,
    roots           TEXT NOT NULL,      -- JSON array
    memory_paths    TEXT NOT NULL,      -- JSON array
    plans_directory TEXT NOT NULL,
    policy          BLOB NOT NULL,      -- serialised postcompact.v1.RestorePolicy
    profile         INTEGER NOT NULL,
    created_at_ms   INTEGER NOT NULL,
    last_active_ms  INTEGER NOT NULL
);
CREATE TABLE agents (
    session_id      TEXT NOT NULL,
    agent_id        TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    plan_file_path  TEXT,
    mode            INTEGER NOT NULL,
    compactions     INTEGER NOT NULL,
    nested_memory   TEXT NOT NULL,      -- JSON array of paths
    announced       TEXT NOT NULL,      -- JSON {tools, agent_types, mcp, sent_skills}
    PRIMARY KEY (session_id, agent_id)
);
CREATE TABLE catalogs (
    session_id      TEXT NOT NULL,
    agent_id        TEXT NOT NULL,
    parts           BLOB NOT NULL,      -- serialised SetCatalogRequest (present parts only)
    PRIMARY KEY (session_id, agent_id)
);
CREATE TABLE files (
    session_id      TEXT NOT NULL,
    agent_id        TEXT NOT NULL,
    path            TEXT NOT NULL,
    seq             INTEGER NOT NULL,   -- recency: higher = more recently used
    timestamp_ms    INTEGER NOT NULL,
    read_offset     INTEGER,
    read_limit      INTEGER,
    partial_view    INTEGER NOT NULL,
    content_sha256  BLOB NOT NULL,
    content_len     INTEGER NOT NULL,
    mark_ts_ms      INTEGER,            -- AgentState.read_mtimes[path] = (mark_ts, mark_mtime)
    mark_mtime_ms   INTEGER,
    PRIMARY KEY (session_id, agent_id, path)
);
CREATE TABLE skills (
    session_id      TEXT NOT NULL,
    agent_id        TEXT NOT NULL,
    name            TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    path            TEXT NOT NULL,
    content         BLOB NOT NULL,
    invoked_at_ms   INTEGER NOT NULL,
    PRIMARY KEY (session_id, agent_id, name)
);
CREATE TABLE tasks (
    session_id      TEXT NOT NULL,
    task_id         TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    task            BLOB NOT NULL,      -- serialised postcompact.v1.Task
    PRIMARY KEY (session_id, task_id)
);
"""

_V2 = """
CREATE TABLE schema_history (
    version         INTEGER PRIMARY KEY,
    applied_at_ms   INTEGER NOT NULL,
    daemon_version  TEXT NOT NULL
);
"""

# Agents gain their parent (for task reminders) and what they carried over a compaction (reads
# for the Edit/Write check, too-large notes that stay candidates): JSON
# {"reads": {path: [sha256 hex, length]}, "refs": {path: timestamp}}.
_V3 = """
ALTER TABLE agents ADD COLUMN parent_agent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE agents ADD COLUMN carried TEXT NOT NULL DEFAULT '{}';
"""

# Rows the daemon cannot use, moved here at start-up instead of failing it (see `scan_rows`): the
# table they came from, their key columns and the whole row as JSON objects (a BLOB as its hex
# string), why, and when.
_V4 = """
CREATE TABLE quarantine (
    id                INTEGER PRIMARY KEY,
    table_name        TEXT NOT NULL,
    row_key           TEXT NOT NULL,      -- JSON {key column: value}
    row_data          TEXT NOT NULL,      -- JSON {column: value}, BLOBs hex-encoded
    reason            TEXT NOT NULL,
    quarantined_at_ms INTEGER NOT NULL
);
"""

# (version reached, SQL script). Append only; never edit a released step.
MIGRATIONS: tuple[tuple[int, str], ...] = ((1, _V1), (2, _V2), (3, _V3), (4, _V4))
SCHEMA_VERSION = MIGRATIONS[-1][0]

# The tables holding sessions' rows (each has a session_id column).
_TABLES = ("sessions", "agents", "catalogs", "files", "skills", "tasks")

# Every table's columns at SCHEMA_VERSION, and the key columns naming one of its rows.
_COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": (
        "session_id", "seq", "cwd", "home", "roots", "memory_paths", "plans_directory", "policy",
        "profile", "created_at_ms", "last_active_ms",
    ),
    "agents": (
        "session_id", "agent_id", "seq", "plan_file_path", "mode", "compactions",
        "nested_memory", "announced", "parent_agent_id", "carried",
    ),
    "catalogs": ("session_id", "agent_id", "parts"),
    "files": (
        "session_id", "agent_id", "path", "seq", "timestamp_ms", "read_offset", "read_limit",
        "partial_view", "content_sha256", "content_len", "mark_ts_ms", "mark_mtime_ms",
    ),
    "skills": ("session_id", "agent_id", "name", "seq", "path", "content", "invoked_at_ms"),
    "tasks": ("session_id", "task_id", "seq", "task"),
    "schema_history": ("version", "applied_at_ms", "daemon_version"),
    "quarantine": (
        "id", "table_name", "row_key", "row_data", "reason", "quarantined_at_ms",
    ),
}  # fmt: skip
_KEYS: dict[str, tuple[str, ...]] = {
    "sessions": ("session_id",),
    "agents": ("session_id", "agent_id"),
    "catalogs": ("session_id", "agent_id"),
    "files": ("session_id", "agent_id", "path"),
    "skills": ("session_id", "agent_id", "name"),
    "tasks": ("session_id", "task_id"),
    "schema_history": ("version",),
}
# The schema version that made a table or column ("table.column"); the others date from 1.
_SINCE = {"schema_history": 2, "agents.parent_agent_id": 3, "agents.carried": 3, "quarantine": 4}
# The value a migration gives older rows in the columns it adds: how `state check` reads a
# database that `serve` has not migrated yet.
_ADDED: dict[str, dict[str, Any]] = {"agents": {"parent_agent_id": "", "carried": "{}"}}


def _has_table(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,))
    return row.fetchone() is not None


def migrate(conn: sqlite3.Connection, target: int = SCHEMA_VERSION) -> tuple[int, int]:
    """Bring the schema from its `user_version` to `target` in one transaction.

    Returns (from, to). The caller has checked that the version is not newer than this code.
    """
    current = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if current >= target:
        return current, current
    conn.execute("BEGIN IMMEDIATE")
    try:
        for version, script in MIGRATIONS:
            if current < version <= target:
                for statement in script.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                if _has_table(conn, "schema_history"):
                    conn.execute(
                        "INSERT OR REPLACE INTO schema_history VALUES (?, ?, ?)",
                        (version, now_ms(), __version__),
                    )
        conn.execute(f"PRAGMA user_version = {int(target)}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return current, target


def _schema_problems(conn: sqlite3.Connection, version: int) -> list[str]:
    """The tables and columns of schema `version` that the database lacks (what a migration to
    SCHEMA_VERSION adds is not lacking)."""
    out: list[str] = []
    for table, columns in _COLUMNS.items():
        if _SINCE.get(table, 1) > version:
            continue
        have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if not have:
            out.append(f"table {table!r} is missing")
            continue
        lacking = [c for c in columns if c not in have and _SINCE.get(f"{table}.{c}", 1) <= version]
        if lacking:
            out.append(f"table {table!r} lacks column(s) {', '.join(lacking)}")
    return out


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating it 0600 if needed) the database in autocommit mode with WAL."""
    make_private_dirs(path.parent)
    old = os.umask(0o177)
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    finally:
        os.umask(old)
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def _reset_hint(path: Path) -> str:
    return (
        f"inspect it with `postcompact state check --state-path {path}`; "
        f"`postcompact state reset --state-path {path}` moves it aside (nothing is deleted) "
        "so the daemon starts with empty state; or run with --no-persist"
    )


def open_checked(path: Path) -> sqlite3.Connection:
    """Open, verify (version, quick_check) and migrate the database; StateError when unusable."""
    if os.path.lexists(path):
        try:
            _check_is_database(path)
        except StateError as exc:
            raise StateError(f"{exc}; check --state-path / state_dir") from None
    try:
        conn = connect(path)
    except (sqlite3.Error, OSError) as exc:
        raise StateError(f"cannot open the state database {path}: {exc}") from None
    try:
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise StateError(
                f"the state database {path} has schema version {version}, newer than this "
                f"postcompact {__version__} understands (up to {SCHEMA_VERSION}); run the newer "
                f"postcompact, or {_reset_hint(path)}"
            )
        problems = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            raise StateError(
                f"the state database {path} is corrupt ({'; '.join(problems[:3])}); "
                + _reset_hint(path)
            )
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StateError(f"the state database {path} cannot use WAL mode (got {mode})")
        conn.execute("PRAGMA synchronous = NORMAL")
        migrate(conn)
        lacking = _schema_problems(conn, SCHEMA_VERSION)
        if lacking:
            raise StateError(
                f"the state database {path} (schema version {version}): {lacking[0]}; "
                + _reset_hint(path)
            )
    except StateError:
        conn.close()
        raise
    except sqlite3.Error as exc:
        conn.close()
        raise StateError(
            f"the state database {path} is unreadable or corrupt ({exc}); " + _reset_hint(path)
        ) from None
    with contextlib.suppress(OSError):
        os.chmod(path, 0o600)
    return conn


class DbLock:
    """An exclusive flock on `<db>.lock` held while a daemon uses the database."""

    def __init__(self, db: Path):
        self.path = lock_path(db)
        self._fd: int | None = None

    def acquire(self) -> None:
        make_private_dirs(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise StateError(
                    f"the state database {self.path.with_suffix('')} is in use by another "
                    "postcompact daemon; give this one its own with --state-dir, or stop the "
                    "other one"
                ) from None
            raise
        self._fd = fd

    def held_elsewhere(self) -> bool:
        """True when another process holds the lock (this one does not take it)."""
        return held_elsewhere(self.path)

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


# --- encoding helpers ----------------------------------------------------------------------------


def catalog_parts(cat: Catalog) -> pb.SetCatalogRequest:
    """The stored catalogue as a SetCatalogRequest holding exactly the parts that were set."""
    req = pb.SetCatalogRequest()
    if cat.deferred_tools is not None:
        req.deferred_tools.SetInParent()
        req.deferred_tools.names.extend(cat.deferred_tools)
    if cat.agent_types is not None:
        req.agent_types.SetInParent()
        req.agent_types.agent_types.extend(cat.agent_types)
        req.agent_types.show_concurrency_note = cat.show_concurrency_note
    if cat.mcp_servers is not None:
        req.mcp_servers.SetInParent()
        req.mcp_servers.servers.extend(
            pb.McpServer(name=n, instructions=t) for n, t in cat.mcp_servers.items()
        )
    if cat.skill_listing is not None:
        req.skill_listing.SetInParent()
        req.skill_listing.skills.extend(cat.skill_listing)
    return req


def catalog_entries(req: pb.SetCatalogRequest) -> int:
    return (
        len(req.deferred_tools.names)
        + len(req.agent_types.agent_types)
        + len(req.mcp_servers.servers)
        + len(req.skill_listing.skills)
    )


def _restore_catalog(
    cat: Catalog, stored: _CatalogRow | None, announced: Mapping[str, list[str]]
) -> None:
    if stored is not None and stored.size:
        cat.charge = Charge(stored.size)
        req = stored.parts
        if req.HasField("deferred_tools"):
            cat.deferred_tools = list(req.deferred_tools.names)
        if req.HasField("agent_types"):
            cat.agent_types = list(req.agent_types.agent_types)
            cat.show_concurrency_note = req.agent_types.show_concurrency_note
        if req.HasField("mcp_servers"):
            cat.mcp_servers = {s.name: s.instructions for s in req.mcp_servers.servers}
        if req.HasField("skill_listing"):
            cat.skill_listing = list(req.skill_listing.skills)
    cat.announced_tools = set(announced.get("tools", ()))
    cat.announced_agent_types = set(announced.get("agent_types", ()))
    cat.announced_mcp = set(announced.get("mcp", ()))
    cat.sent_skill_names = set(announced.get("sent_skills", ()))


def _announced_json(cat: Catalog) -> str:
    return json.dumps(
        {
            "tools": sorted(cat.announced_tools),
            "agent_types": sorted(cat.announced_agent_types),
            "mcp": sorted(cat.announced_mcp),
            "sent_skills": sorted(cat.sent_skill_names),
        },
        separators=(",", ":"),
    )


def _carried_json(a: AgentState, rows: Mapping[str, _Row]) -> str:
    """The agent's carried reads and notes as stored. A read still holding its content gets its
    SHA-256 here — from the file row of that very content when there is one (no hashing), else
    computed — and drops the content (memory stays bounded by the cache)."""
    if not a.carried_reads and not a.carried_refs:
        return "{}"
    reads: dict[str, list[Any]] = {}
    for path, r in sorted(a.carried_reads.items()):
        if r.sha256 is None and r.content is not None:
            row = rows.get(path)
            same = row is not None and row.state.content is r.content
            r.sha256 = row.digest if same and row is not None else content_digest(r.content)
            r.content = None
        reads[path] = [(r.sha256 or b"").hex(), r.length]
    return json.dumps({"reads": reads, "refs": dict(sorted(a.carried_refs.items()))})


def _restore_carried(a: AgentState, stored: _AgentRow) -> None:
    for path, (digest, length) in stored.carried_reads.items():
        a.carried_reads[path] = CarriedRead(length, sha256=digest)
    a.carried_refs.update(stored.carried_refs)


def content_digest(content: bytes) -> bytes:
    """The SHA-256 stored for a file-state entry's content (`files.content_sha256`).

    hashlib releases the GIL for anything but tiny inputs: callers that just read the content
    compute it with the read (on its worker thread when it has one; a small cached file is read
    on the event loop) and hand it over in `AgentState.digests`.
    """
    return hashlib.sha256(content).digest()


_digest = content_digest


def _line_range(data: bytes, offset: int | None, limit: int | None) -> bytes:
    """fileread's range model: lines split on "\\n", the selected ones joined back."""
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

    Read as every read path does (`fileread.read_text`: inside `roots`, never a deny-globbed
    file, a device or a path swapped on the way): an entry recorded for anything else stays
    unverified, so a restart never reads it, nor answers about its content."""
    try:
        data = fileread.read_text(
            path, roots=roots, max_bytes=MAX_VERIFY_BYTES, deny_globs=deny_globs
        ).content
    except fileread.FileReadError:
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


# --- row checks: what the daemon can use (the load and `state check` share them) ---------------
#
# Each `_*_of` decoder turns a stored row ({column: value}) into what the load builds from it, or
# raises BadRow saying which value is wrong and why. `scan_rows` runs them over every table and
# adds the rows whose session or agent is bad or not stored; the load moves what it finds to the
# quarantine table, `state check` reports it.

# As service.sessions checks what clients send: ids and paths (Linux's PATH_MAX).
_MAX_ID_LEN = 256
_MAX_PATH_BYTES = 4096
_SHA256_BYTES = 32
_ANNOUNCED = ("tools", "agent_types", "mcp", "sent_skills")
_M = TypeVar("_M", bound=Message)


class BadRow(ValueError):
    """A stored row the daemon cannot use; the message is the reason."""


@dataclass(frozen=True, slots=True)
class RowProblem:
    """A row `serve` moves to the quarantine table: where it is, why, and all of it."""

    table: str
    key: dict[str, Any]
    reason: str
    rowid: int
    row: dict[str, Any]

    def describe(self) -> str:
        return f"{self.table} {_row_json(self.key)}: {self.reason}"


def _show(value: Any) -> str:
    """A stored value as a reason shows it: its repr, cut short (a value can be megabytes)."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}...({len(text)} characters)"


def _kind(value: Any) -> str:
    """The SQLite storage class of a value as sqlite3 returns it."""
    if value is None:
        return "NULL"
    return {bytes: "BLOB", str: "TEXT", int: "INTEGER", float: "REAL"}.get(type(value), "?")


def _int(row: Mapping[str, Any], col: str, minimum: int | None = None) -> int:
    v = row[col]
    if type(v) is not int:
        shown = _kind(v) if v is None or isinstance(v, bytes) else _show(v)
        raise BadRow(f"{col} is {shown}, not an integer")
    if minimum is not None and v < minimum:
        raise BadRow(f"{col} is {v}, below {minimum}")
    return v


def _opt_int(row: Mapping[str, Any], col: str, minimum: int | None = None) -> int | None:
    return None if row[col] is None else _int(row, col, minimum)


def _blob(row: Mapping[str, Any], col: str) -> bytes:
    v = row[col]
    if not isinstance(v, bytes):
        raise BadRow(f"{col} is {_kind(v)}, not a BLOB")
    return v


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise BadRow(f"{what} is {_kind(value)}, not text")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # read with surrogate escapes (`_lenient_text`)
            raise BadRow(f"{what} is not valid UTF-8") from None
    return value


def _id(value: Any, what: str, *, allow_empty: bool = False) -> str:
    """An id as clients must send it (service.sessions.check_id): one no call could name is
    unreachable."""
    v = _str(value, what)
    if not v and not allow_empty:
        raise BadRow(f"{what} is empty")
    if len(v) > _MAX_ID_LEN or any(ord(c) < 0x20 or c == "\x7f" for c in v):
        raise BadRow(f"{what} {_show(v)} is not an id (at most 256 characters, none a control)")
    return v


def _abs_path(value: Any, what: str) -> str:
    p = _str(value, what)
    if "\0" in p:
        raise BadRow(f"{what} contains a NUL byte")
    if not p.startswith("/"):
        raise BadRow(f"{what} is not an absolute path: {_show(p)}")
    if len(p.encode()) > _MAX_PATH_BYTES:
        raise BadRow(f"{what} is over the {_MAX_PATH_BYTES}-byte path limit")
    return p


def _json_col(row: Mapping[str, Any], col: str) -> Any:
    text = _str(row[col], col)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadRow(f"{col} is not valid JSON ({exc.msg} at character {exc.pos})") from None
    except (ValueError, RecursionError) as exc:  # an integer of over 4300 digits, deep nesting
        raise BadRow(f"{col} is JSON the daemon cannot read ({exc})") from None


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRow(f"{what} is not a JSON object")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise BadRow(f"{what} is not a JSON array")
    return value


def _paths(row: Mapping[str, Any], col: str) -> list[str]:
    items = _list(_json_col(row, col), col)
    return [_abs_path(p, f"{col}[{i}]") for i, p in enumerate(items)]


def _message(row: Mapping[str, Any], col: str, cls: type[_M]) -> _M:
    blob = _blob(row, col)
    try:
        return cls.FromString(blob)
    except DecodeError as exc:
        raise BadRow(f"{col} is not a serialised {cls.DESCRIPTOR.full_name} ({exc})") from None


def _session_of(row: Mapping[str, Any]) -> Session:
    sid = _id(row["session_id"], "session_id")
    _int(row, "seq")
    roots = _paths(row, "roots")
    if not roots:
        raise BadRow("roots is empty")
    policy = _message(row, "policy", pb.RestorePolicy)
    try:
        validate_policy(policy)
    except InvalidArgument as exc:
        raise BadRow(f"policy: {exc.message}") from None
    profile = _int(row, "profile")
    if profile not in pb.Profile.values():  # 0 (unspecified) is the default profile
        raise BadRow(f"profile {profile} is not a known profile")
    return Session(
        session_id=sid,
        cwd=_abs_path(row["cwd"], "cwd"),
        home=_abs_path(row["home"], "home"),
        roots=roots,
        memory_paths=frozenset(_paths(row, "memory_paths")),
        plans_directory=_abs_path(row["plans_directory"], "plans_directory"),
        policy=policy,
        profile=pb.Profile.ValueType(profile),
        created_at_ms=_int(row, "created_at_ms"),
        last_active_ms=_int(row, "last_active_ms"),
    )


@dataclass(slots=True)
class _AgentRow:
    session_id: str
    agent_id: str
    plan_file_path: str | None
    mode: pb.PermissionMode.ValueType
    compactions: int
    nested_memory: list[str]
    announced: dict[str, list[str]]
    parent_agent_id: str
    carried_reads: dict[str, tuple[bytes, int]]
    carried_refs: dict[str, int]


def _agent_of(row: Mapping[str, Any]) -> _AgentRow:
    aid = _id(row["agent_id"], "agent_id", allow_empty=True)
    _int(row, "seq")
    plan = row["plan_file_path"]
    mode = _int(row, "mode")
    if mode not in pb.PermissionMode.values():
        raise BadRow(f"mode {mode} is not a known permission mode")
    announced = _object(_json_col(row, "announced"), "announced")
    sets = {}
    for name in _ANNOUNCED:  # another key is ignored, as the load always did
        items = _list(announced.get(name, []), f"announced.{name}")
        sets[name] = [_str(x, f"announced.{name}[]") for x in items]
    reads, refs = _carried_of(_object(_json_col(row, "carried"), "carried"))
    return _AgentRow(
        session_id=row["session_id"],
        agent_id=aid,
        plan_file_path=None if plan is None else _abs_path(plan, "plan_file_path"),
        mode=pb.PermissionMode.ValueType(mode),
        compactions=_int(row, "compactions", 0),
        nested_memory=_paths(row, "nested_memory"),
        announced=sets,
        parent_agent_id=_id(row["parent_agent_id"], "parent_agent_id", allow_empty=True),
        carried_reads=reads,
        carried_refs=refs,
    )


def _carried_of(
    carried: Mapping[str, Any],
) -> tuple[dict[str, tuple[bytes, int]], dict[str, int]]:
    """`agents.carried` as `_carried_json` writes it: {"reads": {path: [SHA-256 hex or "",
    length]}, "refs": {path: timestamp}}."""
    reads: dict[str, tuple[bytes, int]] = {}
    for path, value in _object(carried.get("reads", {}), "carried.reads").items():
        what = f"carried.reads[{_show(path)}]"
        _abs_path(path, f"{what}'s path")
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)):
            raise BadRow(f"{what} is not [SHA-256 hex, length]")
        try:
            digest = bytes.fromhex(value[0])
        except ValueError:
            raise BadRow(f"{what} has a digest that is not hex") from None
        if len(digest) not in (0, _SHA256_BYTES) or type(value[1]) is not int or value[1] < 0:
            raise BadRow(f"{what} is not [SHA-256 hex, length]")
        reads[path] = (digest, value[1])
    refs: dict[str, int] = {}
    for path, ts in _object(carried.get("refs", {}), "carried.refs").items():
        _abs_path(path, "a carried.refs path")
        if type(ts) is not int:
            raise BadRow(f"carried.refs[{_show(path)}] is not an integer timestamp")
        refs[path] = ts
    return reads, refs


@dataclass(slots=True)
class _CatalogRow:
    session_id: str
    agent_id: str
    parts: pb.SetCatalogRequest
    size: int  # of the stored blob (0: nothing set)


def _catalog_of(row: Mapping[str, Any]) -> _CatalogRow:
    parts = _message(row, "parts", pb.SetCatalogRequest)
    return _CatalogRow(row["session_id"], row["agent_id"], parts, len(row["parts"]))


@dataclass(slots=True)
class _FileRow:
    path: str
    seq: int
    timestamp: int
    offset: int | None
    limit: int | None
    partial_view: bool
    digest: bytes
    size: int
    mark: tuple[int, int] | None


def _file_of(row: Mapping[str, Any], cwd: str, home: str) -> _FileRow:
    """A file row of a session with `cwd` and `home`: its path must be the key the cache gives
    it (a row under another form would be dropped by the cache's load)."""
    path = _abs_path(row["path"], "path")
    key = expand_path(path, cwd, home)
    if key != path:
        raise BadRow(f"path {_show(path)} is not in normal form (the cache keys it {_show(key)})")
    partial = _int(row, "partial_view")
    if partial not in (0, 1):
        raise BadRow(f"partial_view is {partial}, not 0 or 1")
    digest = _blob(row, "content_sha256")
    if len(digest) != _SHA256_BYTES:
        raise BadRow(
            f"content_sha256 has {len(digest)} bytes, not the {_SHA256_BYTES} of a SHA-256"
        )
    mark_ts, mark_mtime = _opt_int(row, "mark_ts_ms"), _opt_int(row, "mark_mtime_ms")
    if (mark_ts is None) != (mark_mtime is None):
        raise BadRow("mark_ts_ms and mark_mtime_ms are not both set or both NULL")
    return _FileRow(
        path=path,
        seq=_int(row, "seq"),
        timestamp=_int(row, "timestamp_ms"),
        # 0 is what FileState takes and an import may record; lines count from 1 on reading.
        offset=_opt_int(row, "read_offset", 0),
        limit=_opt_int(row, "read_limit", 0),
        partial_view=bool(partial),
        digest=digest,
        size=_int(row, "content_len", 0),
        mark=None if mark_ts is None or mark_mtime is None else (mark_ts, mark_mtime),
    )


def _skill_of(row: Mapping[str, Any]) -> InvokedSkill:
    name = _str(row["name"], "name")
    if not name:
        raise BadRow("name is empty")
    _int(row, "seq")
    # Its content need not be UTF-8 (an import keeps what it read); rendering replaces.
    content = _blob(row, "content")
    return InvokedSkill(name, _str(row["path"], "path"), content, _int(row, "invoked_at_ms", 0))


def _task_of(row: Mapping[str, Any]) -> pb.Task:
    task_id = _str(row["task_id"], "task_id")
    if not task_id:
        raise BadRow("task_id is empty")
    _int(row, "seq")
    task = _message(row, "task", pb.Task)
    if task.task_id != task_id:
        raise BadRow(f"the task blob is of task {_show(task.task_id)}, not {_show(task_id)}")
    if task.status not in pb.TaskStatus.values():
        raise BadRow(f"task status {task.status} is not a known status")
    return task


def _history_of(row: Mapping[str, Any]) -> tuple[int, int, str]:
    return (
        _int(row, "version", 1),
        _int(row, "applied_at_ms"),
        _str(row["daemon_version"], "daemon_version"),
    )


def _decode_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


@contextlib.contextmanager
def _lenient_text(conn: sqlite3.Connection) -> Iterator[None]:
    """TEXT that is not UTF-8 read with surrogate escapes, for the checks to name its row;
    sqlite3 would otherwise fail the whole query."""
    old = conn.text_factory
    conn.text_factory = _decode_text
    try:
        yield
    finally:
        conn.text_factory = old


def _rows(
    conn: sqlite3.Connection, table: str, tail: str = "", args: Sequence[Any] = ()
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(rowid, {column: value}) of `table`'s rows, `tail` (WHERE, ORDER BY) applied; a column
    the database lacks because it is not migrated yet has the value the migration gives it."""
    cur = conn.execute(f"SELECT rowid, * FROM {table}{tail}", args)
    names = [d[0] for d in cur.description[1:]]
    added = _ADDED.get(table, {})
    for rowid, *values in cur:
        row = dict(zip(names, values, strict=True))
        for col, value in added.items():
            row.setdefault(col, value)
        yield rowid, row


def _session_owner(
    row: Mapping[str, Any], sessions: Mapping[str, tuple[str, str]], bad_sessions: set[Any]
) -> tuple[str, str]:
    """The (cwd, home) of the row's session; BadRow unless it is stored and good."""
    sid = row["session_id"]
    if sid not in sessions:
        raise BadRow(
            "its session's row is bad" if sid in bad_sessions else "its session is not stored"
        )
    return sessions[sid]


def _agent_owner(
    row: Mapping[str, Any],
    sessions: Mapping[str, tuple[str, str]],
    bad_sessions: set[Any],
    agents: set[tuple[str, str]],
    bad_agents: set[tuple[Any, Any]],
) -> tuple[str, str]:
    """As `_session_owner`, and BadRow unless the row's agent is stored and good too. The main
    agent needs no row: the load makes it."""
    where = _session_owner(row, sessions, bad_sessions)
    key = (row["session_id"], row["agent_id"])
    if key in bad_agents:
        raise BadRow("its agent's row is bad")
    if key not in agents and key[1] != MAIN_AGENT:
        raise BadRow("its agent is not stored")
    return where


def scan_rows(conn: sqlite3.Connection) -> list[RowProblem]:
    """Every row the daemon cannot use, with the reason (see the section's comment). Reads only;
    callers run it in one transaction, so the tables are seen at one moment."""
    problems: list[RowProblem] = []

    def bad(table: str, rowid: int, row: dict[str, Any], exc: BadRow) -> None:
        key = {k: _stored(row.get(k)) for k in _KEYS[table]}  # printable as JSON
        problems.append(RowProblem(table, key, str(exc), rowid, row))

    def rows(table: str) -> Iterator[tuple[int, dict[str, Any]]]:
        # An unmigrated database (`state check`) may lack a table: it has no rows then.
        return _rows(conn, table) if _has_table(conn, table) else iter(())

    sessions: dict[str, tuple[str, str]] = {}
    agents: set[tuple[str, str]] = set()
    bad_sessions: set[Any] = set()
    bad_agents: set[tuple[Any, Any]] = set()
    with _lenient_text(conn):
        for rowid, row in rows("sessions"):
            try:
                s = _session_of(row)
            except BadRow as exc:
                bad("sessions", rowid, row, exc)
                bad_sessions.add(row["session_id"])
            else:
                sessions[s.session_id] = (s.cwd, s.home)
        for rowid, row in rows("agents"):
            try:
                _session_owner(row, sessions, bad_sessions)
                a = _agent_of(row)
            except BadRow as exc:
                bad("agents", rowid, row, exc)
                bad_agents.add((row["session_id"], row["agent_id"]))
            else:
                agents.add((a.session_id, a.agent_id))
        for table in ("catalogs", "files", "skills"):
            for rowid, row in rows(table):
                try:
                    cwd, home = _agent_owner(row, sessions, bad_sessions, agents, bad_agents)
                    if table == "catalogs":
                        _catalog_of(row)
                    elif table == "files":
                        _file_of(row, cwd, home)
                    else:
                        _skill_of(row)
                except BadRow as exc:
                    bad(table, rowid, row, exc)
        for rowid, row in rows("tasks"):
            try:
                _session_owner(row, sessions, bad_sessions)
                _task_of(row)
            except BadRow as exc:
                bad("tasks", rowid, row, exc)
        for rowid, row in rows("schema_history"):
            try:
                _history_of(row)
            except BadRow as exc:
                bad("schema_history", rowid, row, exc)
    return problems


def _stored(value: Any) -> Any:
    """A stored value as the quarantine table's JSON holds it: a BLOB as its hex string, a
    non-finite REAL as its repr (JSON has none)."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def _row_json(values: Mapping[str, Any]) -> str:
    return json.dumps({k: _stored(v) for k, v in values.items()})


# --- the stores ----------------------------------------------------------------------------------

# The file-row statements (fixed strings: sqlite3 keeps them prepared in its statement cache).
_UPSERT_FILE = "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_MOVE_FILE = (
    "UPDATE files SET seq = ?, mark_ts_ms = ?, mark_mtime_ms = ? "
    "WHERE session_id = ? AND agent_id = ? AND path = ?"
)
_DELETE_FILE = "DELETE FROM files WHERE session_id = ? AND agent_id = ? AND path = ?"
_DELETE_AGENT_FILES = "DELETE FROM files WHERE session_id = ? AND agent_id = ?"


@dataclass(slots=True)
class _Row:
    state: FileState
    seq: int
    mark: tuple[int, int] | None
    digest: bytes  # as stored: the hash and length of the content recorded for the entry
    size: int

    def same(self, st: FileState) -> bool:
        """Whether `st` would be stored as this row is (apart from seq and the mark)."""
        return self.state is st or (self.size == len(st.content) and self.state == st)


@dataclass(slots=True)
class LoadReport:
    sessions: int = 0
    agents: int = 0
    files: int = 0
    unverified: int = 0
    skills: int = 0
    tasks: int = 0
    quarantined: int = 0  # rows moved to the quarantine table
    expired: list[str] = field(default_factory=list)


class NullStore:
    """Persistence switched off (`persist = false`): every write is a no-op."""

    path: Path | None = None
    # Called with what a failed transaction wrote (see the module docstring).
    on_failed_write: Callable[[set[Written]], None] | None = None

    def tx(self, *written: Written) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def check_room(self, extra: int = ROW_BYTES) -> None:
        return None

    def used_bytes(self) -> int:
        return 0

    def put_session(self, s: Session) -> None:
        return None

    def delete_session(self, session_id: str) -> None:
        return None

    def put_agent(self, s: Session, a: AgentState) -> None:
        return None

    def put_catalog(self, s: Session, a: AgentState) -> None:
        return None

    def sync_files(self, s: Session, a: AgentState) -> None:
        a.digests.clear()

    def put_skill(self, s: Session, a: AgentState, skill: InvokedSkill) -> None:
        return None

    def put_task(self, s: Session, task: pb.Task) -> None:
        return None

    def flush_activity(self, sessions: Iterable[Session]) -> None:
        return None

    def restore_reserve(self) -> None:
        return None

    def load(self, new_cache: Callable[[Session], FileStateCache]) -> list[Session]:
        return []

    def load_session(
        self,
        session_id: str,
        new_cache: Callable[[Session], FileStateCache],
        agents: Iterable[str] | None = None,
    ) -> Session | None:
        return None

    def close(self) -> None:
        return None


class SqliteStore(NullStore):
    """Write-through persistence in one SQLite database (see the module docstring)."""

    path: Path

    def __init__(self, path: Path, *, max_bytes: int, deny_globs: Sequence[str] = ()):
        self.path = path
        self.max_bytes = max_bytes
        # What the start-up re-read of recorded contents refuses, as every read path does.
        self.deny_globs = fileread.effective_deny_globs(deny_globs)
        check_state_place(path)
        self._lock = DbLock(path)
        self._lock.acquire()
        try:
            self.conn = open_checked(path)
        except BaseException:
            self._lock.release()
            raise
        self.reserve = path.with_name(path.name + ".reserve")
        self.restore_reserve()
        self.page_size = int(self.conn.execute("PRAGMA page_size").fetchone()[0])
        # The hard backstop of limits.max_state_bytes: SQLite refuses to grow past it.
        pages = max(1, max_bytes // self.page_size)
        self.conn.execute(f"PRAGMA max_page_count = {int(pages)}")
        self._depth = 0
        self._after_commit: list[Callable[[], None]] = []
        self._tx_written: set[Written] = set()  # what the open transaction writes
        self._room_bound = 0  # upper bound of the bytes used (see check_room)
        self._room_checks = _ROOM_CHECKS  # measure at the first check
        self._seq = 0
        self._files: dict[tuple[str, str], dict[str, _Row]] = {}
        self._active: dict[str, int] = {}  # session id -> last_active_ms as stored
        # Loaded entries that could not be verified keep their stored hash for later copies.
        self._orig_hash: dict[int, tuple[FileState, bytes, int]] = {}
        self.report = LoadReport()

    # --- transactions -------------------------------------------------------------------------

    @contextlib.contextmanager
    def tx(self, *written: Written) -> Iterator[None]:
        """One transaction writing `written`; nested uses join the outermost one.

        When it fails, whatever the reason, all that its uses named is handed to
        `on_failed_write` once it is rolled back."""
        self._tx_written.update(written)
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._depth = 1
        failed = True
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield
                self.conn.execute("COMMIT")
                failed = False
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise self._write_error(exc) from None
        finally:
            self._depth = 0
            named, self._tx_written = self._tx_written, set()
            if failed:
                self._after_commit.clear()
                self._failed(named)
        pending, self._after_commit = self._after_commit, []
        for fn in pending:
            fn()

    def _failed(self, written: set[Written]) -> None:
        # A failure while re-reading (the resync's own writes) is not handed on again.
        callback, self.on_failed_write = self.on_failed_write, None
        if callback is None:
            return
        try:
            callback(written)
        finally:
            self.on_failed_write = callback

    def _write_error(self, exc: sqlite3.Error) -> Exception:
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "full" in str(exc):
            return ResourceExhausted(
                "STATE_FULL",
                f"the state database {self.path} cannot grow: limits.max_state_bytes "
                f"({self.max_bytes} bytes) reached or the disk is full; close sessions, or raise "
                "the limit",
                {"limit": "max_state_bytes"},
            )
        return Unavailable(
            "STATE_WRITE_FAILED", f"writing the state database {self.path} failed: {exc}"
        )

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def used_bytes(self) -> int:
        pages = int(self.conn.execute("PRAGMA page_count").fetchone()[0])
        free = int(self.conn.execute("PRAGMA freelist_count").fetchone()[0])
        return (pages - free) * self.page_size

    def check_room(self, extra: int = ROW_BYTES) -> None:
        """RESOURCE_EXHAUSTED when writing about `extra` more bytes would pass the limit.

        Far from the limit this asks SQLite nothing: the file's size at the last measurement plus,
        for every check passed since, its `extra` and a few pages of b-tree growth is an upper
        bound of what is used now; while that bound fits, so does the exact answer. It is measured
        again when the bound comes near the limit and after `_ROOM_CHECKS` checks (writes that
        check nothing, like SetMode, only rewrite small rows). Each statement on the event loop
        costs ~20 µs inside the daemon, several times its cost alone.
        """
        step = extra + _ROOM_SLACK_PAGES * self.page_size
        if self._room_checks < _ROOM_CHECKS and self._room_bound + step <= self.max_bytes:
            self._room_checks += 1
            self._room_bound += step
            return
        pages = int(self.conn.execute("PRAGMA page_count").fetchone()[0])
        self._room_bound, self._room_checks = pages * self.page_size + step, 0
        if self._room_bound <= self.max_bytes:
            return  # fits even without counting the free pages
        used = self.used_bytes()
        if used + extra > self.max_bytes:
            raise ResourceExhausted(
                "STATE_TOO_LARGE",
                f"the state database {self.path} holds {used} bytes; this write of about "
                f"{extra} bytes would exceed limits.max_state_bytes ({self.max_bytes}); close "
                "sessions, or raise the limit",
                {"limit": "max_state_bytes", "used_bytes": str(used)},
            )

    def _touch(self, s: Session) -> None:
        if s.session_id not in self._active:
            # Rows of a session that is not stored would outlive it (and come back with a
            # session reopened under its id): a caller wrote for a closed session.
            raise RuntimeError(f"write for session {s.session_id!r}, which is not stored")
        if self._active.get(s.session_id) != s.last_active_ms:
            self.conn.execute(
                "UPDATE sessions SET last_active_ms = ? WHERE session_id = ?",
                (s.last_active_ms, s.session_id),
            )
            self._active[s.session_id] = s.last_active_ms

    # --- sessions -----------------------------------------------------------------------------

    def put_session(self, s: Session) -> None:
        with self.tx((s.session_id, None)):
            self.conn.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET last_active_ms = excluded.last_active_ms",
                (
                    s.session_id,
                    self._next_seq(),
                    s.cwd,
                    s.home,
                    json.dumps(s.roots),
                    json.dumps(sorted(s.memory_paths)),
                    s.plans_directory,
                    s.policy.SerializeToString(),
                    int(s.profile),
                    s.created_at_ms,
                    s.last_active_ms,
                ),
            )
            self._active[s.session_id] = s.last_active_ms
            for a in s.agents.values():
                self.put_agent(s, a)

    def delete_session(self, session_id: str) -> None:
        """Delete the session's rows. Deleting must work on a full disk (it is what the
        STATE_FULL error advises): if the disk is full, the reserve file is given up to make
        room for the delete's journal, then made again when there is room (`restore_reserve`)."""
        try:
            self._delete_session(session_id)
        except ResourceExhausted as exc:
            if exc.reason != "STATE_FULL" or not self._release_reserve():
                raise
            self._delete_session(session_id)
            self.restore_reserve()

    def _delete_session(self, session_id: str) -> None:
        with self.tx((session_id, None)):
            for table in _TABLES:
                self.conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            self._active.pop(session_id, None)
            for key in [k for k in self._files if k[0] == session_id]:
                del self._files[key]

    def _release_reserve(self) -> bool:
        try:
            self.reserve.unlink()
        except FileNotFoundError:
            return False
        log.warning(
            "the disk of the state database is full: its reserve was given up to delete a session",
            extra={"state_db": str(self.path)},
        )
        return True

    def restore_reserve(self) -> None:
        """Make the reserve file (`RESERVE_BYTES` allocated beside the database) if it is
        missing and the disk has room; quietly nothing otherwise (called again by the sweep)."""
        if self.reserve.exists():
            return
        try:
            fd = os.open(self.reserve, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except OSError:
            return
        try:
            os.posix_fallocate(fd, 0, RESERVE_BYTES)
        except OSError:
            os.close(fd)
            with contextlib.suppress(OSError):
                self.reserve.unlink()
            return
        os.close(fd)

    def flush_activity(self, sessions: Iterable[Session]) -> None:
        """Store last_active_ms of sessions touched by read-only calls since their last write."""
        stale = [s for s in sessions if self._active.get(s.session_id) != s.last_active_ms]
        if stale:
            with self.tx(*((s.session_id, None) for s in stale)):
                for s in stale:
                    self._touch(s)

    # --- agents -------------------------------------------------------------------------------

    def put_agent(self, s: Session, a: AgentState) -> None:
        with self.tx((s.session_id, a.agent_id)):
            self.conn.execute(
                "INSERT INTO agents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (session_id, agent_id) DO UPDATE SET "
                "plan_file_path = excluded.plan_file_path, mode = excluded.mode, "
                "compactions = excluded.compactions, nested_memory = excluded.nested_memory, "
                "announced = excluded.announced, carried = excluded.carried",
                (
                    s.session_id,
                    a.agent_id,
                    self._next_seq(),
                    a.plan_file_path,
                    int(a.mode),
                    a.compactions,
                    json.dumps(sorted(a.nested_memory)),
                    _announced_json(a.catalog),
                    a.parent_agent_id,
                    _carried_json(a, self._files.get((s.session_id, a.agent_id), {})),
                ),
            )
            self._touch(s)

    def put_catalog(self, s: Session, a: AgentState) -> None:
        with self.tx((s.session_id, a.agent_id)):
            self.conn.execute(
                "INSERT OR REPLACE INTO catalogs VALUES (?, ?, ?)",
                (s.session_id, a.agent_id, catalog_parts(a.catalog).SerializeToString()),
            )
            self.put_agent(s, a)

    def put_skill(self, s: Session, a: AgentState, skill: InvokedSkill) -> None:
        with self.tx((s.session_id, a.agent_id)):
            self.conn.execute(
                "INSERT OR REPLACE INTO skills VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    s.session_id,
                    a.agent_id,
                    skill.name,
                    self._next_seq(),
                    skill.path,
                    skill.content,
                    skill.invoked_at_ms,
                ),
            )
            self._touch(s)

    def put_task(self, s: Session, task: pb.Task) -> None:
        with self.tx((s.session_id, None)):
            self.conn.execute(
                "INSERT INTO tasks VALUES (?, ?, ?, ?) "
                "ON CONFLICT (session_id, task_id) DO UPDATE SET task = excluded.task",
                (s.session_id, task.task_id, self._next_seq(), task.SerializeToString()),
            )
            self._touch(s)

    # --- file-state cache mirror ----------------------------------------------------------------

    def _hash_of(
        self, st: FileState, prev: _Row | None, hint: tuple[bytes, bytes] | None
    ) -> tuple[bytes, int]:
        """The digest and length to store for `st`, hashing only when nothing else knows it:
        an unverified loaded entry keeps its stored hash; a hash computed off the event loop
        (`AgentState.digests`) is taken when it is of this very content object; an entry whose
        content equals the row it replaces (a re-read, a Compact re-seed) keeps that row's."""
        content = st.content
        orig = self._orig_hash.get(id(st))
        if orig is not None and orig[0] is st:
            return orig[1], orig[2]
        if hint is not None and hint[0] is content:
            return hint[1], len(content)
        if prev is not None and prev.size == len(content) and prev.state.content == content:
            return prev.digest, prev.size
        return content_digest(content), len(content)

    def sync_files(self, s: Session, a: AgentState) -> None:
        """Make the agent's stored file rows equal its cache (entries, metadata, recency).

        Rows whose entry did not change are skipped (an entry replaced by an equal one, as a
        Compact re-seed of an unchanged file under the claude-code profile, only moves); the
        changes go as one executemany per statement, in one transaction."""
        key = (s.session_id, a.agent_id)
        sid, aid = key
        old = self._files.get(key, {})
        hints = a.digests
        new: dict[str, _Row] = {}
        upserts: list[tuple[Any, ...]] = []
        moves: list[tuple[Any, ...]] = []
        last = -1
        for path, st in reversed(a.files.snapshot()):  # least recently used first
            mark = a.read_mtimes.get(path)
            prev = old.get(path)
            same = prev is not None and prev.same(st)
            if prev is not None and same and prev.mark == mark and prev.seq > last:
                row = prev if prev.state is st else _Row(st, prev.seq, mark, prev.digest, prev.size)
            elif prev is not None and same:
                row = _Row(st, self._next_seq(), mark, prev.digest, prev.size)
                moves.append((row.seq, *(mark or (None, None)), sid, aid, path))
            else:
                digest, size = self._hash_of(st, prev, hints.get(path))
                row = _Row(st, self._next_seq(), mark, digest, size)
                upserts.append(
                    (
                        sid,
                        aid,
                        path,
                        row.seq,
                        st.timestamp,
                        st.offset,
                        st.limit,
                        int(st.partial_view),
                        digest,
                        size,
                        *(mark or (None, None)),
                    )
                )
            new[path] = row
            last = row.seq
        hints.clear()
        gone = [(sid, aid, p) for p in old if p not in new]
        if not (upserts or moves or gone) and self._active.get(sid) == s.last_active_ms:
            self._files[key] = new  # equal entries only: the stored rows stand as they are
            return
        with self.tx(key):
            if gone and len(gone) == len(old):  # nothing kept (a clear): one delete
                self.conn.execute(_DELETE_AGENT_FILES, (sid, aid))
            elif gone:
                self.conn.executemany(_DELETE_FILE, gone)
            if moves:
                self.conn.executemany(_MOVE_FILE, moves)
            if upserts:
                self.conn.executemany(_UPSERT_FILE, upserts)
            self._touch(s)
            self._after_commit.append(lambda: self._files.__setitem__(key, new))

    # --- loading ------------------------------------------------------------------------------

    def load(self, new_cache: Callable[[Session], FileStateCache]) -> list[Session]:
        """Every stored session, rebuilt (see the module docstring), once the rows it cannot use
        are quarantined. StateError (one line naming the file) when even that cannot be done."""
        self.report = LoadReport()
        try:
            self.report.quarantined = self._quarantine()
            self._seq = max(
                int(self.conn.execute(f"SELECT coalesce(max(seq), 0) FROM {table}").fetchone()[0])
                for table in ("sessions", "agents", "files", "skills", "tasks")
            )
            sessions = self._read(new_cache, self.report)
        except StateError:
            raise
        except Exception as exc:  # the database failed under the load, or a check missed a value
            log.debug("loading the state database failed", exc_info=True)
            raise StateError(
                f"loading the state database {self.path} failed ({type(exc).__name__}: {exc}); "
                + _reset_hint(self.path)
            ) from None
        self.report.sessions = len(sessions)
        self.report.agents = sum(len(s.agents) for s in sessions)
        return sessions

    def _quarantine(self) -> int:
        """Move every row `scan_rows` finds to the quarantine table (deleted first: a database
        at max_page_count reuses their pages), in one transaction; a warning for each."""
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            problems = scan_rows(c)
            for table in dict.fromkeys(p.table for p in problems):
                c.executemany(
                    f"DELETE FROM {table} WHERE rowid = ?",
                    [(p.rowid,) for p in problems if p.table == table],
                )
            at = now_ms()
            c.executemany(
                "INSERT INTO quarantine (table_name, row_key, row_data, reason, quarantined_at_ms) "
                "VALUES (?, ?, ?, ?, ?)",
                [(p.table, _row_json(p.key), _row_json(p.row), p.reason, at) for p in problems],
            )
            c.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                c.execute("ROLLBACK")
            if not isinstance(exc, sqlite3.Error):
                raise
            raise StateError(
                f"moving the unusable rows of the state database {self.path} to its quarantine "
                f"table failed ({exc}); " + _reset_hint(self.path)
            ) from None
        for p in problems[:_LOGGED_PROBLEMS]:
            log.warning(
                "a row of the state database cannot be used: moved to its quarantine table",
                extra={
                    "state_db": str(self.path),
                    "table": p.table,
                    "key": _row_json(p.key),
                    "reason": p.reason,
                },
            )
        if len(problems) > _LOGGED_PROBLEMS:
            log.warning(
                "more rows of the state database moved to its quarantine table",
                extra={"state_db": str(self.path), "rows": len(problems) - _LOGGED_PROBLEMS},
            )
        return len(problems)

    def load_session(
        self,
        session_id: str,
        new_cache: Callable[[Session], FileStateCache],
        agents: Iterable[str] | None = None,
    ) -> Session | None:
        """The session as stored (None if it is not), rebuilt as at start-up, with all its
        agents or only those of `agents` that are stored; what this store remembers of the
        rows read is replaced by them."""
        only = None if agents is None else frozenset(agents)
        self._active.pop(session_id, None)
        for key in [
            k for k in self._files if k[0] == session_id and (only is None or k[1] in only)
        ]:
            del self._files[key]
        found = self._read(new_cache, LoadReport(), session_id, only)
        return found[0] if found else None

    def _read(
        self,
        new_cache: Callable[[Session], FileStateCache],
        report: LoadReport,
        only: str | None = None,
        agents: frozenset[str] | None = None,
    ) -> list[Session]:
        """The stored sessions (or only the one with id `only`), oldest first; with `agents`,
        only those agents of it. Rows are decoded by the checks of `scan_rows` (which the
        start-up ran first: a row failing them now raises BadRow)."""
        c = self.conn
        where, args = ("", ()) if only is None else (" WHERE session_id = ?", (only,))
        sessions: dict[str, Session] = {}
        for _, row in _rows(c, "sessions", f"{where} ORDER BY seq", args):
            s = _session_of(row)
            sessions[s.session_id] = s
            self._active[s.session_id] = s.last_active_ms
        catalogs = {
            (cat.session_id, cat.agent_id): cat
            for cat in (_catalog_of(row) for _, row in _rows(c, "catalogs", where, args))
        }
        for _, row in _rows(c, "agents", f"{where} ORDER BY seq", args):
            r = _agent_of(row)
            owner = sessions.get(r.session_id)
            if owner is None or (agents is not None and r.agent_id not in agents):
                continue
            a = AgentState(r.agent_id, new_cache(owner), parent_agent_id=r.parent_agent_id)
            _restore_carried(a, r)
            a.plan_file_path = r.plan_file_path
            a.mode = r.mode
            a.compactions = r.compactions
            a.nested_memory = set(r.nested_memory)
            _restore_catalog(a.catalog, catalogs.get((owner.session_id, r.agent_id)), r.announced)
            owner.agents[r.agent_id] = a
        for s in sessions.values():
            if MAIN_AGENT not in s.agents and (agents is None or MAIN_AGENT in agents):
                s.agents = {MAIN_AGENT: AgentState(MAIN_AGENT, new_cache(s)), **s.agents}
            for a in s.agents.values():
                self._load_files(s, a, report)
        for _, row in _rows(c, "skills", f"{where} ORDER BY seq", args):
            owner = sessions.get(row["session_id"])
            agent = owner.agents.get(row["agent_id"]) if owner is not None else None
            if agent is not None:
                skill = _skill_of(row)
                agent.skills[skill.name] = skill
                report.skills += 1
        for _, row in _rows(c, "tasks", f"{where} ORDER BY seq", args):
            if row["session_id"] in sessions:
                sessions[row["session_id"]].tasks[row["task_id"]] = _task_of(row)
                report.tasks += 1
        return list(sessions.values())

    def _load_files(self, s: Session, a: AgentState, report: LoadReport) -> None:
        rows = _rows(
            self.conn,
            "files",
            " WHERE session_id = ? AND agent_id = ? ORDER BY seq DESC",
            (s.session_id, a.agent_id),
        )
        entries: list[tuple[str, FileState]] = []
        loaded: dict[str, _Row] = {}
        for _, row in rows:
            f = _file_of(row, s.cwd, s.home)
            content = verified_content(
                f.path,
                f.offset,
                f.limit,
                f.digest,
                f.size,
                roots=s.roots or [s.cwd],
                deny_globs=self.deny_globs,
            )
            st = FileState(content or b"", f.timestamp, f.offset, f.limit, f.partial_view)
            if content is None:
                a.unverified[f.path] = st
                self._orig_hash[id(st)] = (st, f.digest, f.size)
                report.unverified += 1
            if f.mark is not None:
                a.read_mtimes[f.path] = f.mark
            entries.append((f.path, st))
            loaded[f.path] = _Row(st, f.seq, f.mark, f.digest, f.size)
        a.files.load(entries)
        kept = set(a.files.keys())
        report.files += len(kept)
        self._files[(s.session_id, a.agent_id)] = {p: r for p, r in loaded.items() if p in kept}
        # Entries the cache does not take: its bounds shrank since (every path is its own key,
        # `_file_of`). Said, then deleted.
        dropped = [p for p in loaded if p not in kept]
        if dropped:
            log.info(
                "file entries over the cache's bounds dropped at load",
                extra={
                    "state_db": str(self.path),
                    "session_id": s.session_id,
                    "agent_id": a.agent_id,
                    "entries": len(dropped),
                },
            )
            with self.tx((s.session_id, a.agent_id)):
                self.conn.executemany(
                    _DELETE_FILE, [(s.session_id, a.agent_id, p) for p in dropped]
                )

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.close()
        self._lock.release()


def open_store(
    *,
    persist: bool,
    socket: Path,
    state_dir: Path | None,
    state_path: Path | None,
    max_bytes: int,
    deny_globs: Sequence[str] = (),
) -> NullStore:
    if not persist:
        return NullStore()
    path = state_db_path(socket=socket, state_dir=state_dir, state_path=state_path)
    return SqliteStore(path, max_bytes=max_bytes, deny_globs=deny_globs)


# --- `postcompact state check | reset` -----------------------------------------------------------


@dataclass(slots=True)
class CheckResult:
    path: Path
    exists: bool
    ok: bool
    version: int | None = None
    problems: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    size_bytes: int = 0
    history: list[tuple[int, int, str]] = field(default_factory=list)
    is_database: bool = True  # False: the path is something else (`state reset` refuses it)
    bad_rows: list[RowProblem] = field(default_factory=list)  # what `serve` would quarantine
    quarantined: int = 0  # rows already in the quarantine table (not a problem)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "exists": self.exists,
            "ok": self.ok,
            "schema_version": self.version,
            "supported_version": SCHEMA_VERSION,
            "problems": self.problems,
            "counts": self.counts,
            "size_bytes": self.size_bytes,
            "is_database": self.is_database,
            "bad_rows": [
                {"table": p.table, "key": p.key, "reason": p.reason} for p in self.bad_rows
            ],
            "quarantined_rows": self.quarantined,
            "history": [
                {"version": v, "applied_at_ms": t, "daemon_version": d} for v, t, d in self.history
            ],
        }


def check_db(path: Path) -> CheckResult:
    """Integrity and version report of a database, opened read-only (safe while serving)."""
    if not os.path.lexists(path):
        return CheckResult(path, exists=False, ok=True)
    try:
        _check_is_database(path)
    except StateError as exc:
        return CheckResult(path, exists=True, ok=False, problems=[str(exc)], is_database=False)
    res = CheckResult(path, exists=True, ok=False, size_bytes=path.stat().st_size)
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        res.problems.append(f"cannot open: {exc}")
        return res
    try:
        res.version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        res.problems = [
            r[0] for r in conn.execute("PRAGMA integrity_check").fetchall() if r[0] != "ok"
        ]
        if res.version > SCHEMA_VERSION:
            res.problems.append(
                f"schema version {res.version} is newer than this postcompact supports "
                f"({SCHEMA_VERSION})"
            )
        elif not res.problems:
            conn.execute("BEGIN")  # one snapshot of every table (a daemon may be writing)
            _check_rows(conn, res, res.version)
            conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        res.problems.append(str(exc))
    finally:
        conn.close()
    res.ok = not res.problems and not res.bad_rows
    return res


def _check_rows(conn: sqlite3.Connection, res: CheckResult, version: int) -> None:
    """Counts, history and the rows `serve` would quarantine (`scan_rows`), unless the tables
    lack what the checks read."""
    res.problems += _schema_problems(conn, version)
    for table in _TABLES:
        if _has_table(conn, table):
            res.counts[table] = int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    if _has_table(conn, "quarantine"):
        res.quarantined = int(conn.execute("SELECT count(*) FROM quarantine").fetchone()[0])
    if res.problems:
        return
    res.bad_rows = scan_rows(conn)
    if _has_table(conn, "schema_history"):
        with _lenient_text(conn):
            for _, row in _rows(conn, "schema_history", " ORDER BY version"):
                with contextlib.suppress(BadRow):  # a bad one is in bad_rows
                    res.history.append(_history_of(row))


SQLITE_HEADER = b"SQLite format 3\x00"


def _check_is_database(path: Path) -> None:
    """StateError unless `path` and its side files are what a state database is made of: regular
    files (not symlinks or directories), the database empty or starting with SQLite's header.
    `state reset` renames them; a wrong --state-path must not rename anything else."""
    for p in side_files(path):
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StateError(f"cannot inspect {p}: {exc.strerror}") from None
        if not stat.S_ISREG(st.st_mode):
            raise StateError(f"{p} is not a regular file: not a postcompact state database")
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StateError(f"cannot read {path}: {exc.strerror}") from None
    if head and head != SQLITE_HEADER:
        raise StateError(f"{path} is not an SQLite database: not a postcompact state database")


def reset_db(path: Path) -> Path | None:
    """Move the database (and its WAL and shm files) aside as `<name>.bak-<timestamp>`.

    Returns the backup path, or None when there was nothing to move. Refuses (StateError) while
    a daemon uses the database.
    """
    if not any(os.path.lexists(p) for p in side_files(path)):
        return None
    _check_is_database(path)
    if DbLock(path).held_elsewhere():
        raise StateError(
            f"the state database {path} is in use by a running daemon; stop it first "
            "(`postcompact stop`)"
        )
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime())
    backup = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while any(Path(f"{backup}{sfx}").exists() for sfx in ("", "-wal", "-shm")):
        n += 1
        backup = path.with_name(f"{path.name}.bak-{stamp}-{n}")
    for p, suffix in zip(side_files(path), ("", "-wal", "-shm"), strict=True):
        if p.exists():
            os.replace(p, f"{backup}{suffix}")
    return backup
