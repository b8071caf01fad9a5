"""What the state asks of persistence: the `Store` protocol, and the `Change` one unit of work
hands it (docs/architecture.md §2, §5).

The registry holds a `Store`; the services never see it. A handler changes memory inside
`Registry.mutate` and names on the `Change` what it changed; the store writes exactly that, in
its own order, in one transaction. `persist.NullStore` (persistence off), `persist.SqliteStore`
(one daemon's embedded database) and `persist.postgres.PostgresStore` (a database several daemons
share: docs/fleet.md) implement the protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from postcompact.core import FileStateCache
from postcompact.errors import NotFound
from postcompact.state.model import AgentState, InvokedSkill, Session
from postcompact.v1 import postcompact_pb2 as pb

# What a transaction writes: (session id, agent id) for an agent's rows (its row, catalogue,
# files, skills), (session id, None) for the session's own (its row, tasks).
Written = tuple[str, str | None]

# What a store calls with what a failed transaction wrote, and whether it failed because the
# database was busy (a lock held elsewhere not granted in time): then reading it now would wait as
# long again, and the registry re-reads when the session is next named.
OnFailedWrite = Callable[[set[Written], bool], None]


class WouldWait(Exception):
    """A write tried on the event loop (`Store.write_inline`) met a lock held elsewhere before it
    wrote anything: it is to run on the store's thread instead, where it may wait. Never reaches
    a client."""


# Rows without stored blobs (file metadata, plan, mode...) are budgeted at this many bytes by the
# room check before a write.
ROW_BYTES = 512


class Change:
    """What one unit of work changed in memory, named as it is changed: the store writes these
    and nothing else. `digests` are SHA-256s of contents read just now (path -> (the content
    object, its digest)), so the store need not hash them again; it takes one only for that
    very object."""

    __slots__ = ("agent", "catalog", "digests", "entry", "files", "session", "skills", "tasks")

    def __init__(self) -> None:
        self.session = False  # the session's row (and its agents' rows)
        self.agent = False  # the agent's row: plan, mode, compactions, nested memory, carried
        self.catalog = False  # the agent's catalogue (and its row)
        self.files = False  # the agent's file-state cache, mirrored whole
        # With `files`: the one entry the unit set or used (now the most recently used), when it
        # changed nothing else of the cache: the store may write that row alone.
        self.entry: str | None = None
        self.skills: list[InvokedSkill] = []
        self.tasks: list[pb.Task] = []
        self.digests: dict[str, tuple[bytes, bytes]] = {}

    def __bool__(self) -> bool:
        return bool(
            self.session or self.agent or self.catalog or self.files or self.skills or self.tasks
        )


class SessionQuarantined(NotFound):
    """Raised by `Store.load_session`: the session's own row, written by another daemon or a
    tool, is one this daemon cannot use; the store moved it and its rows to the quarantine table
    (docs/persistence.md), so the session is no longer stored."""

    def __init__(self, session_id: str, why: str, where: str | None):
        super().__init__(
            "SESSION_QUARANTINED",
            f"session {session_id!r} could not be used as stored ({why}): its rows were moved to "
            f"the quarantine table of the state database {where}; open it again with OpenSession",
            {"session_id": session_id},
        )


class Store(Protocol):
    """Durable state behind the registry (see the module docstring)."""

    @property
    def where(self) -> str | None:
        """The database as logs name it: its file, or its URL without the password (None:
        nothing is stored)."""

    @property
    def shared(self) -> bool:
        """Whether other daemons write the same database: then a session not in memory is
        looked up there, and one that `changed_elsewhere` is re-read when it is opened."""

    @property
    def keeps_digests(self) -> bool:
        """Whether stored file rows carry content digests: readers hash what they read only
        then (off the event loop, with the read)."""

    # Called with what a failed transaction wrote: the registry re-reads exactly those (at once,
    # or when next named if the database was busy). A shared store names every agent of a
    # session another daemon changed meanwhile (all is re-read).
    on_failed_write: OnFailedWrite | None

    def room_known(self, extra: int = ROW_BYTES) -> bool:
        """Whether `extra` more bytes surely fit without asking the database (then counted);
        the only call made on the event loop."""

    def check_room(self, extra: int = ROW_BYTES) -> None:
        """RESOURCE_EXHAUSTED when writing about `extra` more bytes would pass the limit."""

    def used_bytes(self) -> int: ...

    def write(self, s: Session, a: AgentState | None, change: Change) -> None:
        """Write `change` of `s` (and of its agent `a`) in one transaction; nothing when
        nothing it names differs from what is stored. When it fails it is rolled back,
        `on_failed_write` gets what it named, and the error is raised: UNAVAILABLE `STATE_BUSY`
        with a RetryInfo when a lock held elsewhere was not granted in time."""

    @property
    def inline_writes(self) -> bool:
        """Whether a write may be tried on the event loop (`write_inline`): the store can tell,
        without waiting, that it would have to wait."""

    def write_inline(self, s: Session, a: AgentState | None, change: Change) -> None:
        """`write`, for the event loop: WouldWait, with nothing written and nothing handed to
        `on_failed_write`, where `write` would wait for a lock held elsewhere."""

    def lend_to_loop(self) -> None:
        """From now on writes are tried on the event loop (`write_inline`): the store's
        statements fail at once where they would wait for a lock, except inside `waiting()`,
        and its log moves into its file only by `checkpoint`."""

    def waiting(self) -> AbstractContextManager[None]:
        """Statements inside may wait for a lock again (the store's thread runs its calls in
        it)."""

    def checkpoint(self) -> None:
        """Move what the database's log holds into its file, without waiting for its readers
        (off the event loop: it syncs the disk). Nothing for a store without such a log."""

    def write_session(self, s: Session) -> None:
        """Write all of `s` in one transaction: its row, its agents with their catalogues,
        files and skills, its tasks (a session built elsewhere: an import)."""

    def delete_session(self, session_id: str) -> None: ...

    def delete_agent(self, s: Session, agent_id: str) -> None:
        """Delete the agent's rows (its row, catalogue, files, skills) in one transaction."""

    def flush_activity(self, sessions: Iterable[Session]) -> None:
        """Store the last activity time of sessions touched by read-only calls."""

    def restore_reserve(self) -> None: ...

    def changed_elsewhere(self, session_id: str) -> bool:
        """Whether another daemon wrote (or deleted) the session since this store last read or
        wrote it (never, for a store no one else writes)."""

    def forget(self, session_id: str) -> None:
        """The session left memory (evicted, not deleted): forget what is known of its rows."""

    def idle_sessions(self, before_ms: int, limit: int) -> list[str]:
        """Up to `limit` stored sessions idle since before `before_ms`, the oldest first."""

    def expire_session(self, session_id: str, before_ms: int) -> bool:
        """Delete the session's rows if it is still idle since before `before_ms`."""

    def count_sessions(self) -> int: ...

    def session_page(self, after: str | None, limit: int) -> list[pb.SessionInfo]:
        """Up to `limit` stored sessions in id order after `after`, as ListSessions lists them."""

    def totals(self) -> tuple[int, int, int, int, int]:
        """(sessions, agents, file entries, their bytes, compactions) stored."""

    def pool(self, size: int) -> Sequence[Store]:
        """The connections its calls run on (`state.worker.StoreWorker`): itself, or `size`."""

    def load_session(
        self,
        session_id: str,
        new_cache: Callable[[Session], FileStateCache],
        agents: Iterable[str] | None = None,
    ) -> Session | None:
        """The session as stored (None: it is not), with all its agents or those of `agents`.
        Rows it cannot use are quarantined first (SessionQuarantined when its own row is one);
        a read that fails raises the store's named error (STATE_BUSY...) and leaves what the
        store knew of the session as it was."""

    def close(self) -> None: ...
