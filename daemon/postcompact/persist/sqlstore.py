"""`SqlStore`: write-through persistence of sessions and agents, the `Store` of the state
(postcompact.state.store), over any `Db` (persist.sql), and the codecs of what it stores (see the
package docstring); `SqliteStore`, the embedded one. `persist.postgres.PostgresStore` is the other.
"""

from __future__ import annotations

import abc
import contextlib
import functools
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from postcompact import diskaccess
from postcompact.config import StateUrl
from postcompact.core import Charge, FileState, FileStateCache
from postcompact.errors import FailedPrecondition, NotFound, ResourceExhausted, Unavailable
from postcompact.paths import now_ms
from postcompact.persist.jsontext import announced_text, carried_text, sorted_strings
from postcompact.persist.place import RESERVE_BYTES, StateError, check_state_place, state_db_path
from postcompact.persist.rows import (
    AgentRow,
    BadRow,
    CatalogRow,
    RowProblem,
    agent_of,
    catalog_of,
    file_of,
    row_json,
    scan_rows,
    select_rows,
    session_of,
    skill_of,
    task_of,
)
from postcompact.persist.schema import (
    BUSY_TIMEOUT_MS,
    COLUMNS,
    ROW_KEYS,
    SESSION_TABLES,
    DbLock,
    open_checked,
    reset_hint,
)
from postcompact.persist.sql import Db, SqliteDb
from postcompact.persist.verify import verified_content
from postcompact.state.model import (
    MAIN_AGENT,
    AgentState,
    CarriedRead,
    Catalog,
    InvokedSkill,
    Session,
    catalog_parts,
    content_digest,
)
from postcompact.state.null import NullStore
from postcompact.state.seen import Seen
from postcompact.state.store import (
    ROW_BYTES,
    Change,
    OnFailedWrite,
    SessionQuarantined,
    Store,
    WouldWait,
    Written,
)
from postcompact.v1 import postcompact_pb2 as pb

log = logging.getLogger("postcompact.persist")

_T = TypeVar("_T")

# check_room's bound: each write may grow the b-trees by this many pages besides its bytes, and
# the size is measured again after this many checks at the latest.
_ROOM_SLACK_PAGES = 8
_ROOM_CHECKS = 256
# A write stores its session's activity time only when the stored one is at least this much older
# (an RPC a millisecond after the last would otherwise add a statement for it); the sweep and the
# shutdown store the exact times (`flush_activity`).
ACTIVITY_STEP_MS = 1000
# Quarantined rows logged one by one; the rest in one line (the table has them all).
_LOGGED_PROBLEMS = 100
# The tables holding an agent's rows.
_AGENT_TABLES = ("agents", "catalogs", "files", "skills")
# The RetryInfo of STATE_BUSY: the lock held elsewhere (a long transaction, a migration) is
# usually gone by then, and a retry that meets it again waits its own timeout anyway.
BUSY_RETRY_AFTER_MS = 1000
# A session read that meets rows it cannot use quarantines them and reads again, at most this
# many times (another daemon would have to keep writing bad rows meanwhile).
_READ_ROUNDS = 3


# --- encoding helpers ----------------------------------------------------------------------------


