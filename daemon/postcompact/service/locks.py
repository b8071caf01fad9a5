"""Per-agent serialisation of the RPCs that change an agent's state.

Compact snapshots and clears an agent's file-state cache, awaits the re-reads, then re-seeds it;
ReadFile awaits its read before recording it. Without a lock, another call for the same agent
could run at either await — a ReadFile recorded between the clear and the re-seed, a RecordRead
or SetPlan between the snapshot and the end of the pipeline. `AgentLocks` gives each
(session, agent) one lock (`_Mutex`), held for the whole call by every mutating RPC (and by
PreviewCompact, so that a preview sees one consistent state). Calls for different agents never
wait for each other. A lock lives only while some call holds or waits for it.

While a call holds or waits for a lock of one of a session's agents — or runs one of the
session's calls that take no agent lock (`SESSION_CALLS`) — the session is in use (`holds`): the
registry never evicts it from memory then (state/registry.py), since the call holds its objects.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["AGENT_KEYS", "SESSION_CALLS", "AgentLocks"]

Key = tuple[str, str]
CLONE_PARENT = pb.AGENT_MODE_CLONE_PARENT
Handler = Callable[[Any, Any], Coroutine[Any, Any, Any]]


def _agent(req: Any) -> tuple[Key, ...]:
    return ((req.session_id, req.agent_id),)


def _merge(req: Any) -> tuple[Key, ...]:
    # Changes `into`; reads `from`, which must not be half-way through a Compact either.
    return ((req.session_id, req.into_agent_id), (req.session_id, req.from_agent_id))


def _start(req: Any) -> tuple[Key, ...]:
    # The new agent, and the parent whose cache a CLONE_PARENT copies (a fresh agent copies
    # nothing of it: sub-agents of one parent start side by side).
    if req.mode == CLONE_PARENT:
        return ((req.session_id, req.agent_id), (req.session_id, req.parent_agent_id))
    return ((req.session_id, req.agent_id),)


# RPC name -> the (session_id, agent_id) keys of the agents whose state it changes or copies.
# RPCs of a session that hold no agent's lock: their session stays in memory while they run.
SESSION_CALLS = frozenset(("OpenSession", "UpsertTask", "CloseSession"))

AGENT_KEYS: dict[str, Callable[[Any], tuple[Key, ...]]] = {
    "StartAgent": _start,
    "EndAgent": _agent,  # never while a call of that agent is half-way
    "ReadFile": _agent,
    "RecordRead": _agent,
    "RecordWrite": _agent,
    "CheckWrite": _agent,  # its cache lookup makes the entry the most recently used
    "RecordSkill": _agent,
    "SetPlan": _agent,
    "SetMode": _agent,
    "SetCatalog": _agent,
    "MergeFileState": _merge,
    "Compact": _agent,
    "PreviewCompact": _agent,
}


class _Mutex:
    """One agent's lock, first come first served. Taking it when it is free (most calls: one
    agent's calls come one after another) is setting a flag — no `asyncio.Lock`, no coroutine,
    on every mutating call; a call that finds it taken waits for a future of its own, which the
    holder completes to hand the lock over."""

    __slots__ = ("held", "waiters")

    def __init__(self) -> None:
        self.held = False
        self.waiters: collections.deque[asyncio.Future[None]] | None = None

    async def wait(self) -> None:
        """Wait until the holder hands the lock over (it is then this call's)."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self.waiters is None:
            self.waiters = collections.deque()
        self.waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # handed over as the caller went away
                self.release()
            raise  # (a cancelled future is skipped by `release`)

    def release(self) -> None:
        """Hand the lock to the first caller still waiting, or free it."""
        waiters = self.waiters
        while waiters:
            fut = waiters.popleft()
            if not fut.done():
                fut.set_result(None)
                return
        self.held = False


class AgentLocks:
    def __init__(self) -> None:
        # key -> [its lock, number of calls holding or waiting for it]
        self._locks: dict[Key, list[Any]] = {}
        self._sessions: dict[str, int] = {}  # session id -> calls holding or waiting for a lock

    def __len__(self) -> int:
        return len(self._locks)

    def _holding(self, fn: Handler) -> Handler:
        async def holding(req: Any, ctx: Any) -> Any:
            sid = getattr(req, "session_id", "")
            if not isinstance(sid, str) or not sid:
                return await fn(req, ctx)
            self._sessions[sid] = self._sessions.get(sid, 0) + 1
            try:
                return await fn(req, ctx)
            finally:
                left = self._sessions[sid] - 1
                if left:
                    self._sessions[sid] = left
                else:
                    del self._sessions[sid]

        return holding

    def holds(self, session_id: str) -> bool:
        """Whether a call holds or waits for a lock of one of the session's agents (the
        registry never evicts such a session: the call holds its objects)."""
        return session_id in self._sessions

    def locked(self, session_id: str, agent_id: str) -> bool:
        entry = self._locks.get((session_id, agent_id))
        return entry is not None and bool(entry[0].held)

    async def run(self, keys: tuple[Key, ...], call: Callable[[], Awaitable[Any]]) -> Any:
        """`await call()` holding the locks of `keys`, taken in sorted order (no deadlock
        between two calls that need the same two agents)."""
        ordered = sorted(set(keys))

        async def nest(i: int) -> Any:
            if i == len(ordered):
                return await call()
            return await self._run_one(ordered[i], nest, i + 1)

        return await nest(0)

    async def _run_one(self, key: Key, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """`await fn(*args)` holding the lock of `key` (the arguments passed through rather
        than a closure: this is every mutating call's path)."""
        entry = self._locks.get(key)
        if entry is None:
            entry = self._locks[key] = [_Mutex(), 0]
        entry[1] += 1
        sid = key[0]
        self._sessions[sid] = self._sessions.get(sid, 0) + 1
        mutex: _Mutex = entry[0]
        try:
            if mutex.held:
                await mutex.wait()
            else:
                mutex.held = True
            try:
                return await fn(*args)
            finally:
                mutex.release()
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                del self._locks[key]
            left = self._sessions[sid] - 1
            if left:
                self._sessions[sid] = left
            else:
                del self._sessions[sid]

    def wrap(self, name: str, fn: Handler) -> Handler:
        """`fn` serialised per agent when `name` is in AGENT_KEYS; its session held in memory
        while it runs when `name` is in SESSION_CALLS; else `fn` itself."""
        key_of = AGENT_KEYS.get(name)
        if key_of is None and name in SESSION_CALLS:
            return self._holding(fn)
        if key_of is None:
            return fn

        async def locked(req: Any, ctx: Any) -> Any:
            try:
                keys = key_of(req)
            except AttributeError:  # an undecodable request: the handler's guard answers it
                return await fn(req, ctx)
            if len(keys) == 1:  # most calls: straight to the one lock
                return await self._run_one(keys[0], fn, req, ctx)
            return await self.run(keys, lambda: fn(req, ctx))

        return locked
