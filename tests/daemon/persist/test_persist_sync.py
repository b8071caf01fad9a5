"""The store's file-row mirror (persist.SqliteStore, a unit of work naming the files) in-process.

Whatever path the hash comes by — computed, taken from a hint (`Change.digests`), kept from
the row an equal entry replaces — the stored rows equal the cache: paths in recency order, the
metadata, and the SHA-256 and length of each entry's content; and a reload verifies them all.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from postcompact import _core, persist
from postcompact.config import Config
from postcompact.errors import ResourceExhausted, Unavailable
from postcompact.persist import SqliteStore
from postcompact.service.files import FileService
from postcompact.service.sessions import SessionService
from postcompact.state import AgentState, Change, InvokedSkill, Session
from postcompact.state.registry import Registry
from postcompact.state.worker import finish_inline as done
from postcompact.v1 import postcompact_pb2 as pb


class World:
    def __init__(self, tmp_path: Path):
        self.root = tmp_path / "p"
        self.root.mkdir()
        self.db = tmp_path / "state" / "state.db"
        self.reg = Registry(Config(), store=SqliteStore(self.db, max_bytes=1 << 30))
        req = pb.OpenSessionRequest(session_id="s", cwd=str(self.root))
        self.s, _ = done(SessionService(self.reg, self.reg.config).open(req))

    @property
    def a(self) -> AgentState:
        return self.s.agents[""]

    def file(self, name: str, text: str) -> str:
        p = self.root / name
        p.write_text(text)
        return str(p)

    def set(self, path: str, ts: int, *, limit: int | None = None) -> _core.FileState:
        st = _core.FileState(Path(path).read_bytes(), ts, 1, limit, False)
        self.a.files.set(path, st)
        return st

    def sync(self, digests: dict[str, tuple[bytes, bytes]] | None = None) -> None:
        """Store the agent's cache as a unit of work naming its files does (with `digests`)."""
        done(self._sync(digests or {}))

    async def _sync(self, digests: dict[str, tuple[bytes, bytes]]) -> None:
        async with self.reg.mutate(self.s, self.a, room=None) as change:
            change.files = True
            change.digests.update(digests)

    def rows(self) -> list[tuple[str, int, int | None, bytes, int]]:
        conn = sqlite3.connect(self.db)
        try:
            return [
                (p, ts, limit, bytes(digest), size)
                for p, ts, limit, digest, size in conn.execute(
                    "SELECT path, timestamp_ms, read_limit, content_sha256, content_len FROM files "
                    "ORDER BY seq DESC"
                )
            ]
        finally:
            conn.close()

    def check(self) -> None:
        """The stored rows are the cache, most recently used first, with true hashes."""
        assert self.rows() == [
            (p, st.timestamp, st.limit, hashlib.sha256(st.content).digest(), len(st.content))
            for p, st in self.a.files.snapshot()
        ]

    def reload(self) -> Session:
        self.reg.store.close()
        self.reg = Registry(Config(), store=SqliteStore(self.db, max_bytes=1 << 30))
        self.s = done(self.reg.session("s"))  # read on first use
        return self.s


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    w = World(tmp_path)
    yield w
    w.reg.store.close()


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The contents the store hashes itself."""
    seen: list[bytes] = []
    real = persist.content_digest

    def spy(content: bytes) -> bytes:
        seen.append(content)
        return real(content)

    monkeypatch.setattr(persist.sqlstore, "content_digest", spy)  # where the store hashes
    return seen


def test_an_equal_entry_keeps_its_row_hash_and_a_reseed_hashes_nothing(
    world: World, hashed: list[bytes]
) -> None:
    paths = [world.file(f"f{i}.ts", f"const f{i} = {i};\n" * 50) for i in range(4)]
    for i, p in enumerate(paths):
        world.set(p, 100 + i)
    world.sync()
    assert len(hashed) == 4
    world.check()
    hashed.clear()
    # A Compact-like re-seed: cleared, the same contents set again, in another order, once with
    # a new timestamp (default profile) and once with the same one (claude-code's mtimes).
    for ts in (200, 200):
        world.a.files.clear()
        for p in paths[::-1]:
            world.set(p, ts)
        world.sync()
        world.check()
    # Another range of the same content (ReadFile alternating ranges) and an eviction.
    world.set(paths[1], 300, limit=1000)
    world.a.files.delete(paths[2])
    world.sync()
    world.check()
    assert hashed == []
    # A changed file is hashed (no hint given).
    Path(paths[0]).write_text("changed\n")
    world.set(paths[0], 400)
    world.sync()
    world.check()
    assert hashed == [b"changed\n"]

    s = world.reload()
    assert [p for p, _ in s.agents[""].files.snapshot()] == [p for p, _ in world.a.files.snapshot()]
    assert not world.a.unverified
    world.check()


def test_a_hint_is_taken_only_for_its_very_content_object(
    world: World, hashed: list[bytes]
) -> None:
    p = world.file("a.ts", "export const a = 1;\n")
    st = world.set(p, 1)
    hashed.clear()
    world.sync({p: (st.content, persist.content_digest(st.content))})
    assert hashed == []
    world.check()

    q = world.file("b.ts", "export const b = 2;\n")
    st = world.set(q, 2)
    stale = bytes(bytearray(st.content))  # equal, but another object: not trusted
    world.sync({q: (stale, b"\0" * 32)})
    assert hashed == [st.content]
    world.check()


def test_an_unverified_entry_keeps_its_stored_hash_when_replaced_by_an_equal_one(
    world: World,
) -> None:
    p = world.file("a.ts", "original\n")
    world.set(p, 5)
    world.sync()
    Path(p).write_text("changed while the daemon was down\n")
    s = world.reload()
    a = s.agents[""]
    loaded = a.files.peek(p)
    assert loaded is not None
    assert a.unverified[p] is loaded
    original = hashlib.sha256(b"original\n").digest()
    assert world.rows()[0][3:] == (original, len(b"original\n"))
    # An entry equal to the loaded one (empty content, same metadata) is a different entry: an
    # empty content, hashed as such.
    a.files.set(p, _core.FileState(b"", loaded.timestamp, loaded.offset, loaded.limit, False))
    world.sync()
    world.check()


def test_check_room_asks_sqlite_only_near_the_limit(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "far.db", max_bytes=1 << 30)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    for _ in range(100):
        store.check_room()
    assert sum("page_count" in s for s in statements) == 1
    store.close()


def test_check_room_refuses_exactly_when_the_write_would_pass_the_limit(tmp_path: Path) -> None:
    max_bytes = 256 * 1024
    store = SqliteStore(tmp_path / "near.db", max_bytes=max_bytes)
    reg = Registry(Config(), store=store)
    s, _ = done(
        SessionService(reg, reg.config).open(
            pb.OpenSessionRequest(session_id="s", cwd=str(tmp_path))
        )
    )
    extra = 4096 + persist.ROW_BYTES
    for i in range(1000):
        would_pass = store.used_bytes() + extra > max_bytes
        try:
            store.check_room(extra)
        except ResourceExhausted:
            assert would_pass
            break
        assert not would_pass
        change = Change()
        change.skills.append(InvokedSkill(f"s{i}", "/p", bytes(4096), i))
        store.write(s, s.agents[""], change)
    else:
        pytest.fail("never refused")
    store.close()


async def test_single_entry_writes_mirror_the_cache_through_reads_evictions_and_reloads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ReadFile, RecordRead and RecordWrite name their one entry (`Change.entry`): the store
    writes that row alone unless something was evicted. Through reads of new files, re-reads,
    the "unchanged" stub, a cache bound that evicts, and recorded writes, the rows stay the cache
    (recency, metadata, hashes), after each call and after a reload."""
    w = World(tmp_path)
    try:
        service = FileService(w.reg, w.reg.config)
        # A small cache: the fifth file evicts the least recently used.
        _, agent = await w.reg.agent("s", "")
        agent.files = w.s.new_cache(4, 1 << 20)
        w.sync()
        whole: list[str | None] = []
        real = w.reg.store._sync_entry  # type: ignore[attr-defined]

        def spy(*args: object) -> bool:
            done = bool(real(*args))
            whole.append(None if done else "whole")
            return done

        monkeypatch.setattr(w.reg.store, "_sync_entry", spy)
        paths = [w.file(f"f{i}.txt", f"file {i}\n" * (i + 1)) for i in range(6)]

        async def read(i: int) -> None:
            await service.read_file(pb.ReadFileRequest(session_id="s", path=paths[i]))
            w.check()

        for i in range(4):
            await read(i)  # new entries: their row alone
        await read(1)  # the stub (unchanged): its row moves to the front
        w.file("f2.txt", "changed\n")
        await read(2)  # re-read, new content and hash
        await read(4)  # evicts f0: the whole cache is synced
        written = b"written\n"
        await service.record_write(
            pb.RecordWriteRequest(session_id="s", path=paths[3], content=written, timestamp_ms=7)
        )
        w.check()
        await service.record_read(
            pb.RecordReadRequest(session_id="s", path=paths[5], content=b"file 5\n", timestamp_ms=9)
        )  # evicts again
        w.check()
        assert whole == [None, None, None, None, None, None, "whole", None, "whole"]
        s = w.reload()
        assert [p for p, _ in s.agents[""].files.snapshot()] == [r[0] for r in w.rows()]
    finally:
        w.reg.store.close()


