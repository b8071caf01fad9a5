"""One unit of work on the state: the room check, the change in memory, the write (see
`Registry.mutate`)."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

from postcompact.state.model import AgentState, Session
from postcompact.state.store import Change

if TYPE_CHECKING:
    from postcompact.state.registry import Registry


class Unit:
    """`async with registry.mutate(s, a, room=...) as change:` — entering checks that the store
    has room for about `room` bytes (None: no check, for writes that only rewrite small rows),
    before anything in memory changes; the body changes memory and names each part it changed
    on `change`; leaving normally writes what was named in one transaction, off the event loop
    and in order with the session's other store calls (`state.worker.StoreWorker`). When the
    write fails the store rolls it back and the registry re-reads what it named from the
    database, so memory holds no trace of the failed call; the error propagates to the client.

    An error raised by the body writes nothing: a handler validates (and refuses) before it
    changes memory."""

    __slots__ = ("_agent", "_change", "_registry", "_room", "_session")

    def __init__(self, registry: Registry, s: Session, a: AgentState | None, room: int | None):
        self._registry, self._session, self._agent, self._room = registry, s, a, room
        self._change = Change()

    async def __aenter__(self) -> Change:
        if self._room is not None:
            await self._registry.check_room(self._session, self._room)
        return self._change

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None and self._change:
            await self._registry.write(self._session, self._agent, self._change)
