"""`StoreWorker`: the store's calls run off the event loop (docs/architecture.md §5).

A database call can wait: on a lock another database session holds, a slow disk, a server far
away. On the event loop that wait would stall every call of every agent, health included, so the
registry never calls the store itself: it hands each call to this worker and awaits it.

- Connections. Each connection of the store (`Store.pool`: SQLite's one, PostgreSQL's
  `state_pool_size`) has one thread of its own, and runs one call at a time. A call takes the
  first idle connection; with SQLite every call queues for the one (it is the one writer: other
  sessions' calls wait behind a slow one), with PostgreSQL a session whose rows are locked holds
  up one connection and the calls queued for that session only.
- Order. The calls naming one session run one at a time, in the order they were made (an
  `asyncio.Lock` per session, first come first served), so a unit of work is still one
  transaction applied in order per session.
- Failed writes. The store reports what a failed transaction wrote (`Store.on_failed_write`)
  from the connection's thread; the worker hands that to the registry's `resync` on the event
  loop once the call is over, before the call's error reaches its caller.
- Cancellation. A call whose caller is cancelled (a client's deadline) still runs to its end,
  and its failures are still handed on: a transaction is never abandoned half-way.

With nothing stored (`--no-persist`) the calls run inline: there is nothing to wait for.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from postcompact.state.store import Store, Written

T = TypeVar("T")

# What a call's failed writes were: (what each wrote, whether the database was busy).
Failures = list[tuple[set[Written], bool]]
OnFailures = Callable[[Failures], Awaitable[None]]


class StoreWorker:
    """Runs the store's calls on its connections' threads (see the module docstring)."""

    def __init__(self, stores: Sequence[Store], *, inline: bool = False):
        self.store = stores[0]  # the first connection: the one that opened the database
        self.inline = inline
        self.on_failures: OnFailures | None = None
        self._stores = list(stores)
        self._idle: asyncio.Queue[int] | None = None
        self._threads = [
            concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="postcompact-store")
            for _ in stores
        ]
        self._sessions: dict[str, list[Any]] = {}  # session id -> [lock, calls holding/waiting]
        self.calls = 0

    @property
    def connections(self) -> int:
        return len(self._stores)

    def _queue(self) -> asyncio.Queue[int]:
        if self._idle is None:  # made on the loop that uses it
            self._idle = asyncio.Queue()
            for i in range(len(self._stores)):
                self._idle.put_nowait(i)
        return self._idle

    async def call(self, sid: str | None, fn: Callable[[Store], T]) -> T:
        """`fn(store)` on a connection's thread, after the calls already made for session
        `sid` (None: a call of no one session), its failed writes handed on first."""
        if self.inline:
            failures: Failures = []
            self.store.on_failed_write = lambda w, busy: failures.append((w, busy))
            try:
                return fn(self.store)
            finally:
                self.store.on_failed_write = None
                if failures and self.on_failures is not None:
                    await self.on_failures(failures)
        task = asyncio.ensure_future(self._handled(sid, fn))
        return await asyncio.shield(task)

    async def _handled(self, sid: str | None, fn: Callable[[Store], T]) -> T:
        """The call, then its failed writes handed on (the session's turn given up first: the
        re-read they need is a call of that session too)."""
        failures: Failures = []
        try:
            return await self._ordered(sid, fn, failures)
        finally:
            if failures and self.on_failures is not None:
                await self.on_failures(failures)

    async def _ordered(self, sid: str | None, fn: Callable[[Store], T], failures: Failures) -> T:
        if sid is None:
            return await self._run(fn, failures)
        entry = self._sessions.get(sid)
        if entry is None:
            entry = self._sessions[sid] = [asyncio.Lock(), 0]
        entry[1] += 1
        try:
            async with entry[0]:
                return await self._run(fn, failures)
        finally:
            entry[1] -= 1
            if entry[1] == 0:
                del self._sessions[sid]

    async def _run(self, fn: Callable[[Store], T], failures: Failures) -> T:
        idle = self._queue()
        i = await idle.get()
        store = self._stores[i]

        def job() -> T:
            store.on_failed_write = lambda w, busy: failures.append((w, busy))
            try:
                return fn(store)
            finally:
                store.on_failed_write = None

        self.calls += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._threads[i], job)
        finally:
            idle.put_nowait(i)

    def busy_sessions(self) -> int:
        """Sessions with a store call running or waiting."""
        return len(self._sessions)

    def close(self) -> None:
        """Wait for the calls running, then close every connection (the first one last: it
        holds SQLite's lock)."""
        for pool in self._threads:
            pool.shutdown(wait=True)
        for store in reversed(self._stores):
            store.close()


def finish_inline(coro: Coroutine[Any, Any, T]) -> T:
    """Run to its end a coroutine of a registry whose store runs inline (no `StoreWorker` of
    its own: tools, tests, benches), from synchronous code: it never waits, so no event loop is
    needed. RuntimeError if it did wait (a store call sent to a thread would)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("the coroutine waited: its store calls do not run inline")
