"""`StoreWorker`: the store's calls run off the event loop (docs/architecture.md §5).

A database call can wait: on a lock another database session holds, a slow disk, a server far
away. On the event loop that wait would stall every call of every agent, health included, so the
registry never calls the store itself: it hands each call to this worker and awaits it, and the
worker runs on the loop only a write that can fail at once where it would wait.

- Connections. Each connection of the store (`Store.pool`: SQLite's one, PostgreSQL's
  `state_pool_size`) has one thread of its own, and runs one call at a time. The sessions with
  calls waiting stand in one line, and each thread takes the next when it is free: with SQLite
  every call waits for the one (it is the one writer: other sessions' calls wait behind a slow
  one), with PostgreSQL a session whose rows are locked holds up one connection and the calls
  queued for that session only.
- Order. The calls naming one session wait in its lane, in the order they were made, and one
  connection at a time drains the lane on its thread: back to back, with no trip through the
  event loop between two calls (a busy loop would otherwise add its latency to every call of a
  session with many agents), at most DRAIN_TURN calls a turn before the lane goes back to the end
  of the line. So a unit of work is still one transaction applied in order per session.
- Hand-off. A call costs the loop one put on the line and one wake-up of a thread; the answers
  go back through one `call_soon_threadsafe` for all those that came back meanwhile.
- Writes on the loop. A unit of work's write (`call`'s `on_loop`) on a store that can tell
  without waiting that it would wait (SQLite lent to the loop: no busy timeout but on the
  thread, the log checkpointed there every CHECKPOINT_WRITES writes) runs on the loop while
  none of the store's calls is in line or running: the hand-off (two thread switches) costs more
  than a ReadFile's commit (B4). Where it meets a lock held elsewhere it has written nothing and
  goes to the thread.
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
import functools
import logging
import queue
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar, cast

from postcompact.state.store import Store, WouldWait, Written

log = logging.getLogger("postcompact.state")

T = TypeVar("T")

# What a call's failed writes were: (what each wrote, whether the database was busy).
Failures = list[tuple[set[Written], bool]]
OnFailures = Callable[[Failures], Awaitable[None]]

# A connection runs at most this many calls of one session back to back before the others in line
# get it (SQLite has one connection: a busy session must not keep the others out).
DRAIN_TURN = 16
# With writes on the event loop the database's log is moved into its file on the store's thread
# after this many writes (about SQLite's own automatic checkpoint of 1,000 pages, for the few
# pages a ReadFile's row takes).
CHECKPOINT_WRITES = 256


class _Job:
    __slots__ = ("fn", "future", "loop")

    def __init__(self, fn: Callable[[Store], Any], loop: asyncio.AbstractEventLoop):
        self.fn, self.loop = fn, loop
        self.future: asyncio.Future[Any] = loop.create_future()


class _Lane:
    """One session's store calls waiting, in the order they were made, and whether it is in
    line for a connection or being drained by one (None: a call of no one session, alone in
    its lane)."""

    __slots__ = ("draining", "jobs", "sid")

    def __init__(self, sid: str | None):
        self.sid = sid
        self.jobs: collections.deque[_Job] = collections.deque()
        self.draining = False


# An answer on its way back to the loop: the job, its result, its error, its failed writes.
_Done = tuple[_Job, object, BaseException | None, Failures]


def _resolve(future: asyncio.Future[Any], result: object, error: BaseException | None) -> None:
    if future.cancelled():  # its caller went away; the call ran to its end all the same
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def _collect(into: Failures, written: set[Written], busy: bool) -> None:
    into.append((written, busy))


def _checkpoint(store: Store) -> None:
    store.checkpoint()


class StoreWorker:
    """Runs the store's calls on its connections' threads (see the module docstring)."""

    def __init__(self, stores: Sequence[Store], *, inline: bool = False):
        self.store = stores[0]  # the first connection: the one that opened the database
        self.inline = inline
        self.on_failures: OnFailures | None = None
        self._stores = list(stores)
        # The lanes in line for a connection, oldest first; each connection's thread takes the
        # next (None: the thread is to end).
        self._ready: queue.SimpleQueue[_Lane | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._closed = False
        # Session id -> its calls waiting, in order. The lock guards the lanes and the answers
        # on their way back against the connections' threads.
        self._lanes: dict[str, _Lane] = {}
        self._lock = threading.Lock()
        # Answers not yet handed to their callers, per loop: one wake-up of a loop hands on all
        # that came back meanwhile.
        self._done: dict[asyncio.AbstractEventLoop, list[_Done]] = {}
        self._tasks: set[asyncio.Future[None]] = set()
        self.calls = 0
        # Writes tried on the event loop (`call`'s `on_loop`): with one connection that can tell
        # it would wait, while none of its calls is in line or running (`_busy`, guarded by the
        # lock; read on the loop without it: a stale count only sends a write to the thread).
        self._try_here = not inline and len(stores) == 1 and self.store.inline_writes
        self._busy = 0
        self._writes = 0
        self._checkpointing = False
        self.writes_here = 0
        if self._try_here:
            self.store.lend_to_loop()

    @property
    def connections(self) -> int:
        return len(self._stores)

    def _start(self) -> None:
        """One thread per connection, started with the first call."""
        for i, store in enumerate(self._stores):
            thread = threading.Thread(
                target=self._serve, args=(store,), name=f"postcompact-store-{i}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    async def call(
        self,
        sid: str | None,
        fn: Callable[[Store], T],
        *,
        on_loop: Callable[[Store], T] | None = None,
    ) -> T:
        """`fn(store)` on a connection's thread, after the calls already made for session
        `sid` (None: a call of no one session), its failed writes handed on first.

        `on_loop`: the same write for the event loop (`Store.write_inline`), run there instead
        when the store can try it and no call is in line or running (so the order holds); where
        it would wait for a lock (WouldWait: nothing written) `fn` goes to the thread as any
        call does."""
        if self.inline:
            return await self._here(fn)
        if self._closed:
            raise RuntimeError("the store's connections are closed")
        if on_loop is not None and self._try_here:
            self._writes += 1
            if not self._busy:
                try:
                    result = await self._here(on_loop)
                except WouldWait:
                    pass
                else:
                    self.writes_here += 1
                    self._checkpoint_due()
                    return result
            self._checkpoint_due()
        if not self._threads:
            self._start()
        job = _Job(fn, asyncio.get_running_loop())
        self.calls += 1
        if sid is None:
            lane = _Lane(None)
            lane.jobs.append(job)
            lane.draining = True
            with self._lock:
                self._busy += 1
            self._ready.put(lane)
        else:
            with self._lock:
                self._busy += 1
                found = self._lanes.get(sid)
                lane = found if found is not None else self._lanes.setdefault(sid, _Lane(sid))
                lane.jobs.append(job)
                idle, lane.draining = not lane.draining, True
            if idle:  # else a connection has the lane in hand or in line already
                self._ready.put(lane)
        # Cancelling the caller cancels only its wait: the call runs to its end on its thread.
        return cast(T, await job.future)

    async def _here(self, fn: Callable[[Store], T]) -> T:
        """`fn(store)` on the calling thread (the loop), its failed writes handed on before
        its result or error."""
        failures: Failures = []
        self.store.on_failed_write = functools.partial(_collect, failures)
        try:
            return fn(self.store)
        finally:
            self.store.on_failed_write = None
            if failures and self.on_failures is not None:
                await self.on_failures(failures)

    def _checkpoint_due(self) -> None:
        """Every CHECKPOINT_WRITES writes, a checkpoint queued for the store's thread (one at a
        time: writes that never yield the loop must not pile them up)."""
        if self._writes % CHECKPOINT_WRITES == 0 and not self._checkpointing:
            self._checkpointing = True
            self._keep(self._checkpoint())

    async def _checkpoint(self) -> None:
        try:
            if not self._closed:  # (closing checkpoints the log whole)
                await self.call(None, _checkpoint)
        except Exception as exc:  # the next one tries again; SQLite's log only grows meanwhile
            log.warning("state database checkpoint failed", extra={"error": str(exc)})
        finally:
            self._checkpointing = False

    def _serve(self, store: Store) -> None:
        """A connection's thread: the lanes in line, a turn each, until told to end."""
        while True:
            lane = self._ready.get()
            if lane is None:
                return
            if self._drain_turn(lane, store):
                self._ready.put(lane)  # more are waiting: back in line behind the others

    def _drain_turn(self, lane: _Lane, store: Store) -> bool:
        """The lane's calls in order, back to back (no trip through the event loop between two
        of them), at most DRAIN_TURN; True when some are left after this turn."""
        for _ in range(DRAIN_TURN):
            with self._lock:
                if not lane.jobs:
                    self._let_go(lane)
                    return False
                job = lane.jobs.popleft()
            failures: Failures = []
            store.on_failed_write = functools.partial(_collect, failures)
            try:
                with store.waiting():  # (lent to the loop, the connection waits only here)
                    result, error = job.fn(store), None
            except BaseException as exc:  # handed to the caller
                result, error = None, exc
            finally:
                store.on_failed_write = None
            self._hand_back((job, result, error, failures))  # and the connection is free
        with self._lock:
            if lane.jobs:
                return True
            self._let_go(lane)
            return False

    def _let_go(self, lane: _Lane) -> None:
        """(Under the lock.) A lane with no call left: no connection drains it any more, and its
        session's next call opens a new one."""
        lane.draining = False
        if lane.sid is not None and self._lanes.get(lane.sid) is lane:
            del self._lanes[lane.sid]

    def _hand_back(self, done: _Done) -> None:
        """On a connection's thread, its call over: queue the answer for its loop, waking the
        loop only when none was queued (the loop takes them all at once)."""
        loop = done[0].loop
        with self._lock:
            self._busy -= 1
            waiting = self._done.get(loop)
            if waiting is None:
                waiting = self._done[loop] = []
            waiting.append(done)
            wake = len(waiting) == 1
        if wake:
            try:
                loop.call_soon_threadsafe(self._settle, loop)
            except RuntimeError:  # the loop is closed: no caller is left to answer
                with self._lock:
                    self._done.pop(loop, None)

    def _settle(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the loop: each answer to its caller, once its failed writes are handed on (the
        re-read they need is a call of the same session: queued after the others)."""
        with self._lock:
            answers = self._done.pop(loop, [])
        for job, result, error, failures in answers:
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
        """Wait for the calls made so far, then close every connection (the first one last: it
        holds SQLite's lock). Calls made after it are refused."""
        if self._closed:
            return
        self._closed = True
        for _ in self._threads:  # behind every lane in line
            self._ready.put(None)
        for thread in self._threads:
            thread.join()
        # A lane sent back in line after a turn may sit behind the ends: drain what is left.
        while True:
            try:
                lane = self._ready.get_nowait()
            except queue.Empty:
                break
            if lane is not None:
                while self._drain_turn(lane, self.store):
                    pass
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