async def test_a_read_is_stored_by_its_one_statement_and_a_failed_one_changes_nothing(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ReadFile's write-through is the upsert of its row alone (of an unchanged file re-read,
    the update of its place, time and marks), as its own (implicit) transaction: no BEGIN,
    COMMIT or activity update of their own while the stored activity time is recent
    (`ACTIVITY_STEP_MS`). When that statement fails, the call fails with the
    store's error, the row and the agent's entry stay what they were (the registry re-reads
    them, the content verified against the stored hash as at start-up), and the next read
    answers the whole file again, not the "unchanged" stub."""
    monkeypatch.setattr(persist.sqlstore, "ACTIVITY_STEP_MS", 3_600_000)
    service = FileService(world.reg, world.reg.config)
    path = world.file("a.txt", "one\n")
    req = pb.ReadFileRequest(session_id="s", path=path)
    statements: list[str] = []
    conn = world.reg.store.conn  # type: ignore[attr-defined]
    conn.set_trace_callback(statements.append)

    await service.read_file(req)
    assert [s.split()[0] for s in statements] == ["INSERT"]
    assert "ON CONFLICT" in statements[0]
    world.check()
    # A re-read of the unchanged file (a new mtime): the row's place, time and marks move alone.
    later = os.stat(path).st_mtime_ns + 1_000_000_000
    os.utime(path, ns=(later, later))
    statements.clear()
    moved = pb.ReadFileResponse.FromString(await service.read_file(req))  # type: ignore[arg-type]
    assert not moved.unchanged
    assert [s.split()[:3] for s in statements] == [["UPDATE", "files", "SET"]]
    world.check()
    before = world.rows()

    # The next write of the row fails inside SQLite.
    conn.execute(
        "CREATE TRIGGER refuse BEFORE UPDATE ON files BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    world.file("a.txt", "two\n")
    statements.clear()
    with pytest.raises(Unavailable) as failed:
        await service.read_file(req)
    assert failed.value.reason == "STATE_WRITE_FAILED"
    assert "refused" in failed.value.message
    assert not any(s.split()[0] in ("BEGIN", "COMMIT", "ROLLBACK") for s in statements)
    assert world.rows() == before
    entry = world.a.files.peek(path)
    assert entry is not None
    assert entry.timestamp == moved.timestamp_ms
    # As at start-up: the stored hash is of "one", the file now holds "two": unverified.
    assert entry.content == b""
    assert world.a.unverified.get(path) is entry

    conn.execute("DROP TRIGGER refuse")
    again = pb.ReadFileResponse.FromString(await service.read_file(req))  # type: ignore[arg-type]
    assert not again.unchanged
    assert again.content == b"two\n"
    world.check()


def test_writes_store_the_activity_time_once_it_is_a_step_old_and_the_flush_stores_it_exact(
    world: World,
) -> None:
    """A write stores the session's activity time with its rows only when the stored one is
    `ACTIVITY_STEP_MS` or more older (else the time waits for the sweep's flush, which stores
    it exactly); a write with nothing else to store does not open a transaction for it."""
    step = persist.sqlstore.ACTIVITY_STEP_MS

    def stored() -> int:
        conn = sqlite3.connect(world.db)
        try:
            return int(conn.execute("SELECT last_active_ms FROM sessions").fetchone()[0])
        finally:
            conn.close()

    base = stored()
    path = world.file("a.txt", "one\n")
    statements: list[str] = []
    world.reg.store.conn.set_trace_callback(statements.append)  # type: ignore[attr-defined]

    world.s.last_active_ms = base + step - 1
    world.set(path, 1)
    world.sync()  # the new row, without the activity time: not a step old yet
    assert stored() == base
    assert statements
    assert not any("sessions" in s for s in statements)
    statements.clear()
    world.sync()  # equal rows, activity not due: nothing at all
    assert statements == []

    world.s.last_active_ms = base + step
    world.sync()  # equal rows, but the activity is due: stored
    assert stored() == base + step
    world.s.last_active_ms = base + step + 5
    world.set(path, 2)
    world.sync()
    assert stored() == base + step
    done(world.reg.flush_activity())
    assert stored() == base + step + 5
