"""The store when nothing is stored (`persist = false`): every write is a no-op."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager

from postcompact.core import FileStateCache
from postcompact.state.model import AgentState, Session
from postcompact.state.store import ROW_BYTES, Change, OnFailedWrite
from postcompact.v1 import postcompact_pb2 as pb


class NullStore:
    """Persistence switched off: the `Store` that keeps nothing (and hashes nothing)."""

    where: str | None = None
    shared = False
    keeps_digests = False
    on_failed_write: OnFailedWrite | None = None

    def room_known(self, extra: int = ROW_BYTES) -> bool:
        return True

    def check_room(self, extra: int = ROW_BYTES) -> None:
        return None

    def used_bytes(self) -> int:
        return 0

    def write(self, s: Session, a: AgentState | None, change: Change) -> None:
        return None

    inline_writes = False

    def write_inline(self, s: Session, a: AgentState | None, change: Change) -> None:
        return None

    def lend_to_loop(self) -> None:
        return None

    def waiting(self) -> AbstractContextManager[None]:
        return contextlib.nullcontext()

    def checkpoint(self) -> None:
        return None

    def write_session(self, s: Session) -> None:
        return None

    def delete_session(self, session_id: str) -> None:
        return None

    def delete_agent(self, s: Session, agent_id: str) -> None:
        return None

    def flush_activity(self, sessions: Iterable[Session]) -> None:
        return None

    def restore_reserve(self) -> None:
        return None

    def changed_elsewhere(self, session_id: str) -> bool:
        return False

    def forget(self, session_id: str) -> None:
        return None

    def idle_sessions(self, before_ms: int, limit: int) -> list[str]:
        return []

    def expire_session(self, session_id: str, before_ms: int) -> bool:
        return False

    def count_sessions(self) -> int:
        return 0

    def session_page(self, after: str | None, limit: int) -> list[pb.SessionInfo]:
        return []

    def totals(self) -> tuple[int, int, int, int, int]:
        return 0, 0, 0, 0, 0

    def pool(self, size: int) -> Sequence[NullStore]:
        return [self]

    def load_session(
        self,
        session_id: str,
        new_cache: Callable[[Session], FileStateCache],
        agents: Iterable[str] | None = None,
    ) -> Session | None:
        return None

    def close(self) -> None:
        return None
