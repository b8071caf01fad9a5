"""`postcompact state check` and `postcompact state reset` (docs/persistence.md)."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from postcompact.persist.place import StateError, side_files
from postcompact.persist.rows import (
    BadRow,
    RowProblem,
    history_of,
    scan_rows,
    select_rows,
)
from postcompact.persist.schema import (
    SCHEMA_VERSION,
    SESSION_TABLES,
    DbLock,
    check_is_database,
    sqlite_schema_problems,
)
from postcompact.persist.sql import Db, SqliteDb

log = logging.getLogger("postcompact.persist")


# --- `postcompact state check | reset` -----------------------------------------------------------


@dataclass(slots=True)
class CheckResult:
    path: Path | str  # a file, or a redacted PostgreSQL URL
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
        check_is_database(path)
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
            res.problems += sqlite_schema_problems(conn, res.version)
            check_rows(SqliteDb(conn), res)
            conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        res.problems.append(str(exc))
    finally:
        conn.close()
    res.ok = not res.problems and not res.bad_rows
    return res


def check_rows(db: Db, res: CheckResult) -> None:
    """Counts, history and the rows `serve` would quarantine (`scan_rows`), unless the tables
    lack what the checks read (`res.problems` says so already). Both stores' `state check`."""
    for table in SESSION_TABLES:
        if db.has_table(table):
            res.counts[table] = int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    if db.has_table("quarantine"):
        res.quarantined = int(db.execute("SELECT count(*) FROM quarantine").fetchone()[0])
    if res.problems:
        return
    res.bad_rows = scan_rows(db)
    if db.has_table("schema_history"):
        with db.lenient_text():
            for _, row in select_rows(db, "schema_history", " ORDER BY version"):
                with contextlib.suppress(BadRow):  # a bad one is in bad_rows
                    res.history.append(history_of(row))


def reset_db(path: Path) -> Path | None:
    """Move the database (and its WAL and shm files) aside as `<name>.bak-<timestamp>`.

    Returns the backup path, or None when there was nothing to move. Refuses (StateError) while
    a daemon uses the database.
    """
    if not any(os.path.lexists(p) for p in side_files(path)):
        return None
    check_is_database(path)
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
