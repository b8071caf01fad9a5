"""`StoreWorker`: the store's calls run off the event loop (docs/architecture.md §5).

A database call can wait: on a lock another database session holds, a slow disk, a server far
away. On the event loop that wait would stall every call of every agent, health included, so the
registry never calls the store itself: it hands each call to this worker and awaits it.

- Connections. Each connection of the store (`Store.pool`: SQLite's one, PostgreSQL's
  `state_pool_size`) has one thread of its own, and runs one call at a time. A call takes the
  first idle connection; with SQLite every call queues for the one (it is the one writer: other
  sessions' calls wait behind a slow one), with PostgreSQL a session whose rows are locked holds
  up one connection and the calls queued for that session only.
- Order. The calls naming one session wait in its lane, in the order they were made, and one
  connection at a time drains the lane on its thread: back to back, with no trip through the
  event loop between two calls (a busy loop would otherwise add its latency to every call of a
  session with many agents), at most DRAIN_TURN calls a turn before the others in line get the
  connection. So a unit of work is still one transaction applied in order per session.
- Failed writes. The store reports what a failed transaction wrote (`Store.on_failed_write`)
  from the connection's thread; the worker hands that to the registry's `resync` on the event
  loop once the call is over, before the call's error reaches its caller.
- Cancellation. A call whose caller is cancelled (a client's deadline) still runs to its end,
  and its failures are still handed on: a transaction is never abandoned half-way.

With nothing stored (`--no-persist`) the calls run inline: there is nothing to wait for.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import functools
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar, cast

from postcompact.state.store import Store, Written

T = TypeVar("T")

# What a call's failed writes were: (what each wrote, whether the database was busy).
Failures = list[tuple[set[Written], bool]]
OnFailures = Callable[[Failures], Awaitable[None]]

# A connection runs at most this many calls of one session back to back before the others in line
# get it (SQLite has one connection: a busy session must not keep the others out).
DRAIN_TURN = 16


class _Job:
    __slots__ = ("fn", "future")

    def __init__(self, fn: Callable[[Store], Any], future: asyncio.Future[Any]):
        self.fn, self.future = fn, future


class _Lane:
    """One session's store calls waiting, in the order they were made, and whether a
    connection is draining them (None: a call of no one session, alone in its lane)."""

    __slots__ = ("draining", "jobs", "sid")

    def __init__(self, sid: str | None):
        self.sid = sid
        self.jobs: collections.deque[_Job] = collections.deque()
        self.draining = False


def _resolve(future: asyncio.Future[Any], result: object, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def _collect(into: Failures, written: set[Written], busy: bool) -> None:
    into.append((written, busy))


def _retrieved(future: asyncio.Future[Any]) -> None:
    """A call whose caller went away (cancelled) still ends; its error is not reported as
    never retrieved."""
    if not future.cancelled():
        future.exception()


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
        # Session id -> its calls waiting, in order; a connection drains them (`_drain`). The
        # lock guards the lanes against the connections' threads.
        self._lanes: dict[str, _Lane] = {}
        self._lock = threading.Lock()
        self._tasks: set[asyncio.Future[None]] = set()
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
        loop = asyncio.get_running_loop()
        job: _Job = _Job(fn, loop.create_future())
        job.future.add_done_callback(_retrieved)
        self.calls += 1
        if sid is None:
            lane = _Lane(None)
            lane.jobs.append(job)
            lane.draining = True
        else:
            with self._lock:
                found = self._lanes.get(sid)
                lane = found if found is not None else self._lanes.setdefault(sid, _Lane(sid))
                lane.jobs.append(job)
                idle, lane.draining = not lane.draining, True
            if not idle:  # a connection drains this session's calls already
                return cast(T, await asyncio.shield(job.future))
        self._keep(self._drain(lane, loop))
        return cast(T, await asyncio.shield(job.future))

    async def _drain(self, lane: _Lane, loop: asyncio.AbstractEventLoop) -> None:
        """Give the session's waiting calls a connection until none is left, a turn of at most
        DRAIN_TURN calls at a time (then the connection goes back to the others in line)."""
        idle = self._queue()
        while True:
            i = await idle.get()
            try:
                more = await loop.run_in_executor(
                    self._threads[i], self._drain_turn, lane, self._stores[i], loop
                )
            finally:
                idle.put_nowait(i)
            if not more:
                return

    def _drain_turn(self, lane: _Lane, store: Store, loop: asyncio.AbstractEventLoop) -> bool:
        """On the connection's thread: the lane's calls in order, back to back (no trip through
        the event loop between two of them); True when some are left after this turn."""
        for _ in range(DRAIN_TURN):
            with self._lock:
                if not lane.jobs:
                    lane.draining = False
                    if lane.sid is not None and self._lanes.get(lane.sid) is lane:
                        del self._lanes[lane.sid]
                    return False
                job = lane.jobs.popleft()
            failures: Failures = []
            store.on_failed_write = functools.partial(_collect, failures)
            try:
                result, error = job.fn(store), None
            except BaseException as exc:  # handed to the caller
                result, error = None, exc
            finally:
                store.on_failed_write = None
            loop.call_soon_threadsafe(self._settle, job, result, error, failures)
        return True

    def _settle(
        self, job: _Job, result: object, error: BaseException | None, failures: Failures
    ) -> None:
        """On the loop: the call's answer to its caller, once its failed writes are handed on
        (the re-read they need is a call of the same session: queued after the others)."""
        if failures and self.on_failures is not None:
            self._keep(self._settle_after(job, result, error, failures))
        else:
            _resolve(job.future, result, error)

    async def _settle_after(
        self, job: _Job, result: object, error: BaseException | None, failures: Failures
    ) -> None:
        assert self.on_failures is not None
        try:
            await self.on_failures(failures)
        finally:
            _resolve(job.future, result, error)

    def _keep(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run `coro` as a task held until it ends."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def busy_sessions(self) -> int:
        """Sessions with a store call running or waiting."""
        return len(self._lanes)

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
