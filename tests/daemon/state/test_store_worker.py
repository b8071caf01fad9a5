"""The store's calls off the event loop (`state.worker.StoreWorker`, docs/architecture.md §5):
order per session, turns between sessions, cancellation, failed writes handed on, and the
writes it runs on the loop itself where they cannot wait (SQLite)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any, cast

import pytest
from postcompact import _core
from postcompact.config import Config
from postcompact.persist import SqliteStore
from postcompact.service.sessions import SessionService
from postcompact.state import AgentState, Session
from postcompact.state.registry import Registry
from postcompact.state.store import Change, Store, WouldWait, Written
from postcompact.state.worker import CHECKPOINT_WRITES, DRAIN_TURN, Failures, StoreWorker
from postcompact.v1 import postcompact_pb2 as pb


class Recorder:
    """A store connection that only records the calls run on it: (what, the thread's name)."""

    inline_writes = False

    def __init__(self) -> None:
        self.on_failed_write: Callable[[set[Written], bool], None] | None = None
        self.ran: list[tuple[str, str]] = []
        self.closed = False

    def run(self, what: str) -> str:
        self.ran.append((what, threading.current_thread().name))
        return what

    def lend_to_loop(self) -> None:
        raise AssertionError("a store that cannot tell it would wait is never lent to the loop")

    def waiting(self) -> AbstractContextManager[None]:
        return nullcontext()

    def close(self) -> None:
        self.closed = True


def _worker(rec: Recorder) -> StoreWorker:
    return StoreWorker([cast(Store, rec)])  # it has what the worker calls


async def test_one_sessions_calls_run_in_order_off_the_loop_and_take_turns() -> None:
    rec = Recorder()
    worker = _worker(rec)
    gate = threading.Event()

    def first(st: Store) -> str:
        gate.wait(10)  # holds the connection until every call below is in line
        return rec.run("a0")

    def call(sid: str, what: str) -> asyncio.Task[str]:
        return asyncio.ensure_future(worker.call(sid, lambda st: rec.run(what)))

    tasks = [asyncio.ensure_future(worker.call("a", first))]
    await asyncio.sleep(0.05)
    tasks += [call("a", f"a{i}") for i in range(1, 2 * DRAIN_TURN + 8)]
    tasks += [call("b", f"b{i}") for i in range(5)]
    await asyncio.sleep(0.05)  # all in line
    gate.set()
    results = await asyncio.gather(*tasks)
    worker.close()
    assert results == [f"a{i}" for i in range(2 * DRAIN_TURN + 8)] + [f"b{i}" for i in range(5)]
    order = [what for what, _ in rec.ran]
    # Each session's calls in the order made; session a's first turn of DRAIN_TURN calls, then
    # b's (all five), then the rest of a's.
    assert [w for w in order if w.startswith("a")] == [f"a{i}" for i in range(2 * DRAIN_TURN + 8)]
    assert order[DRAIN_TURN : DRAIN_TURN + 5] == [f"b{i}" for i in range(5)]
    assert {thread for _, thread in rec.ran} == {"postcompact-store-0"}
    assert worker.busy_sessions() == 0
    assert rec.closed


async def test_a_cancelled_caller_s_call_still_runs_to_its_end() -> None:
    rec = Recorder()
    worker = _worker(rec)
    started, gate = threading.Event(), threading.Event()

    def slow(st: Store) -> str:
        started.set()
        gate.wait(10)
        return rec.run("slow")

    task = asyncio.ensure_future(worker.call("s", slow))
    assert await asyncio.to_thread(started.wait, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    gate.set()
    assert await worker.call("s", lambda st: rec.run("next")) == "next"
    worker.close()
    assert [w for w, _ in rec.ran] == ["slow", "next"]


async def test_failed_writes_are_handed_on_before_the_callers_error() -> None:
    rec = Recorder()
    worker = _worker(rec)
    events: list[str] = []

    async def on_failures(failures: Failures) -> None:
        await asyncio.sleep(0.01)
        events.append(f"resync {sorted(failures[0][0])} busy={failures[0][1]}")

    worker.on_failures = on_failures

    def failing(st: Store) -> None:
        assert st.on_failed_write is not None
        st.on_failed_write({("s", "main")}, False)
        raise RuntimeError("the write failed")

    with pytest.raises(RuntimeError, match="the write failed"):
        await worker.call("s", failing)
    events.append("error")
    worker.close()
    assert events == ["resync [('s', 'main')] busy=False", "error"]
    assert rec.on_failed_write is None


async def test_calls_after_close_are_refused() -> None:
    worker = _worker(Recorder())
    assert await worker.call(None, lambda st: 1) == 1
    worker.close()
    worker.close()  # twice: the daemon's shutdown and the registry's both close it
    with pytest.raises(RuntimeError, match="closed"):
        await worker.call(None, lambda st: 2)


# --- writes on the loop (SQLite) -----------------------------------------------------------------


class World:
    """A registry on a SQLite store whose calls run on a `StoreWorker` of its own, as the
    daemon's do; `writes` records the thread each of the store's writes ran on."""

    def __init__(self, tmp_path: Path):
        self.db = tmp_path / "state" / "state.db"
        self.root = tmp_path / "p"
        self.root.mkdir()
        store = SqliteStore(self.db, max_bytes=1 << 30)
        self.worker = StoreWorker([store])
        self.reg = Registry(Config(), store=store, worker=self.worker)
        self.writes: list[str] = []
        for name in ("write", "write_inline"):
            real = getattr(store, name)
            setattr(store, name, self._spy(name, real))

    def _spy(self, name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def spy(*args: Any) -> Any:
            if name == "write_inline":
                self.writes.append(threading.current_thread().name)
            return real(*args)

        return spy

    async def open(self) -> tuple[Session, AgentState]:
        req = pb.OpenSessionRequest(session_id="s", cwd=str(self.root))
        s, _ = await SessionService(self.reg, self.reg.config).open(req)
        return s, s.agents[""]

    async def read(self, s: Session, a: AgentState, name: str, ts: int) -> None:
        """A unit of work recording `name` as read at `ts` (what a ReadFile writes)."""
        path = self.root / name
        path.write_text(f"{name}\n")
        async with self.reg.mutate(s, a, room=None) as change:
            a.files.set(str(path), _core.FileState(path.read_bytes(), ts, 1, None, False))
            change.files = True
            change.entry = str(path)

    def stored(self) -> dict[str, int]:
        conn = sqlite3.connect(self.db)
        try:
            return dict(conn.execute("SELECT path, timestamp_ms FROM files").fetchall())
        finally:
            conn.close()


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    w = World(tmp_path)
    yield w
    await asyncio.to_thread(w.worker.close)


def _lock_elsewhere(db: Path) -> sqlite3.Connection:
    """Another connection holding the database's write lock until it commits."""
    other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    return other


async def test_a_write_runs_on_the_loop_when_no_store_call_is_in_line(world: World) -> None:
    s, a = await world.open()
    world.writes.clear()
    await world.read(s, a, "a.py", 1000)
    await world.read(s, a, "a.py", 2000)  # a re-read: the row's move, one statement
    assert world.writes == ["MainThread", "MainThread"]
    assert world.stored() == {str(world.root / "a.py"): 2000}


async def test_a_write_while_a_call_is_running_goes_to_the_thread_in_order(
    world: World,
) -> None:
    s, a = await world.open()
    started, gate = threading.Event(), threading.Event()

    def held(st: Store) -> None:
        started.set()
        gate.wait(10)

    first = asyncio.ensure_future(world.reg.call("s", held))
    assert await asyncio.to_thread(started.wait, 10)
    world.writes.clear()
    here = world.worker.writes_here
    write = asyncio.ensure_future(world.read(s, a, "b.py", 3000))
    await asyncio.sleep(0.05)
    assert not write.done()  # queued behind the running call, not run on the loop
    gate.set()
    await asyncio.gather(first, write)
    assert world.writes == []
    assert world.worker.writes_here == here
    assert world.stored() == {str(world.root / "b.py"): 3000}


async def test_a_write_meeting_a_lock_waits_on_the_thread_not_the_loop(world: World) -> None:
    s, a = await world.open()
    locked_elsewhere = _lock_elsewhere(world.db)
    world.writes.clear()
    here = world.worker.writes_here
    write = asyncio.ensure_future(world.read(s, a, "c.py", 4000))
    ticks = 0
    for _ in range(20):  # the loop goes on while the write waits for the lock
        await asyncio.sleep(0.01)
        ticks += 1
    assert not write.done()
    assert world.writes == ["MainThread"]  # tried on the loop once, met the lock
    locked_elsewhere.execute("COMMIT")
    locked_elsewhere.close()
    await write
    assert ticks == 20
    assert world.worker.writes_here == here  # stored by the thread
    assert world.reg.resyncs == 0  # nothing failed: nothing to re-read
    assert world.stored() == {str(world.root / "c.py"): 4000}


async def test_a_store_lent_to_the_loop_checkpoints_on_its_thread(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = world.reg.store
    assert isinstance(store, SqliteStore)
    assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 0
    ran: list[str] = []
    real = store.checkpoint

    def checkpoint() -> None:
        ran.append(threading.current_thread().name)
        # On the thread, calls wait for a lock held elsewhere as before.
        assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
        real()

    monkeypatch.setattr(store, "checkpoint", checkpoint)
    s, a = await world.open()
    for i in range(CHECKPOINT_WRITES + 5):
        await world.read(s, a, "d.py", 5000 + i)
    await asyncio.sleep(0.1)  # the checkpoint is queued, not awaited by the write
    assert ran == ["postcompact-store-0"]
    wal = world.db.with_name(world.db.name + "-wal")
    assert wal.exists()


def test_write_inline_is_would_wait_under_a_lock_and_hands_nothing_on(tmp_path: Path) -> None:
    """The store alone (not lent to a loop): `write_inline` fails at once where `write` would
    wait, with nothing written or reported, and leaves the busy timeout as it was."""
    db = tmp_path / "state" / "state.db"
    store = SqliteStore(db, max_bytes=1 << 30)
    reg = Registry(Config(), store=store)
    failed: list[set[Written]] = []
    try:
        root = tmp_path / "p"
        root.mkdir()
        req = pb.OpenSessionRequest(session_id="s", cwd=str(root))
        s, _ = asyncio.run(SessionService(reg, reg.config).open(req))
        a = s.agents[""]
        store.on_failed_write = lambda written, busy: failed.append(written)
        other = _lock_elsewhere(db)
        (root / "e.py").write_text("e\n")
        a.files.set(str(root / "e.py"), _core.FileState(b"e\n", 6000, 1, None, False))
        for entry in (str(root / "e.py"), None):  # one statement; a transaction of its own
            with pytest.raises(WouldWait):
                store.write_inline(s, a, _change(entry))
        other.execute("COMMIT")
        other.close()
        assert failed == []
        assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
        store.write_inline(s, a, _change(str(root / "e.py")))
        conn = sqlite3.connect(db)
        assert conn.execute("SELECT timestamp_ms FROM files").fetchall() == [(6000,)]
        conn.close()
    finally:
        store.close()


def _change(entry: str | None) -> Change:
    """What a unit names: the files with `entry` alone (one statement), or (None) the agent's
    row too (a transaction with a BEGIN of its own)."""
    change = Change()
    change.files = True
    change.entry = entry
    if entry is None:
        change.agent = True  # more than the files: a transaction with BEGIN
    return change
