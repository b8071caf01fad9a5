"""The store's file-row mirror (persist.SqliteStore, a unit of work naming the files) in-process.

Whatever path the hash comes by — computed, taken from a hint (`Change.digests`), kept from
the row an equal entry replaces — the stored rows equal the cache: paths in recency order, the
metadata, and the SHA-256 and length of each entry's content; and a reload verifies them all.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from postcompact import _core, persist
from postcompact.config import Config
from postcompact.errors import ResourceExhausted
from postcompact.persist import SqliteStore
from postcompact.service.files import FileService
from postcompact.service.sessions import SessionService
from postcompact.state import AgentState, Change, InvokedSkill, Session
from postcompact.state.registry import Registry
from postcompact.v1 import postcompact_pb2 as pb


class World:
    def __init__(self, tmp_path: Path):
        self.root = tmp_path / "p"
        self.root.mkdir()
        self.db = tmp_path / "state" / "state.db"
        self.reg = Registry(Config(), store=SqliteStore(self.db, max_bytes=1 << 30))
        req = pb.OpenSessionRequest(session_id="s", cwd=str(self.root))
        self.s, _ = SessionService(self.reg, self.reg.config).open(req)

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
        with self.reg.mutate(self.s, self.a, room=None) as change:
            change.files = True
            change.digests.update(digests or {})

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
        self.reg.load()
        self.s = self.reg.sessions["s"]
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

    monkeypatch.setattr(persist.store, "content_digest", spy)  # where the store hashes
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
    s, _ = SessionService(reg, reg.config).open(
        pb.OpenSessionRequest(session_id="s", cwd=str(tmp_path))
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
        _, agent = w.reg.agent("s", "")
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
        service.record_write(
            pb.RecordWriteRequest(session_id="s", path=paths[3], content=written, timestamp_ms=7)
        )
        w.check()
        service.record_read(
            pb.RecordReadRequest(session_id="s", path=paths[5], content=b"file 5\n", timestamp_ms=9)
        )  # evicts again
        w.check()
        assert whole == [None, None, None, None, None, None, "whole", None, "whole"]
        s = w.reload()
        assert [p for p, _ in s.agents[""].files.snapshot()] == [r[0] for r in w.rows()]
    finally:
        w.reg.store.close()
