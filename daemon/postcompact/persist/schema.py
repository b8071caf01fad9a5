"""The state database's schema, its migrations, opening it checked, and the lock that keeps
one daemon on it (docs/persistence.md, "Schema versions and migrations")."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from postcompact import __version__
from postcompact.lifecycle import FileLock, make_private_dirs
from postcompact.paths import now_ms
from postcompact.persist.place import StateError, lock_path, side_files

log = logging.getLogger("postcompact.persist")


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
# {"reads": {path: [sha256 hex, length]}, "refs": {path: timestamp}} (and, in complement mode,
# "unaware": {path: timestamp}: docs/profiles.md).
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

# Sessions gain their own wording: a serialised postcompact.v1.TemplateSpec (empty: the daemon's).
_V5 = """
ALTER TABLE sessions ADD COLUMN templates BLOB NOT NULL DEFAULT x'';
"""

# File rows gain what the agent saw of the file since its last compaction (state/seen.py): the
# first and last line (NULL: nothing recorded) and whether it edited the file.
_V6 = """
ALTER TABLE files ADD COLUMN seen_first INTEGER;
ALTER TABLE files ADD COLUMN seen_last INTEGER;
ALTER TABLE files ADD COLUMN seen_edited INTEGER NOT NULL DEFAULT 0;
"""

# Sessions gain a version: the optimistic lock of a database several daemons share
# (persist/postgres.py), checked and raised by every write of the session there. SQLite, one
# daemon per file (its lock), leaves it at 1.
_V7 = """
ALTER TABLE sessions ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
"""

# Sessions are found by their activity time: expiry deletes the idle ones from the database, not
# from what a daemon holds in memory (sessions load on first use: docs/persistence.md).
_V8 = """
CREATE INDEX sessions_by_activity ON sessions (last_active_ms);
"""

# (version reached, SQL script), written for SQLite; PostgreSQL runs the same steps in its types
# (persist/postgres.py, `pg_script`). Append only; never edit a released step.
MIGRATIONS: tuple[tuple[int, str], ...] = (
    (1, _V1),
    (2, _V2),
    (3, _V3),
    (4, _V4),
    (5, _V5),
    (6, _V6),
    (7, _V7),
    (8, _V8),
)
SCHEMA_VERSION = MIGRATIONS[-1][0]

# The tables holding sessions' rows (each has a session_id column).
SESSION_TABLES = ("sessions", "agents", "catalogs", "files", "skills", "tasks")

# Every table's columns at SCHEMA_VERSION, and the key columns naming one of its rows.
COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": (
        "session_id", "seq", "cwd", "home", "roots", "memory_paths", "plans_directory", "policy",
        "profile", "created_at_ms", "last_active_ms", "templates", "version",
    ),
    "agents": (
        "session_id", "agent_id", "seq", "plan_file_path", "mode", "compactions",
        "nested_memory", "announced", "parent_agent_id", "carried",
    ),
    "catalogs": ("session_id", "agent_id", "parts"),
    "files": (
        "session_id", "agent_id", "path", "seq", "timestamp_ms", "read_offset", "read_limit",
        "partial_view", "content_sha256", "content_len", "mark_ts_ms", "mark_mtime_ms",
        "seen_first", "seen_last", "seen_edited",
    ),
    "skills": ("session_id", "agent_id", "name", "seq", "path", "content", "invoked_at_ms"),
    "tasks": ("session_id", "task_id", "seq", "task"),
    "schema_history": ("version", "applied_at_ms", "daemon_version"),
    "quarantine": (
        "id", "table_name", "row_key", "row_data", "reason", "quarantined_at_ms",
    ),
}  # fmt: skip
ROW_KEYS: dict[str, tuple[str, ...]] = {
    "sessions": ("session_id",),
    "agents": ("session_id", "agent_id"),
    "catalogs": ("session_id", "agent_id"),
    "files": ("session_id", "agent_id", "path"),
    "skills": ("session_id", "agent_id", "name"),
    "tasks": ("session_id", "task_id"),
    "schema_history": ("version",),
}
# The schema version that made a table or column ("table.column"); the others date from 1.
_SINCE = {
    "schema_history": 2,
    "agents.parent_agent_id": 3,
    "agents.carried": 3,
    "quarantine": 4,
    "sessions.templates": 5,
    "files.seen_first": 6,
    "files.seen_last": 6,
    "files.seen_edited": 6,
    "sessions.version": 7,
}
# The value a migration gives older rows in the columns it adds: how `state check` reads a
# database that `serve` has not migrated yet.
MIGRATION_DEFAULTS: dict[str, dict[str, Any]] = {
    "agents": {"parent_agent_id": "", "carried": "{}"},
    "sessions": {"templates": b"", "version": 1},
    "files": {"seen_first": None, "seen_last": None, "seen_edited": 0},
}


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


def sqlite_schema_problems(conn: sqlite3.Connection, version: int) -> list[str]:
    """The tables and columns of schema `version` that the database lacks."""
    return lacking_columns(
        lambda table: {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}, version
    )


def lacking_columns(columns_of: Callable[[str], set[str]], version: int) -> list[str]:
    """The tables and columns of schema `version` missing from a database whose tables have
    `columns_of(table)` (empty: no such table); what a migration to SCHEMA_VERSION adds is not
    lacking. Both stores' check."""
    out: list[str] = []
    for table, columns in COLUMNS.items():
        if _SINCE.get(table, 1) > version:
            continue
        have = columns_of(table)
        if not have:
            out.append(f"table {table!r} is missing")
            continue
        lacking = [c for c in columns if c not in have and _SINCE.get(f"{table}.{c}", 1) <= version]
        if lacking:
            out.append(f"table {table!r} lacks column(s) {', '.join(lacking)}")
    return out


