"""The one connection interface the stores, the row checks and `state check` share, over SQLite
and PostgreSQL (docs/persistence.md, "Stores").

Statements are written once, with `?` placeholders and the SQL both databases take (upserts as
`INSERT ... ON CONFLICT ... DO UPDATE`); `PgDb` rewrites the placeholders to psycopg's `%s`
once per statement text. A row's physical address, for the quarantine's deletes, is SQLite's
`rowid` or PostgreSQL's `ctid` (stable within the one transaction that reads and deletes it).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol


class Cursor(Protocol):
    @property
    def description(self) -> Any: ...

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Db(Protocol):
    """A connection in autocommit mode: transactions are opened with explicit statements."""

    rowid: str  # the column naming a row's physical address
    rowid_param: str  # its placeholder in a WHERE clause

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Cursor: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...

    def has_table(self, name: str) -> bool: ...

    def lenient_text(self) -> contextlib.AbstractContextManager[None]: ...


def _decode_text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


class SqliteDb:
    """`Db` over a sqlite3 connection (its methods bound directly: no extra call per statement)."""

    rowid = "rowid"
    rowid_param = "?"

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.execute = conn.execute  # type: ignore[method-assign,assignment]

    def execute(self, sql: str, args: Sequence[Any] = ()) -> Cursor:  # replaced in __init__
        return self.conn.execute(sql, args)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.conn.executemany(sql, rows)

    def has_table(self, name: str) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)
        ).fetchone()
        return row is not None

    @contextlib.contextmanager
    def lenient_text(self) -> Iterator[None]:
        """TEXT that is not UTF-8 read with surrogate escapes, for the checks to name its row;
        sqlite3 would otherwise fail the whole query."""
        old = self.conn.text_factory
        self.conn.text_factory = _decode_text
        try:
            yield
        finally:
            self.conn.text_factory = old
