"""Durable state: an embedded SQLite database in WAL mode, or a PostgreSQL database several
daemons share (`postgres.PostgresStore`, docs/fleet.md) (docs/architecture.md §5,
docs/persistence.md). What follows is said of SQLite; both are one `SqlStore`.

What is stored is the small durable record of docs/architecture.md §2 — sessions (settings, policy,
profile, memory paths, roots, plans directory, times), agents (plan file, permission mode,
compaction count, nested-memory set, catalogue and what was announced, skill names already
listed), file-state METADATA (path, timestamp, range, partial view, SHA-256 and length of the
content, the mtime seen by the read — never the content), invoked skills and tasks. File contents
are re-read from disk: restoration does that anyway.

Write-through. Every mutating RPC writes its change in one small transaction before it returns
(the `Change` its unit of work names, `SqliteStore.write`; postcompact.state.registry),
so nothing acknowledged to a client is lost when the daemon process dies (`kill -9`): with WAL and
`synchronous=NORMAL` a committed transaction is in the WAL file (the OS page cache) once COMMIT
returns. An operating-system crash or power loss may lose the last transactions; that is not the
requirement (docs/persistence.md). Statements are fixed strings (sqlite3 caches them prepared);
nothing is rewritten in full per call: the file-state cache is mirrored by diffing it against what
was last written (new or changed entries are upserted, evicted ones deleted; an entry whose
content and range stay — a recency change, a re-read of an unchanged file, a re-seed — is an
update of its place, time and marks; each kind one executemany), so a Compact that clears and
re-seeds the cache becomes those updates and upserts of the restored entries plus the deletes of
the others. Content hashes are reused from the replaced row when the content is equal, else taken
from the read that just produced the content (`Change.digests`), else computed here.

Failed writes. A transaction names what it writes: `(session_id, agent_id)` for an agent's rows
(its row, catalogue, files, skills), `(session_id, None)` for the session's own (its row, tasks).
When it fails (the disk is full, an I/O error), it is rolled back and exactly those are re-read
from the database into memory (`on_failed_write`, the registry's resync): the call that changed
memory before writing fails, and leaves nothing behind that a later call could see. A write that
met a lock held elsewhere past the timeout fails UNAVAILABLE `STATE_BUSY` with a RetryInfo, and
is re-read when its session is next named (reading at once would wait as long again).

Loading. Start-up reads no session (docs/persistence.md, "Sessions in memory"): a session is read
back when a call first names it (`load_session`), each agent's file-state cache rebuilt in the
same most-recently-used order. The content of each entry is re-read from disk and kept only when
its SHA-256 matches the stored one; otherwise (the file changed, vanished or cannot be read) the
entry is kept with empty content and listed in `AgentState.unverified`, which makes it never
"unchanged" (ReadFile gives the full text, not the dedup stub) and makes CheckWrite's full-read
equality exception fail, so a file modified meanwhile is MODIFIED. Expiry, ListSessions and
GetStats query the database (`idle_sessions`, `expire_session`, `session_page`, `totals`). The
store's calls run on its connections' threads, never on the event loop (`state.worker`).

Bad rows. Every stored value is decoded by one set of checks (`scan_rows`, the `*_of`
decoders): a row whose values the daemon cannot use (bad JSON, a protobuf that does not parse, a
relative path, an unknown profile...), and every row of a session or agent whose own row is bad or
missing, is moved to the `quarantine` table with a warning when its session is read
(`load_session`: `SESSION_QUARANTINED` if the session's own row goes), and the rest is served;
`postcompact state check` runs the same checks and reports those rows without moving them.

Schema. `PRAGMA user_version` is the schema version; `MIGRATIONS` upgrades an older database in
one transaction. A database newer than this daemon, one that is corrupt, or one whose tables lack
a column refuses to start with an error naming the file and the way out (`postcompact state
check` / `state reset`).

The package, one module per job: `place` (where the database lives, `StateError`), `schema`
(tables, migrations, opening checked, the instance lock), `sql` (the connection interface both
databases are used through), `verify` (content hashes checked against disk at load), `rows` (the
row checks shared by the load and `state check`), `jsontext` (the JSON text of an agent row's
small columns, without `json.dumps`' per-call set-up), `sqlstore` (`SqlStore`, `SqliteStore`, the
codecs of what they write, `open_store`: the one place the store is chosen), `postgres` (the
PostgreSQL store, its connection, schema and `state check`; imported only when used) and `admin`
(`state check`, `state reset`).
"""

from __future__ import annotations

from postcompact.persist.admin import CheckResult, check_db, check_rows, reset_db
from postcompact.persist.place import STATE_DB_NAME, StateError, default_state_dir, state_db_path
from postcompact.persist.rows import BadRow, RowProblem, scan_rows
from postcompact.persist.schema import MIGRATIONS, SCHEMA_VERSION, connect, migrate, open_checked
from postcompact.persist.sqlstore import LoadReport, SqliteStore, SqlStore, open_store
from postcompact.persist.verify import verified_content
from postcompact.state import ROW_BYTES, Store, Written, content_digest
from postcompact.state.null import NullStore

__all__ = [
    "MIGRATIONS",
    "ROW_BYTES",
    "SCHEMA_VERSION",
    "STATE_DB_NAME",
    "BadRow",
    "CheckResult",
    "LoadReport",
    "NullStore",
    "RowProblem",
    "SqlStore",
    "SqliteStore",
    "StateError",
    "Store",
    "Written",
    "check_db",
    "check_rows",
    "connect",
    "content_digest",
    "default_state_dir",
    "migrate",
    "open_checked",
    "open_store",
    "reset_db",
    "scan_rows",
    "state_db_path",
    "verified_content",
]