# How long a statement waits for a lock another connection holds before it fails busy.
BUSY_TIMEOUT_MS = 5000


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating it 0600 if needed) the database in autocommit mode with WAL."""
    make_private_dirs(path.parent)
    old = os.umask(0o177)
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    finally:
        os.umask(old)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn


def reset_hint(path: Path) -> str:
    return (
        f"inspect it with `postcompact state check --state-path {path}`; "
        f"`postcompact state reset --state-path {path}` moves it aside (nothing is deleted) "
        "so the daemon starts with empty state; or run with --no-persist"
    )


# `PRAGMA quick_check` reads every page: ~0.85 s for 59 MB (100,000 sessions) on this project's
# machine. Start-up checks a database up to this size; a larger one is not read whole at start-up
# (start-up stays flat in what is stored: docs/persistence.md): a damaged page is met when a
# session on it is read or written (STATE_READ_FAILED / STATE_WRITE_FAILED, naming the file), and
# `postcompact state check` checks it all.
QUICK_CHECK_MAX_BYTES = 16 << 20


def open_checked(path: Path) -> sqlite3.Connection:
    """Open, verify (version; quick_check up to QUICK_CHECK_MAX_BYTES) and migrate the database;
    StateError when unusable."""
    if os.path.lexists(path):
        try:
            check_is_database(path)
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
                f"postcompact, or {reset_hint(path)}"
            )
        problems = ["ok"]
        if path.stat().st_size <= QUICK_CHECK_MAX_BYTES:
            problems = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
        if problems != ["ok"]:
            raise StateError(
                f"the state database {path} is corrupt ({'; '.join(problems[:3])}); "
                + reset_hint(path)
            )
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StateError(f"the state database {path} cannot use WAL mode (got {mode})")
        conn.execute("PRAGMA synchronous = NORMAL")
        migrate(conn)
        lacking = sqlite_schema_problems(conn, SCHEMA_VERSION)
        if lacking:
            raise StateError(
                f"the state database {path} (schema version {version}): {lacking[0]}; "
                + reset_hint(path)
            )
    except StateError:
        conn.close()
        raise
    except sqlite3.Error as exc:
        conn.close()
        raise StateError(
            f"the state database {path} is unreadable or corrupt ({exc}); " + reset_hint(path)
        ) from None
    with contextlib.suppress(OSError):
        os.chmod(path, 0o600)
    return conn


class DbLock(FileLock):
    """An exclusive flock on `<db>.lock` held while a daemon uses the database."""

    def __init__(self, db: Path):
        super().__init__(lock_path(db))

    def busy(self) -> Exception:
        return StateError(
            f"the state database {self.path.with_suffix('')} is in use by another "
            "postcompact daemon; give this one its own with --state-dir, or stop the other one"
        )

    def acquire(self) -> None:
        make_private_dirs(self.path.parent)
        super().acquire()


SQLITE_HEADER = b"SQLite format 3\x00"


def check_is_database(path: Path) -> None:
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
