"""One unit of work on the state: the room check, the change in memory, the write (see
`Registry.mutate`)."""

from __future__ import annotations

from types import TracebackType

from postcompact.state.model import AgentState, Session
from postcompact.state.store import Change, Store


class Unit:
    """`with registry.mutate(s, a, room=...) as change:` — entering checks that the store has
    room for about `room` bytes (None: no check, for writes that only rewrite small rows), before
    anything in memory changes; the body changes memory and names each part it changed on
    `change`; leaving normally writes what was named in one transaction. When the write fails
    the store rolls it back and the registry re-reads what it named from the database, so
    memory holds no trace of the failed call; the error propagates to the client.

    An error raised by the body writes nothing: a handler validates (and refuses) before it
    changes memory."""

    __slots__ = ("_agent", "_change", "_room", "_session", "_store")

    def __init__(self, store: Store, s: Session, a: AgentState | None, room: int | None):
        self._store, self._session, self._agent, self._room = store, s, a, room
        self._change = Change()

    def __enter__(self) -> Change:
        if self._room is not None:
            self._store.check_room(self._room)
        return self._change

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None and self._change:
            self._store.write(self._session, self._agent, self._change)
