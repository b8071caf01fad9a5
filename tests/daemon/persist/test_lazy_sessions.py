"""Sessions load on first use, and the store runs off the event loop (issue 39; docs/persistence.md
"Loading", docs/fleet.md), through the real daemon over its socket, on SQLite and PostgreSQL.

- Start-up reads no session: the daemon's debug log names each session it reads from the state
  database, and there is none until a call names one; ListSessions and GetStats answer from the
  store without reading any.
- limits.max_sessions and limits.max_content_bytes bound what is in memory, not what is stored:
  past them the least recently used idle session leaves memory and is read back, whole, when
  next named.
- A write waiting on a lock held elsewhere holds up neither health nor (on PostgreSQL, with its
  pool of connections) another session's calls.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from pathlib import Path

import psycopg
import pytest
from postcompact_client import Client, PostcompactError, Session
from postcompact_client.types import TaskStatus, WriteCheck

from tests.daemon.conftest import (
    RunningDaemon,
    State,
    new_session_id,
    start_daemon,
    text_of,
    write_project,
)

MIB = 1 << 20
LOADED = "session read from the state database"
LEFT = "session left memory (still stored)"


def _log(d: RunningDaemon, msg: str) -> list[dict[str, object]]:
    return [
        entry
        for entry in (json.loads(line) for line in d.stderr().splitlines() if line.startswith("{"))
        if entry.get("msg") == msg
    ]


@pytest.fixture
def project(base: Path) -> Path:
    return write_project(base / "proj")


def _daemon(state: State, base: Path, toml: str = "") -> RunningDaemon:
    run = base / "d"
    run.mkdir(mode=0o700, exist_ok=True)
    return start_daemon(
        [*state.args, "--log-level", "debug"],
        runtime_dir=run,
        config_toml=toml or None,
    )


def test_start_up_reads_no_session(state: State, base: Path, project: Path) -> None:
    d = _daemon(state, base)
    ids = [new_session_id("lazy") for _ in range(6)]
    try:
        for sid in ids:
            s = d.client.open_session(str(project), session_id=sid)
            s.read_file("src/a.py")
            s.start_agent("sub").read_file("README.md")
    finally:
        assert d.stop() == 0, d.stderr()

    d = _daemon(state, base)
    try:
        assert _log(d, LOADED) == []  # start-up read none of them
        stats = d.client.stats()
        assert stats.sessions_in_memory == 0
        assert stats.sessions_read == 0
        assert stats.sessions == 6
        assert stats.agents == 12
        assert stats.cached_entries == 12
        listed = {i.session_id: i for i in d.client.list_sessions()}
        assert set(listed) == set(ids)
        assert list(listed[ids[0]].agent_ids) == ["", "sub"]
        assert listed[ids[0]].cached_entries == 2
        assert _log(d, LOADED) == []  # nor did listing and counting them
        # The first call naming a session reads it, once, whole.
        s = d.client.session(ids[3])
        assert s.read_file("src/a.py").unchanged
        assert d.client.session(ids[3], "sub").read_file("README.md").unchanged
        assert [e["session_id"] for e in _log(d, LOADED)] == [ids[3]]
        stats = d.client.stats()
        assert (stats.sessions_in_memory, stats.sessions_read) == (1, 1)
    finally:
        d.stop()


def test_max_sessions_bounds_memory_not_what_is_stored(
    state: State, base: Path, project: Path
) -> None:
    d = _daemon(state, base, "[limits]\nmax_sessions = 3\n")
    ids = [new_session_id("evict") for _ in range(8)]
    try:
        for sid in ids:
            s = d.client.open_session(str(project), session_id=sid)
            assert not s.read_file("src/a.py").unchanged
            s.record_skill("lint", content=f"Lint {sid} first.")
        assert len(_log(d, LEFT)) >= 5  # at most three stayed in memory
        stats = d.client.stats()
        assert stats.sessions == 8
        assert stats.sessions_in_memory <= 3
        assert stats.sessions_evicted >= 5
        assert {i.session_id for i in d.client.list_sessions()} == set(ids)
        # Each comes back whole when named: its read ("unchanged"), its skill.
        for sid in ids:
            s = d.client.session(sid)
            assert s.read_file("src/a.py").unchanged, sid
            assert f"Lint {sid} first." in "\n".join(
                text_of(a) for a in s.preview_compact().attachments
            )
        assert len(_log(d, LOADED)) >= 5
        assert "TOO_MANY_SESSIONS" not in d.stderr()
    finally:
        d.stop()


def test_the_content_ceiling_bounds_memory_not_what_is_stored(
    state: State, base: Path, project: Path
) -> None:
    """12 sessions record 1 MiB each under an 8 MiB ceiling: every call is accepted (sessions no
    call is using leave memory), the daemon holds at most 8 MiB, and each session's entry is
    read back verified when next named."""
    d = _daemon(state, base, f"[limits]\nmax_content_bytes = {8 * MIB}\n")
    try:
        sessions: list[Session] = []
        for i in range(12):
            path = project / f"big{i}.txt"
            content = bytes([65 + i]) * MIB
            path.write_bytes(content)
            s = d.client.open_session(str(project), session_id=new_session_id("ceil"))
            s.record_read(str(path), content)
            sessions.append(s)
            assert d.client.stats().content_bytes <= 8 * MIB
        for i, s in enumerate(sessions):
            assert s.check_write(str(project / f"big{i}.txt")).result == WriteCheck.ALLOWED
        assert "CONTENT_LIMIT" not in d.stderr()
    finally:
        d.stop()


def test_a_session_idle_past_its_ttl_expires_when_first_named(
    state: State, base: Path, project: Path
) -> None:
    d = _daemon(state, base)
    sid = new_session_id("ttl")
    try:
        d.client.open_session(str(project), session_id=sid).read_file("src/a.py")
    finally:
        assert d.stop() == 0
    idle = f"UPDATE sessions SET last_active_ms = 1000 WHERE session_id = '{sid}'"
    if state.kind == "postgresql":
        with psycopg.connect(state.url, autocommit=True) as pg:
            pg.execute(idle)
    else:
        (db,) = (d.dir / "state" / "postcompact").glob("state*.db")
        with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as lite:
            lite.execute(idle)
    d = _daemon(state, base, "[limits]\nsession_ttl_s = 3600\nsweep_interval_s = 3600\n")
    try:
        with pytest.raises(PostcompactError) as exc:
            d.client.session(sid).read_file("src/a.py")
        assert exc.value.reason == "SESSION_EXPIRED", exc.value
    finally:
        d.stop()
    ((rows,),) = state.sql(d, f"SELECT count(*) FROM files WHERE session_id = '{sid}'")
    assert rows == 0


def _waiting_on_a_lock(state: State, d: RunningDaemon) -> None:
    """Until the daemon's write waits: PostgreSQL shows the lock it waits for; SQLite does not
    show its busy wait, so a moment is given for the call to reach it."""
    if state.kind != "postgresql":
        time.sleep(0.5)
        return
    for _ in range(500):
        ((waiting,),) = state.sql(d, "SELECT count(*) FROM pg_locks WHERE NOT granted")
        if waiting:
            return
        time.sleep(0.01)
    raise AssertionError("the daemon's write never waited on the lock")


def test_health_and_other_sessions_answer_while_a_write_waits_on_a_lock(
    state: State, base: Path, project: Path
) -> None:
    d = _daemon(state, base)
    other = Client(d.address, auto_start=False)
    try:
        waiting = d.client.open_session(str(project), session_id=new_session_id("locked"))
        free = d.client.open_session(str(project), session_id=new_session_id("free"))
        free.read_file("src/a.py")
        outcome: list[object] = []

        def write() -> None:
            try:
                task = {
                    "task_id": "t1",
                    "task_type": "local_agent",
                    "description": "waits for the lock",
                    "status": TaskStatus.RUNNING,
                }
                waiting.upsert_task(task)
                outcome.append("stored")
            except Exception as exc:
                outcome.append(exc)

        with state.table_locked(d, "tasks"):
            writer = threading.Thread(target=write)
            writer.start()
            _waiting_on_a_lock(state, d)
            assert other.health(timeout=10)  # health answers...
            assert other.server_info().pid == d.proc.pid
            assert writer.is_alive()  # ...while the write still waits
            if state.kind == "postgresql":
                # Another session's calls go on another connection of the pool.
                assert other.session(free.session_id).read_file("src/a.py").unchanged
                other.session(free.session_id).record_read("src/b.py", b"print('b')\n")
                assert writer.is_alive()
        writer.join(30)
        assert not writer.is_alive()
        assert len(outcome) == 1, outcome
        assert not isinstance(outcome[0], Exception), outcome
        ((tasks,),) = state.sql(
            d, f"SELECT count(*) FROM tasks WHERE session_id = '{waiting.session_id}'"
        )
        assert tasks == 1
    finally:
        other.close()
        d.stop()