def error_text(exc: BaseException) -> str:
    """A database error as messages quote it: its first line (psycopg's go on with context)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _restore_catalog(
    cat: Catalog, stored: CatalogRow | None, announced: Mapping[str, list[str]]
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
    return announced_text(
        cat.announced_tools, cat.announced_agent_types, cat.announced_mcp, cat.sent_skill_names
    )


def _carried_json(a: AgentState, rows: Mapping[str, _Row]) -> str:
    """The agent's carried reads and notes as stored. A read still holding its content gets its
    SHA-256 here — from the file row of that very content when there is one (no hashing), else
    computed — and drops the content (memory stays bounded by the cache)."""
    if not a.carried_reads and not a.carried_refs and not a.harness_unaware:
        return "{}"
    reads: dict[str, tuple[str, int]] = {}
    for path, r in sorted(a.carried_reads.items()):
        if r.sha256 is None and r.content is not None:
            row = rows.get(path)
            same = row is not None and row.state.content is r.content
            r.sha256 = row.digest if same and row is not None else content_digest(r.content)
            r.content = None
        reads[path] = ((r.sha256 or b"").hex(), r.length)
    refs, unaware = dict(sorted(a.carried_refs.items())), dict(sorted(a.harness_unaware.items()))
    return carried_text(reads, refs, unaware)


def _restore_carried(a: AgentState, stored: AgentRow) -> None:
    for path, (digest, length) in stored.carried_reads.items():
        a.carried_reads[path] = CarriedRead(length, sha256=digest)
    a.carried_refs.update(stored.carried_refs)
    a.harness_unaware.update(stored.harness_unaware)


class _Joined:
    """A `tx` nested in another: it counts its depth, and the outermost one commits."""

    __slots__ = ("_store",)

    def __init__(self, store: SqlStore):
        self._store = store

    def __enter__(self) -> None:
        self._store._depth += 1

    def __exit__(self, *exc: object) -> None:
        self._store._depth -= 1


class _Outermost:
    """The outermost `tx`: BEGIN and COMMIT (`own`: unless its one statement is its own
    transaction), then the callbacks the uses left (`_after_commit`). On any failure — of the
    BEGIN, the body or the COMMIT — it rolls back and hands all that the uses named to
    `on_failed_write`; a database error reaches the caller as the store's (`_error`) — except
    for a write tried on the event loop that met a lock before applying anything (WouldWait).
    A class, not a generator context manager: it runs for every write of several statements
    (a Compact's), on the event loop."""

    __slots__ = ("_own", "_store", "_written")

    def __init__(self, store: SqlStore, written: tuple[Written, ...], own: bool):
        self._store, self._written, self._own = store, written, own

    def __enter__(self) -> None:
        store = self._store
        store._depth = 1
        if self._own:
            try:
                store._begin(self._written)
            except BaseException as exc:
                if store._would_wait(exc):  # tried on the event loop: to the store's thread
                    raise self._put_off() from None
                err = self._abandon(exc)
                if err is None:
                    raise
                raise err from None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        store = self._store
        if exc is None and self._own:
            try:
                store._commit()
            except BaseException as err:
                exc = err
        if exc is not None:
            if not self._own and store._would_wait(exc):  # its one statement applied nothing
                raise self._put_off() from None
            mapped = self._abandon(exc)
            if mapped is not None:
                raise mapped from None
            if exc_type is None:  # the COMMIT's own failure
                raise exc
            return  # the body's: it propagates as it is
        store._depth = 0
        store._tx_written = set()
        store._applied += 1
        pending, store._after_commit = store._after_commit, []
        for fn in pending:
            fn()

    def _put_off(self) -> WouldWait:
        """A write tried on the event loop that met a lock before applying anything: nothing to
        roll back or hand on; it runs again on the store's thread."""
        store = self._store
        store._depth = 0
        store._tx_written = set()
        store._after_commit.clear()
        return WouldWait()

    def _abandon(self, exc: BaseException) -> Exception | None:
        """Roll back, and name what was written as failed (`SqlStore._failed`); the store's
        error for a database's `exc` (None: `exc` is not the database's)."""
        store = self._store
        db_error = isinstance(exc, store._errors)
        try:
            if self._own:
                with contextlib.suppress(*store._errors):
                    store.db.execute("ROLLBACK")
        finally:
            store._depth = 0
            named, store._tx_written = store._tx_written, set()
            store._after_commit.clear()
            store._failed(named, busy=db_error and store._is_busy(exc))
        return store._error(exc) if isinstance(exc, store._errors) else None


# --- the stores ----------------------------------------------------------------------------------


def insert_sql(table: str, cols: Sequence[str] | None = None) -> str:
    """The statement inserting a row of `table` (`cols`, default: all of them)."""
    cols = COLUMNS[table] if cols is None else cols
    return f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"


# What a session's row is written with: all but its version, which a new row starts at 1.
SESSION_COLUMNS = tuple(c for c in COLUMNS["sessions"] if c != "version")


def _upsert(
    table: str, update: Sequence[str] | None = None, cols: Sequence[str] | None = None
) -> str:
    """The statement inserting a row of `table` (`cols`, default: all), or updating `update`
    (default: every column but the key) of the row already there: the same text for SQLite and
    PostgreSQL."""
    cols = COLUMNS[table] if cols is None else cols
    keys = ROW_KEYS[table]
    sets = [c for c in cols if c not in keys] if update is None else update
    return f"{insert_sql(table, cols)} ON CONFLICT ({', '.join(keys)}) DO UPDATE SET " + ", ".join(
        f"{c} = excluded.{c}" for c in sets
    )


# Fixed strings: sqlite3 keeps them prepared in its statement cache (and PgDb its rewrite).
_UPSERT_FILE = _upsert("files")
# A row whose content and range stay (a re-read of an unchanged file, a Compact re-seed, a dedup
# hit): its place, time and marks, the digest and range kept (10 values against the upsert's 15).
_MOVE_FILE = (
    "UPDATE files SET seq = ?, timestamp_ms = ?, mark_ts_ms = ?, mark_mtime_ms = ?, "
    "seen_first = ?, seen_last = ?, seen_edited = ? WHERE session_id = ? AND agent_id = ? AND "
    "path = ?"
)
_DELETE_FILE = "DELETE FROM files WHERE session_id = ? AND agent_id = ? AND path = ?"
_DELETE_AGENT_FILES = "DELETE FROM files WHERE session_id = ? AND agent_id = ?"
_UPSERT_CATALOG = _upsert("catalogs")
_UPSERT_SKILL = _upsert("skills")
_UPSERT_TASK = _upsert("tasks", ("task",))
_UPSERT_AGENT = _upsert(
    "agents",
    ("plan_file_path", "mode", "compactions", "nested_memory", "announced", "carried"),
)
_QUARANTINE = (
    "INSERT INTO quarantine (table_name, row_key, row_data, reason, quarantined_at_ms) "
    "VALUES (?, ?, ?, ?, ?)"
)


@dataclass(slots=True)
class _Row:
    state: FileState
    seq: int
    mark: tuple[int, int] | None
    digest: bytes  # as stored: the hash and length of the content recorded for the entry
    size: int
    seen: Seen | None = None

    def restamped(self, st: FileState) -> bool:
        """Whether `st` differs from this row's entry at most in its timestamp (and so is
        stored by `_MOVE_FILE`, the row's digest kept)."""
        old = self.state
        return old is st or (self.size == len(st.content) and old.same_but_time(st))


def _upsert_args(key: tuple[str, str], path: str, row: _Row) -> tuple[Any, ...]:
    """`_UPSERT_FILE`'s values for the row of `path` of agent `key`."""
    st = row.state
    return (
        *key,
        path,
        row.seq,
        st.timestamp,
        st.offset,
        st.limit,
        int(st.partial_view),
        row.digest,
        row.size,
        *(row.mark or (None, None)),
        *_seen_columns(row.seen),
    )


def _move_args(key: tuple[str, str], path: str, row: _Row) -> tuple[Any, ...]:
    """`_MOVE_FILE`'s values: the row of `path` of agent `key` at its new place, time and
    marks (a tuple built whole: five of them at every Compact)."""
    mark_ts, mark_mtime = row.mark or (None, None)
    first, last, edited = _seen_columns(row.seen)
    sid, aid = key
    return (row.seq, row.state.timestamp, mark_ts, mark_mtime, first, last, edited, sid, aid, path)


def _seen_columns(seen: Seen | None) -> tuple[int | None, int | None, int]:
    """`files.seen_first`, `seen_last`, `seen_edited` of an entry's seen lines."""
    if seen is None:
        return None, None, 0
    return seen.first, seen.last, int(seen.edited)


class _Mirror:
    """The stored file rows this store mirrors: (session id, agent id) -> path -> row, kept per
    session so that one session's are found and forgotten without a scan of all (and without
    iterating a dict other connections of the pool change meanwhile)."""

    __slots__ = ("_by_session",)

    def __init__(self) -> None:
        self._by_session: dict[str, dict[str, dict[str, _Row]]] = {}

    def get(self, key: tuple[str, str], default: dict[str, _Row] | None = None) -> Any:
        agents = self._by_session.get(key[0])
        return default if agents is None else agents.get(key[1], default)

    def __getitem__(self, key: tuple[str, str]) -> dict[str, _Row]:
        return self._by_session[key[0]][key[1]]

    def __setitem__(self, key: tuple[str, str], rows: dict[str, _Row]) -> None:
        self._by_session.setdefault(key[0], {})[key[1]] = rows

    def setdefault(self, key: tuple[str, str], rows: dict[str, _Row]) -> dict[str, _Row]:
        return self._by_session.setdefault(key[0], {}).setdefault(key[1], rows)

    def pop(self, key: tuple[str, str], default: Any = None) -> Any:
        agents = self._by_session.get(key[0])
        return default if agents is None else agents.pop(key[1], default)

    def __delitem__(self, key: tuple[str, str]) -> None:
        del self._by_session[key[0]][key[1]]

    def update(self, rows: Mapping[tuple[str, str], dict[str, _Row]]) -> None:
        for key, value in rows.items():
            self[key] = value

    def keys_of(self, sid: str, agents: frozenset[str] | None = None) -> list[tuple[str, str]]:
        """The (session, agent) keys of `sid` (of `agents` only, unless None)."""
        return [
            (sid, aid)
            for aid in list(self._by_session.get(sid, ()))
            if agents is None or aid in agents
        ]

    def forget(self, sid: str) -> None:
        self._by_session.pop(sid, None)

    def sessions(self) -> int:
        return len(self._by_session)


class RowMemo:
    """What a store knows of the rows stored (the file rows it mirrors, activity times, the
    hashes of entries loaded unverified, the last row sequence number, its room estimate): one
    per database, shared by the connections of a pool, each of which runs one session's calls
    at a time (`state.worker.StoreWorker`). Dict operations are atomic; the sequence is locked."""

    __slots__ = (
        "_lock",
        "active",
        "files",
        "orig_hash",
        "room_bound",
        "room_checks",
        "seq",
        "versions",
    )

    def __init__(self) -> None:
        self.files = _Mirror()
        self.active: dict[str, int] = {}  # session id -> last_active_ms as stored
        # Session id -> entries loaded unverified, which keep their stored hash for later copies.
        self.orig_hash: dict[str, dict[int, tuple[FileState, bytes, int]]] = {}
        self.versions: dict[str, int] = {}  # session id -> version (PostgreSQL's)
        self.room_bound = 0  # upper bound of the bytes used (see check_room)
        self.room_checks = _ROOM_CHECKS  # measure at the first check
        self.seq = 0
        self._lock = threading.Lock()

    def next_seq(self) -> int:
        with self._lock:
            self.seq += 1
            return self.seq

    def saw_seq(self, seq: int) -> None:
        """A row read has `seq`: later rows are numbered after it (rows of one agent are in
        the order of their numbers; a session's are read before any of them is written)."""
        with self._lock:
            self.seq = max(self.seq, seq)


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


class SqlStore(abc.ABC):
    """Write-through persistence in one SQL database (see the package docstring): everything
    but opening, measuring and the database's own errors, which `SqliteStore` and
    `persist.postgres.PostgresStore` add."""

    keeps_digests = True
    shared = False  # other daemons never write this database (see PostgresStore)
    on_failed_write: OnFailedWrite | None = None
    # The database's errors: a write failing with one is rolled back and re-read.
    _errors: tuple[type[Exception], ...] = ()
    # Whether a write of one statement may run as that statement's own implicit transaction
    # (`tx(single=True)`): no BEGIN and COMMIT of its own, atomic all the same.
    _single_statement_tx = False
    # check_room's slack per write (b-tree growth besides its bytes).
    _room_slack = 0
    # Whether a write may be tried on the event loop (`write_inline`); SQLite's can.
    inline_writes = False
    # While a write is tried on the event loop: a lock held elsewhere fails it at once, and
    # before any of it is applied (`_applied`: transactions committed since) it is WouldWait.
    _nowait = False
    _applied = 0
    # How `_touch` stores a session's activity time.
    _TOUCH = "UPDATE sessions SET last_active_ms = ? WHERE session_id = ?"
    _INSERT_SESSION = _upsert("sessions", ("last_active_ms",), SESSION_COLUMNS)

    def __init__(
        self,
        db: Db,
        where: str,
        *,
        max_bytes: int,
        deny_globs: Sequence[str] = (),
        memo: RowMemo | None = None,
    ):
        self.db = db
        self.where = where  # the database as messages name it (a file, a redacted URL)
        self.max_bytes = max_bytes
        # What the re-read of recorded contents (a session's load) refuses, as every read path does.
        self.deny_globs = diskaccess.effective_deny_globs(deny_globs)
        self._depth = 0
        self._joined = _Joined(self)
        self._after_commit: list[Callable[[], None]] = []
        self._tx_written: set[Written] = set()  # what the open transaction writes
        # What this store knows of the stored rows, shared with the other connections of its
        # pool (`StoreWorker`): it is per session, and one session's calls run one at a time.
        self._memo = RowMemo() if memo is None else memo
        self._files = self._memo.files
        self._active = self._memo.active
        self._orig_hash = self._memo.orig_hash
        self._scope: Session | None = None  # the session the running write is of
        self._dropped: list[tuple[str, str, list[str]]] = []  # see _load_files
        self.report = LoadReport()

    # --- what the databases do differently ---------------------------------------------------

    @abc.abstractmethod
    def _begin(self, written: Iterable[Written]) -> None:
        """Begin the transaction that writes `written` (taking the database's write lock)."""

    def _commit(self) -> None:
        self.db.execute("COMMIT")

    @abc.abstractmethod
    def _write_error(self, exc: Exception) -> Exception:
        """The daemon's error for a write that failed with the database's `exc` (not busy)."""

    def _is_busy(self, exc: BaseException) -> bool:
        """Whether the database's `exc` says a lock held elsewhere was not granted in time."""
        return False

    def _error(self, exc: Exception) -> Exception:
        """The daemon's error for a write that failed with the database's `exc`: UNAVAILABLE
        `STATE_BUSY` with a RetryInfo when it was busy (rolled back, nothing applied: a client
        retries it as it does OVERLOADED), else the database's own (`_write_error`)."""
        if self._is_busy(exc):
            return self._busy_error(exc)
        return self._write_error(exc)

    def _busy_error(self, exc: Exception) -> Unavailable:
        return Unavailable(
            "STATE_BUSY",
            f"the state database {self.where} is busy: a lock held elsewhere was not granted in "
            f"time ({error_text(exc)}); nothing was changed: retry the call",
            retry_after_ms=BUSY_RETRY_AFTER_MS,
        )

    def _read_error(self, exc: Exception) -> Exception:
        """The daemon's error for a read of a session that failed with the database's `exc`."""
        if self._is_busy(exc):
            return self._busy_error(exc)
        return Unavailable(
            "STATE_READ_FAILED",
            f"reading the state database {self.where} failed: {error_text(exc)}",
        )

    @abc.abstractmethod
    def _measure(self) -> int:
        """An upper bound of the bytes the database takes now."""

    @abc.abstractmethod
    def used_bytes(self) -> int:
        """The bytes the stored rows take now (free space not counted)."""

    def _stored_session(self, row: Mapping[str, Any]) -> None:
        """A session row was read (its columns as stored). Nothing by default."""
        return

    def changed_elsewhere(self, session_id: str) -> bool:
        return False

    def restore_reserve(self) -> None:
        return None

    # --- transactions -------------------------------------------------------------------------

    def tx(
        self, *written: Written, single: bool = False
    ) -> contextlib.AbstractContextManager[None]:
        """One transaction writing `written`; nested uses join the outermost one (`_Joined`: no
        generator per nested use, several of them in every agent's write).

        `single`: the body runs exactly one statement, which then is its own transaction where the
        database allows it (`_single_statement_tx`: SQLite's autocommit commits or rolls back that
        statement whole), saving the BEGIN and the COMMIT statements (measured inside the
        daemon, on its event loop: ~20 and ~30 µs of CPU each, for a ReadFile's write).

        When it fails, whatever the reason, all that its uses named is handed to
        `on_failed_write` once it is rolled back."""
        self._tx_written.update(written)
        if self._depth:
            return self._joined
        return _Outermost(self, written, not (single and self._single_statement_tx))

    def _single(self, key: Written, sql: str, args: Sequence[Any]) -> None:
        """`with self.tx(key, single=True): self.db.execute(sql, args)` outside any transaction
        where one statement is its own (`_single_statement_tx`), without the context managers:
        the write of most ReadFiles. A failure is handled as `_Outermost` handles it."""
        try:
            self.db.execute(sql, args)
        except BaseException as exc:
            if self._would_wait(exc):  # tried on the event loop: to the store's thread
                raise WouldWait from None
            self._failed({key}, busy=isinstance(exc, self._errors) and self._is_busy(exc))
            if isinstance(exc, self._errors):
                raise self._error(exc) from None
            raise
        self._applied += 1

    def _would_wait(self, exc: BaseException) -> bool:
        """Whether `exc` ends a write tried on the event loop that met a lock before applying
        anything (`write_inline`): the write runs again on the store's thread."""
        return (
            self._nowait
            and not self._applied
            and isinstance(exc, self._errors)
            and self._is_busy(exc)
        )

    def _failed(self, written: set[Written], *, busy: bool = False) -> None:
        # A failure while re-reading (the resync's own writes) is not handed on again.
        callback, self.on_failed_write = self.on_failed_write, None
        if callback is None:
            return
        try:
            callback(written, busy)
        finally:
            self.on_failed_write = callback

    def _next_seq(self) -> int:
        return self._memo.next_seq()

    def room_known(self, extra: int = ROW_BYTES) -> bool:
        """Whether `extra` more bytes fit by the bound alone (see `check_room`), counted if so:
        no database call, so the registry asks it on the event loop first."""
        step = extra + self._room_slack
        memo = self._memo
        if memo.room_checks < _ROOM_CHECKS and memo.room_bound + step <= self.max_bytes:
            memo.room_checks += 1
            memo.room_bound += step
            return True
        return False

    def check_room(self, extra: int = ROW_BYTES) -> None:
        """RESOURCE_EXHAUSTED when writing about `extra` more bytes would pass the limit.

        Far from the limit this asks the database nothing: its size at the last measurement plus,
        for every check passed since, its `extra` and some slack (`_room_slack`) is an upper
        bound of what is used now; while that bound fits, so does the exact answer. It is measured
        again when the bound comes near the limit and after `_ROOM_CHECKS` checks (writes that
        check nothing, like SetMode, only rewrite small rows). Each statement on the event loop
        costs ~20 µs inside the daemon with SQLite, several times its cost alone.
        """
        if self.room_known(extra):
            return
        step = extra + self._room_slack
        memo = self._memo
        try:
            memo.room_bound, memo.room_checks = self._measure() + step, 0
            if memo.room_bound <= self.max_bytes:
                return  # fits even without counting the free pages
            used = self.used_bytes()
        except self._errors as exc:  # PostgreSQL's sizes wait for a lock on each table
            raise self._read_error(exc) from None
        if used + extra > self.max_bytes:
            raise ResourceExhausted(
                "STATE_TOO_LARGE",
                f"the state database {self.where} holds {used} bytes; this write of about "
                f"{extra} bytes would exceed limits.max_state_bytes ({self.max_bytes}); close "
                "sessions, or raise the limit",
                {"limit": "max_state_bytes", "used_bytes": str(used)},
            )

    def _activity_due(self, s: Session) -> bool:
        """Whether a write for `s` stores its activity time (`ACTIVITY_STEP_MS`)."""
        stored = self._active.get(s.session_id)
        now = s.last_active_ms
        return stored is None or (now != stored and now - stored >= ACTIVITY_STEP_MS)

    def _touch(self, s: Session, *, exact: bool = False) -> None:
        """Store the activity time of `s` when due (`exact`: whenever it differs)."""
        stored = self._active.get(s.session_id)
        if stored is None:
            # Rows of a session that is not stored would outlive it (and come back with a
            # session reopened under its id): the session was closed (or expired) while the
            # call that wrote ran; its transaction is rolled back.
            raise NotFound(
                "SESSION_CLOSED",
                f"session {s.session_id!r} was closed or expired while the call ran; nothing was "
                "recorded",
                {"session_id": s.session_id},
            )
        now = s.last_active_ms
        if now != stored and (exact or now - stored >= ACTIVITY_STEP_MS):
            self.db.execute(self._TOUCH, (now, s.session_id))
            self._active[s.session_id] = now

    # --- what a unit of work changed ---------------------------------------------------------

    @contextlib.contextmanager
    def _writing(self, s: Session) -> Iterator[None]:
        """`s` is the session the running write is of (the store's checks read it), and only
        while it runs: a closed session must not stay referenced here, or its contents would
        stay held and counted against limits.max_content_bytes."""
        self._scope = s
        try:
            yield
        finally:
            self._scope = None

    def write(self, s: Session, a: AgentState | None, change: Change) -> None:
        """`change` in one transaction, in the order the rows depend on: the agent's row before
        its files (its carried reads take the hashes of the file rows being replaced)."""
        # `_writing`'s scope, without its generator: this runs for every mutating call.
        self._scope = s
        try:
            self._write(s, a, change)
        finally:
            self._scope = None

    def write_inline(self, s: Session, a: AgentState | None, change: Change) -> None:
        """`write` on the event loop (`Store.write_inline`): WouldWait where it would wait for a
        lock held elsewhere; only a store with `inline_writes` is asked."""
        raise WouldWait

    def lend_to_loop(self) -> None:
        return None

    def waiting(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def checkpoint(self) -> None:
        return None

    def _write(self, s: Session, a: AgentState | None, change: Change) -> None:
        parts = (
            change.session
            + (a is not None and (change.agent or change.catalog))
            + (a is not None and change.files)
            + len(change.skills)
            + len(change.tasks)
        )
        if parts == 1 and change.files and a is not None:
            # Opens a transaction only if rows differ.
            self._sync_files(s, a, change.digests, change.entry)
            return
        written: list[Written] = []
        if change.session or change.tasks or a is None:
            written.append((s.session_id, None))
        if a is not None:
            written.append((s.session_id, a.agent_id))
        with self.tx(*written):
            if change.session:
                self._put_session(s)
            if a is not None:
                if change.catalog:
                    self._put_catalog(s, a)
                elif change.agent:
                    self._put_agent(s, a)
                if change.files:
                    self._sync_files(s, a, change.digests, change.entry)
                for skill in change.skills:
                    self._put_skill(s, a, skill)
            for task in change.tasks:
                self._put_task(s, task)

    def write_session(self, s: Session) -> None:
        with self._writing(s):
            self._write_session(s)

    def _write_session(self, s: Session) -> None:
        written = [(s.session_id, None), *((s.session_id, aid) for aid in s.agents)]
        with self.tx(*written):
            self._put_session(s)
            for a in s.agents.values():
                self._put_catalog(s, a)
                self._sync_files(s, a, {})
                for skill in a.skills.values():
                    self._put_skill(s, a, skill)
            for task in s.tasks.values():
                self._put_task(s, task)

    # --- sessions -----------------------------------------------------------------------------

    def _put_session(self, s: Session) -> None:
        with self.tx((s.session_id, None)):
            cur = self.db.execute(
                self._INSERT_SESSION,
                (
                    s.session_id,
                    self._next_seq(),
                    s.cwd,
                    s.home,
                    json.dumps(s.roots),
                    sorted_strings(s.memory_paths),
                    s.plans_directory,
                    s.policy.SerializeToString(),
                    int(s.profile),
                    s.created_at_ms,
                    s.last_active_ms,
                    s.templates_spec,
                ),
            )
            self._session_put(s, cur.rowcount)
            self._active[s.session_id] = s.last_active_ms
            for a in s.agents.values():
                self._put_agent(s, a)

    def _session_put(self, s: Session, rowcount: int) -> None:
        """The session's row was inserted, or its activity updated (`rowcount` rows). Nothing
        by default."""
        return

    def delete_session(self, session_id: str) -> None:
        self._delete_session(session_id)

    def delete_agent(self, s: Session, agent_id: str) -> None:
        key = (s.session_id, agent_id)
        with self._writing(s), self.tx(key):
            for table in _AGENT_TABLES:
                self.db.execute(f"DELETE FROM {table} WHERE session_id = ? AND agent_id = ?", key)
            self._touch(s)
            self._after_commit.append(lambda: self._forget_files(key))

    def _forget_files(self, key: tuple[str, str]) -> None:
        self._files.pop(key, None)

    def _delete_session(self, session_id: str) -> None:
        with self.tx((session_id, None)):
            for table in SESSION_TABLES:
                self.db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            self._active.pop(session_id, None)
            self._files.forget(session_id)
            self._orig_hash.pop(session_id, None)

    def flush_activity(self, sessions: Iterable[Session]) -> None:
        """Store last_active_ms of sessions touched by read-only calls since their last write."""
        stale = [s for s in sessions if self._active.get(s.session_id) != s.last_active_ms]
        if stale:
            with self._activity_tx(*((s.session_id, None) for s in stale)):
                for s in stale:
                    self._touch(s, exact=True)

    def _activity_tx(self, *written: Written) -> contextlib.AbstractContextManager[None]:
        """The transaction storing activity times alone."""
        return self.tx(*written)

    # --- what is stored, from the database (not from memory) ----------------------------------

    def forget(self, session_id: str) -> None:
        """The session left memory (evicted, not deleted): what this store knows of its rows
        goes too; it is read again when next named."""
        self._forget(session_id, None)

    def _reading(self, fn: Callable[[], _T]) -> _T:
        """`fn()`, a read of no one session; the database's error as the store's
        (STATE_BUSY, STATE_READ_FAILED)."""
        try:
            self._ready_to_read()
            return fn()
        except self._errors as exc:
            raise self._read_error(exc) from None

    def _ready_to_read(self) -> None:
        """Before a read: the connection usable (PostgreSQL's is made again when lost)."""
        return

    def idle_sessions(self, before_ms: int, limit: int) -> list[str]:
        """Up to `limit` stored sessions whose last activity is before `before_ms`, the oldest
        first (the `sessions_by_activity` index)."""
        return self._reading(lambda: self._idle_sessions(before_ms, limit))

    def count_sessions(self) -> int:
        return self._reading(self._count_sessions)

    def session_page(self, after: str | None, limit: int) -> list[pb.SessionInfo]:
        """Up to `limit` stored sessions in id order after `after` (None: from the first), as
        ListSessions reports them: their agents, file entries and compactions counted from
        their rows. A session row this daemon cannot decode is listed by its id and times
        (it is quarantined when the session is first used)."""
        return self._reading(lambda: self._session_page(after, limit))

    def totals(self) -> tuple[int, int, int, int, int]:
        """(sessions, agents, file entries, their content bytes, compactions) stored."""
        return self._reading(self._totals)

    def _idle_sessions(self, before_ms: int, limit: int) -> list[str]:
        rows = self.db.execute(
            "SELECT session_id FROM sessions WHERE last_active_ms < ? "
            "ORDER BY last_active_ms LIMIT ?",
            (before_ms, limit),
        )
        return [str(row[0]) for row in rows]

    def expire_session(self, session_id: str, before_ms: int) -> bool:
        """Delete the session's rows in one transaction if its stored activity is still before
        `before_ms` (False: it was used since — through another daemon too — and stays)."""
        with self._activity_tx((session_id, None)):
            cur = self.db.execute(
                "DELETE FROM sessions WHERE session_id = ? AND last_active_ms < ?",
                (session_id, before_ms),
            )
            if cur.rowcount != 1:
                return False
            for table in SESSION_TABLES:
                if table != "sessions":
                    self.db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
            self._after_commit.append(functools.partial(self._forget, session_id, None))
        return True

    def _count_sessions(self) -> int:
        row = self.db.execute("SELECT count(*) FROM sessions").fetchone()
        return int(row[0]) if row is not None else 0

    def _session_page(self, after: str | None, limit: int) -> list[pb.SessionInfo]:
        where, args = ("", ()) if after is None else (" WHERE session_id > ?", (after,))
        rows = list(
            select_rows(self.db, "sessions", f"{where} ORDER BY session_id LIMIT ?", (*args, limit))
        )
        if not rows:
            return []
        ids = [str(row["session_id"]) for _, row in rows]
        marks = ", ".join("?" * len(ids))
        agents: dict[str, list[tuple[str, int]]] = {}
        for sid, aid, compactions in self.db.execute(
            f"SELECT session_id, agent_id, compactions FROM agents WHERE session_id IN ({marks}) "
            "ORDER BY session_id, seq",
            ids,
        ):
            agents.setdefault(str(sid), []).append((str(aid), int(compactions)))
        files: dict[str, tuple[int, int]] = {}
        for sid, entries, size in self.db.execute(
            f"SELECT session_id, count(*), coalesce(sum(content_len), 0) FROM files "
            f"WHERE session_id IN ({marks}) GROUP BY session_id",
            ids,
        ):
            files[str(sid)] = (int(entries), int(size))
        out: list[pb.SessionInfo] = []
        for _, row in rows:
            sid = str(row["session_id"])
            members = agents.get(sid, [])
            ids_of = [aid for aid, _ in members]
            if MAIN_AGENT not in ids_of:
                ids_of.insert(0, MAIN_AGENT)
            entries, size = files.get(sid, (0, 0))
            info = pb.SessionInfo(
                session_id=sid,
                agent_ids=ids_of,
                cached_entries=entries,
                cached_bytes=size,
                compactions=sum(c for _, c in members),
            )
            try:
                s = session_of(row)
            except BadRow:
                info.last_active_ms = int(row["last_active_ms"] or 0)
            else:
                info.cwd, info.created_at_ms = s.cwd, s.created_at_ms
                info.last_active_ms, info.profile = s.last_active_ms, s.profile
                info.roots.extend(s.roots)
            out.append(info)
        return out

    def _totals(self) -> tuple[int, int, int, int, int]:
        row = self.db.execute(
            "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM agents), "
            "(SELECT count(*) FROM files), (SELECT coalesce(sum(content_len), 0) FROM files), "
            "(SELECT coalesce(sum(compactions), 0) FROM agents)"
        ).fetchone()
        if row is None:
            return 0, 0, 0, 0, 0
        sessions, agents, entries, size, compactions = (int(v) for v in row)
        return sessions, agents, entries, size, compactions

    def pool(self, size: int) -> Sequence[SqlStore]:
        """The connections the store's calls run on (`state.worker.StoreWorker`): this one (a
        database with one writer); PostgreSQL's are `size`."""
        return [self]

    # --- agents -------------------------------------------------------------------------------

    def _put_agent(self, s: Session, a: AgentState) -> None:
        with self.tx((s.session_id, a.agent_id)):
            self.db.execute(
                _UPSERT_AGENT,
                (
                    s.session_id,
                    a.agent_id,
                    self._next_seq(),
                    a.plan_file_path,
                    int(a.mode),
                    a.compactions,
                    sorted_strings(a.nested_memory),
                    _announced_json(a.catalog),
                    a.parent_agent_id,
                    _carried_json(a, self._files.get((s.session_id, a.agent_id), {})),
                ),
            )
            self._touch(s)

    def _put_catalog(self, s: Session, a: AgentState) -> None:
        with self.tx((s.session_id, a.agent_id)):
            self.db.execute(
                _UPSERT_CATALOG,
                (s.session_id, a.agent_id, catalog_parts(a.catalog).SerializeToString()),
            )
            self._put_agent(s, a)

    def _put_skill(self, s: Session, a: AgentState, skill: InvokedSkill) -> None:
        with self.tx((s.session_id, a.agent_id)):
            self.db.execute(
                _UPSERT_SKILL,
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

    def _put_task(self, s: Session, task: pb.Task) -> None:
        with self.tx((s.session_id, None)):
            self.db.execute(
                _UPSERT_TASK,
                (s.session_id, task.task_id, self._next_seq(), task.SerializeToString()),
            )
            self._touch(s)

    # --- file-state cache mirror ----------------------------------------------------------------

    def _hash_of(
        self, sid: str, st: FileState, prev: _Row | None, hint: tuple[bytes, bytes] | None
    ) -> tuple[bytes, int]:
        """The digest and length to store for `st`, hashing only when nothing else knows it:
        an unverified loaded entry keeps its stored hash; a hash computed off the event loop
        (`Change.digests`) is taken when it is of this very content object; an entry whose
        content equals the row it replaces (a re-read, a Compact re-seed) keeps that row's."""
        content = st.content
        orig = self._orig_hash.get(sid, {}).get(id(st))
        if orig is not None and orig[0] is st:
            return orig[1], orig[2]
        if hint is not None and hint[0] is content:
            return hint[1], len(content)
        if prev is not None and prev.size == len(content) and prev.state.content == content:
            return prev.digest, prev.size
        return content_digest(content), len(content)

    def _sync_files(
        self,
        s: Session,
        a: AgentState,
        hints: Mapping[str, tuple[bytes, bytes]],
        entry: str | None = None,
    ) -> None:
        """Make the agent's stored file rows equal its cache (entries, metadata, recency);
        `hints`: digests of contents just read (`Change.digests`); `entry`: the one entry the
        unit set or used and nothing else (`Change.entry`).

        Rows whose entry did not change are skipped; an entry whose content and range stay (a
        re-read of an unchanged file, a Compact re-seed) only moves (`_MOVE_FILE`: its place,
        time and marks); the changes go as one executemany per statement, in one transaction."""
        key = (s.session_id, a.agent_id)
        sid, aid = key
        old = self._files.get(key, {})
        if entry is not None and self._sync_entry(s, a, hints, entry, old):
            return
        new: dict[str, _Row] = {}
        upserts: list[tuple[Any, ...]] = []
        moves: list[tuple[Any, ...]] = []
        last = -1
        for path, st in reversed(a.files.snapshot()):  # least recently used first
            mark = a.read_mtimes.get(path)
            seen = a.seen.get(path)
            prev = old.get(path)
            if prev is not None and prev.restamped(st):
                if (
                    prev.state.timestamp == st.timestamp
                    and prev.mark == mark
                    and prev.seen == seen
                    and prev.seq > last
                ):  # the row stands as it is
                    row = (
                        prev
                        if prev.state is st
                        else _Row(st, prev.seq, mark, prev.digest, prev.size, seen)
                    )
                else:
                    row = _Row(st, self._next_seq(), mark, prev.digest, prev.size, seen)
                    moves.append(_move_args(key, path, row))
            else:
                digest, size = self._hash_of(s.session_id, st, prev, hints.get(path))
                row = _Row(st, self._next_seq(), mark, digest, size, seen)
                upserts.append(_upsert_args(key, path, row))
            new[path] = row
            last = row.seq
        gone = [(sid, aid, p) for p in old if p not in new]
        if not (upserts or moves or gone) and not self._activity_due(s):
            self._files[key] = new  # equal entries only: the stored rows stand as they are
            return
        with self.tx(key):
            if gone and len(gone) == len(old):  # nothing kept (a clear): one delete
                self.db.execute(_DELETE_AGENT_FILES, (sid, aid))
            elif gone:
                self.db.executemany(_DELETE_FILE, gone)
            if moves:
                self.db.executemany(_MOVE_FILE, moves)
            if upserts:
                self.db.executemany(_UPSERT_FILE, upserts)
            self._touch(s)
            self._after_commit.append(lambda: self._files.__setitem__(key, new))

    def _sync_entry(
        self,
        s: Session,
        a: AgentState,
        hints: Mapping[str, tuple[bytes, bytes]],
        path: str,
        old: dict[str, _Row],
    ) -> bool:
        """`_sync_files` for a unit that set or used `path` alone (a read, a recorded write):
        its row written as the most recently used, the others left as they are — when the rows
        mirrored the cache before the unit and nothing was evicted (the cache holds the rows'
        entries and at most `path` more). False: the caller syncs the whole cache."""
        st = a.files.peek(path)
        if st is None or len(a.files) != len(old) + (path not in old):
            return False
        key = (s.session_id, a.agent_id)
        mark, seen, prev = a.read_mtimes.get(path), a.seen.get(path), old.get(path)
        if prev is not None and prev.restamped(st):
            row = _Row(st, self._next_seq(), mark, prev.digest, prev.size, seen)
            sql, args = _MOVE_FILE, _move_args(key, path, row)
        else:
            digest, size = self._hash_of(s.session_id, st, prev, hints.get(path))
            row = _Row(st, self._next_seq(), mark, digest, size, seen)
            sql, args = _UPSERT_FILE, _upsert_args(key, path, row)
        touch = self._activity_due(s)  # (always for a session not stored: `_touch` refuses it)
        if not touch and not self._depth and self._single_statement_tx:
            self._single(key, sql, args)  # a re-read's or a recorded write's one statement
            self._files.setdefault(key, {})[path] = row
            return True
        with self.tx(key, single=not touch):  # the row's one statement, unless the touch is due
            self.db.execute(sql, args)
            if touch:
                self._touch(s)
            # Once committed the mirror gains the row in place (no copy of the agent's rows).
            self._after_commit.append(
                lambda: self._files.setdefault(key, {}).__setitem__(path, row)
            )
        return True

    # --- loading ------------------------------------------------------------------------------

    def _quarantine(self, only: str | None = None) -> list[RowProblem]:
        """Move every row `scan_rows` finds (of the session `only`, or of all) to the quarantine
        table (deleted first: a database at max_page_count reuses their pages), in one
        transaction; a warning for each. The database's error propagates."""
        db = self.db
        self._begin(())
        try:
            problems = scan_rows(db, only)
            for table in dict.fromkeys(p.table for p in problems):
                db.executemany(
                    f"DELETE FROM {table} WHERE {db.rowid} = {db.rowid_param}",
                    [(p.rowid,) for p in problems if p.table == table],
                )
            at = now_ms()
            db.executemany(
                _QUARANTINE,
                [(p.table, row_json(p.key), row_json(p.row), p.reason, at) for p in problems],
            )
            self._commit()
        except BaseException:
            with contextlib.suppress(*self._errors):
                db.execute("ROLLBACK")
            raise
        for p in problems[:_LOGGED_PROBLEMS]:
            log.warning(
                "a row of the state database cannot be used: moved to its quarantine table",
                extra={
                    "state_db": self.where,
                    "table": p.table,
                    "key": row_json(p.key),
                    "reason": p.reason,
                },
            )
        if len(problems) > _LOGGED_PROBLEMS:
            log.warning(
                "more rows of the state database moved to its quarantine table",
                extra={"state_db": self.where, "rows": len(problems) - _LOGGED_PROBLEMS},
            )
        return problems

    def load_session(
        self,
        session_id: str,
        new_cache: Callable[[Session], FileStateCache],
        agents: Iterable[str] | None = None,
    ) -> Session | None:
        """The session as stored (None if it is not), rebuilt (contents re-read), with all its
        agents or only those of `agents` that are stored; what this store remembers of the
        rows read is replaced by them.

        Rows it cannot use (a tool, an older or newer daemon wrote them) are quarantined, and
        the session read again: SessionQuarantined when its own row was
        one. A read that fails raises the store's error (`_read_error`: STATE_BUSY for a lock
        held elsewhere) and leaves what this store knew of the session as it was: the registry
        still holds the session so, and a later read starts again (a read half done must not
        pass for the session read, or the session would never be read again)."""
        only = None if agents is None else frozenset(agents)
        keys = self._files.keys_of(session_id, only)
        active, files = self._active.get(session_id), {k: self._files[k] for k in keys}
        try:
            found = self._read_quarantining(new_cache, session_id, only)
        except SessionQuarantined:
            self._forget(session_id, None)
            raise
        except BaseException as exc:
            self._forget(session_id, only)
            self._files.update(files)
            if active is not None:
                self._active[session_id] = active
            if isinstance(exc, self._errors):
                raise self._read_error(exc) from None
            raise
        return found[0] if found else None

    def _forget(self, session_id: str, agents: frozenset[str] | None) -> None:
        """Forget what this store remembers of the session's rows (of `agents` only, unless
        None), before they are read (again)."""
        self._active.pop(session_id, None)
        self._dropped = []
        if agents is None:
            self._files.forget(session_id)
            self._orig_hash.pop(session_id, None)
            return
        for key in self._files.keys_of(session_id, agents):
            del self._files[key]

    def _read_quarantining(
        self,
        new_cache: Callable[[Session], FileStateCache],
        session_id: str,
        agents: frozenset[str] | None,
    ) -> list[Session]:
        """`_read` of the one session; when a row fails the checks (or cannot even be read:
        text that does not decode), the session's unusable rows are quarantined (`_quarantine`)
        and it is read again. Rows of a session whose own row is missing are quarantined too
        (SessionQuarantined: its rows were set aside)."""
        why = ""
        for _ in range(_READ_ROUNDS):
            self._forget(session_id, agents)
            failed: Exception | None = None
            orphans = False
            try:
                found = self._read(new_cache, LoadReport(), session_id, agents)
            except BadRow as exc:
                why = str(exc)
            except self._errors as exc:
                if self._is_busy(exc):
                    raise
                why, failed = error_text(exc), exc
            else:
                if found or agents is not None or not self._has_rows(session_id):
                    return found
                orphans, why = True, "its session is not stored"
            try:
                problems = self._quarantine(session_id)
            except self._errors as exc:
                if self._is_busy(exc):
                    raise
                raise FailedPrecondition(
                    "STATE_ROW_UNUSABLE",
                    f"moving an unusable row of session {session_id!r} to the quarantine table "
                    f"failed ({error_text(exc)}); " + self._hint() + f"; the row: {why}",
                    {"session_id": session_id},
                ) from None
            own = [p for p in problems if p.table == "sessions"]
            if own:
                raise SessionQuarantined(session_id, own[0].reason, self.where)
            if orphans and problems:
                raise SessionQuarantined(session_id, problems[0].reason, self.where)
            if not problems:
                if failed is not None:
                    raise failed  # not a row's fault: the store's error
                break  # the checks pass what the load refuses: no way to go on
        raise FailedPrecondition(
            "STATE_ROW_UNUSABLE",
            f"a stored row of session {session_id!r} cannot be used ({why}) and could not be "
            f"moved to the quarantine table of the state database {self.where}; " + self._hint(),
            {"session_id": session_id},
        )

    def _has_rows(self, session_id: str) -> bool:
        """Whether any table holds rows of `session_id` (whose own row is not stored)."""
        return any(
            self.db.execute(
                f"SELECT 1 FROM {table} WHERE session_id = ? LIMIT 1", (session_id,)
            ).fetchone()
            is not None
            for table in SESSION_TABLES
            if table != "sessions"
        )

    def _read(
        self,
        new_cache: Callable[[Session], FileStateCache],
        report: LoadReport,
        only: str | None = None,
        agents: frozenset[str] | None = None,
    ) -> list[Session]:
        """The stored sessions (or only the one with id `only`), oldest first; with `agents`,
        only those agents of it. Rows are decoded by the checks of `scan_rows`: a row failing
        them raises BadRow (`_read_quarantining` moves it and reads again). All of it is read at one
        moment (`_snapshot`); the entries over the caches' bounds are deleted after."""
        with self._snapshot():
            sessions = self._read_rows(new_cache, report, only, agents)
        dropped, self._dropped = self._dropped, []
        for sid, aid, paths in dropped:
            with self.tx((sid, aid)):
                self.db.executemany(_DELETE_FILE, [(sid, aid, p) for p in paths])
        return sessions

    def _snapshot(self) -> contextlib.AbstractContextManager[None]:
        """What makes the reads of `_read` see the database at one moment (SQLite: nothing, no
        one else writes it)."""
        return contextlib.nullcontext()

    def _read_rows(
        self,
        new_cache: Callable[[Session], FileStateCache],
        report: LoadReport,
        only: str | None,
        agents: frozenset[str] | None,
    ) -> list[Session]:
        c = self.db
        where, args = ("", ()) if only is None else (" WHERE session_id = ?", (only,))
        sessions: dict[str, Session] = {}
        for _, row in select_rows(c, "sessions", f"{where} ORDER BY seq", args):
            s = session_of(row)
            sessions[s.session_id] = s
            self._active[s.session_id] = s.last_active_ms
            self._stored_session(row)
            self._memo.saw_seq(row["seq"])
        catalogs = {
            (cat.session_id, cat.agent_id): cat
            for cat in (catalog_of(row) for _, row in select_rows(c, "catalogs", where, args))
        }
        for _, row in select_rows(c, "agents", f"{where} ORDER BY seq", args):
            r = agent_of(row)
            owner = sessions.get(r.session_id)
            if owner is None or (agents is not None and r.agent_id not in agents):
                continue
            self._memo.saw_seq(row["seq"])
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
        whole = agents is None  # every row of the session read: one of no agent is unusable
        if whole:
            for sid, aid in catalogs:
                owner = sessions.get(sid)
                if owner is not None and aid not in owner.agents:
                    raise BadRow("its agent is not stored")
            self._check_file_owners(sessions, where, args)
        for _, row in select_rows(c, "skills", f"{where} ORDER BY seq", args):
            owner = sessions.get(row["session_id"])
            agent = owner.agents.get(row["agent_id"]) if owner is not None else None
            if agent is not None:
                skill = skill_of(row)
                self._memo.saw_seq(row["seq"])
                agent.skills[skill.name] = skill
                report.skills += 1
            elif whole and owner is not None:
                raise BadRow("its agent is not stored")
        for _, row in select_rows(c, "tasks", f"{where} ORDER BY seq", args):
            if row["session_id"] in sessions:
                sessions[row["session_id"]].tasks[row["task_id"]] = task_of(row)
                self._memo.saw_seq(row["seq"])
                report.tasks += 1
        return list(sessions.values())

    def _check_file_owners(
        self, sessions: Mapping[str, Session], where: str, args: Sequence[Any]
    ) -> None:
        """BadRow when a file row of the sessions read is of an agent that is not stored (the
        files are read agent by agent, so such a row is not otherwise met)."""
        for sid, aid in self.db.execute(
            f"SELECT DISTINCT session_id, agent_id FROM files{where}", args
        ):
            owner = sessions.get(str(sid))
            if owner is not None and aid not in owner.agents:
                raise BadRow("its agent is not stored")

    def _load_files(self, s: Session, a: AgentState, report: LoadReport) -> None:
        rows = select_rows(
            self.db,
            "files",
            " WHERE session_id = ? AND agent_id = ? ORDER BY seq DESC",
            (s.session_id, a.agent_id),
        )
        entries: list[tuple[str, FileState]] = []
        loaded: dict[str, _Row] = {}
        for _, row in rows:
            f = file_of(row, s.cwd, s.home)
            self._memo.saw_seq(f.seq)
            content = verified_content(
                f.path,
                f.offset,
                f.limit,
                f.digest,
                f.size,
                roots=s.read_roots,
                deny_globs=self.deny_globs,
            )
            st = FileState(content or b"", f.timestamp, f.offset, f.limit, f.partial_view)
            if content is None:
                a.unverified[f.path] = st
                self._orig_hash.setdefault(s.session_id, {})[id(st)] = (st, f.digest, f.size)
                report.unverified += 1
            if f.mark is not None:
                a.read_mtimes[f.path] = f.mark
            if f.seen is not None:
                a.seen[f.path] = f.seen
            entries.append((f.path, st))
            loaded[f.path] = _Row(st, f.seq, f.mark, f.digest, f.size, f.seen)
        a.files.load(entries)
        kept = set(a.files.keys())
        report.files += len(kept)
        self._files[(s.session_id, a.agent_id)] = {p: r for p, r in loaded.items() if p in kept}
        # Entries the cache does not take: its bounds shrank since (every path is its own key,
        # `file_of`). Said, then deleted (by `_read`, once it has read everything).
        dropped = [p for p in loaded if p not in kept]
        if dropped:
            log.info(
                "file entries over the cache's bounds dropped at load",
                extra={
                    "state_db": self.where,
                    "session_id": s.session_id,
                    "agent_id": a.agent_id,
                    "entries": len(dropped),
                },
            )
            self._dropped.append((s.session_id, a.agent_id, dropped))

    @abc.abstractmethod
    def _hint(self) -> str:
        """The way out an error about the database names."""

    @abc.abstractmethod
    def close(self) -> None:
        """Close the connection and release what the store holds (the lock, for SQLite)."""


class SqliteStore(SqlStore):
    """Write-through persistence in one SQLite database file, used by one daemon at a time (its
    lock), with a reserve for deleting on a full disk."""

    path: Path
    _errors = (sqlite3.Error,)
    _single_statement_tx = True

    def __init__(self, path: Path, *, max_bytes: int, deny_globs: Sequence[str] = ()):
        self.path = path
        check_state_place(path)
        self._lock = DbLock(path)
        self._lock.acquire()
        try:
            self.conn = open_checked(path)
        except BaseException:
            self._lock.release()
            raise
        super().__init__(SqliteDb(self.conn), str(path), max_bytes=max_bytes, deny_globs=deny_globs)
        self.reserve = path.with_name(path.name + ".reserve")
        self.restore_reserve()
        self.page_size = int(self.conn.execute("PRAGMA page_size").fetchone()[0])
        # check_room: each write may grow the b-trees by this many pages besides its bytes.
        self._room_slack = _ROOM_SLACK_PAGES * self.page_size
        # The hard backstop of limits.max_state_bytes: SQLite refuses to grow past it.
        pages = max(1, max_bytes // self.page_size)
        self.conn.execute(f"PRAGMA max_page_count = {int(pages)}")

    def _begin(self, written: Iterable[Written]) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    # Writes on the event loop (`state.worker.StoreWorker`): lent to the loop, a statement that
    # meets the write lock held elsewhere fails at once (no busy timeout) and, having written
    # nothing, goes to the store's thread, whose calls wait for locks as always (`waiting`); the
    # log is moved into the file there too (`checkpoint`), as SQLite's automatic checkpoint would
    # sync the disk inside a commit. Nothing else of a write waits: in WAL mode with
    # `synchronous = NORMAL` a commit appends to the log without a sync.
    inline_writes = True
    _lent = False

    def lend_to_loop(self) -> None:
        self.conn.execute("PRAGMA wal_autocheckpoint = 0")
        self.conn.execute("PRAGMA busy_timeout = 0")
        self._lent = True

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        if not self._lent:
            yield
            return
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        try:
            yield
        finally:
            self.conn.execute("PRAGMA busy_timeout = 0")

    def write_inline(self, s: Session, a: AgentState | None, change: Change) -> None:
        if not self._lent:  # (a store not lent to the loop waits for locks by default)
            self.conn.execute("PRAGMA busy_timeout = 0")
        self._nowait, self._applied = True, 0
        try:
            self.write(s, a, change)
        finally:
            self._nowait = False
            if not self._lent:
                self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    def checkpoint(self) -> None:
        # PASSIVE: as much as no reader still needs, without waiting for readers or writers.
        self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def _is_busy(self, exc: BaseException) -> bool:
        # Another connection's write transaction (a BEGIN EXCLUSIVE, a tool's) outlasted the
        # busy timeout (`persist.schema.connect`). Extended codes keep the primary in the low byte.
        code = getattr(exc, "sqlite_errorcode", None)
        return isinstance(code, int) and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)

    def _write_error(self, exc: Exception) -> Exception:
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

    def _hint(self) -> str:
        return reset_hint(self.path)

    def _measure(self) -> int:
        return int(self.conn.execute("PRAGMA page_count").fetchone()[0]) * self.page_size

    def used_bytes(self) -> int:
        pages = int(self.conn.execute("PRAGMA page_count").fetchone()[0])
        free = int(self.conn.execute("PRAGMA freelist_count").fetchone()[0])
        return (pages - free) * self.page_size

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

    def close(self) -> None:
        # With the busy timeout (lent to the loop it is 0): the last checkpoint waits for a
        # reader of the log as it did before, rather than leaving the log whole at once.
        with contextlib.suppress(sqlite3.Error), self.waiting():
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.close()
        self._lock.release()


def open_store(
    *,
    persist: bool,
    socket: Path,
    location: StateUrl,
    max_bytes: int,
    deny_globs: Sequence[str] = (),
) -> Store:
    """The store `location` names (the one place a daemon's store is chosen)."""
    if not persist:
        return NullStore()
    if location.kind == "postgresql":
        try:
            from postcompact.persist.postgres import PostgresStore  # psycopg only when used
        except ImportError as exc:
            if not (exc.name or "").startswith("psycopg"):
                raise
            raise StateError(
                "state_url names a PostgreSQL database, but the driver is not installed: "
                "pip install 'postcompact[postgresql]' (psycopg)"
            ) from None
        return PostgresStore(location.url, max_bytes=max_bytes, deny_globs=deny_globs)
    path = state_db_path(socket=socket, state_dir=location.dir, state_path=location.path)
    return SqliteStore(path, max_bytes=max_bytes, deny_globs=deny_globs)
