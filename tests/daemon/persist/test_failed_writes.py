"""A write to the state database that fails leaves nothing behind, through the real daemon, on
both stores.

The daemon changes memory, then writes; when the write fails the call fails, the transaction is
rolled back and the session re-read from the database (persist/sqlstore.py, `Registry.resync`). The
failure here is real (`State.writes_fail`): with SQLite the daemon's RLIMIT_FSIZE is lowered to 0,
so SQLite's next write to its WAL fails with EFBIG (an I/O error), as on a disk that refuses
writes; with PostgreSQL the server itself refuses every write to the state's tables with an I/O
error. A call that awaits a read while its session is closed records nothing either: no rows
outlive the session.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from postcompact import render
from postcompact.config import Config
from postcompact.errors import ResourceExhausted
from postcompact.persist import SqliteStore
from postcompact.service.files import FileService
from postcompact.service.sessions import SessionService
from postcompact.service.work import WorkService
from postcompact.state.registry import Registry
from postcompact.state.worker import finish_inline as done
from postcompact.v1 import postcompact_pb2 as dpb
from postcompact_client import AsyncClient, PostcompactError
from postcompact_client.types import PreviewCompactResponse, ReadFileResponse

from tests.daemon.conftest import (
    PROJECT_FILES,
    RunningDaemon,
    State,
    evict_from_page_cache,
    new_session_id,
    start_daemon,
    text_of,
    write_project,
)


@pytest.fixture
def project(base: Path) -> Path:
    return write_project(base / "proj")


def _ddir(base: Path) -> Path:
    d = base / "d"
    d.mkdir(mode=0o700, exist_ok=True)
    return d


@pytest.fixture
def daemon(state: State, base: Path) -> Iterator[RunningDaemon]:
    d = start_daemon(state.args, runtime_dir=_ddir(base))
    yield d
    d.stop()


def _fails_to_write(call: object) -> None:
    assert isinstance(call, PostcompactError), call
    assert call.code == grpc.StatusCode.UNAVAILABLE
    assert call.reason == "STATE_WRITE_FAILED"
    assert "state database" in call.message


def _attempt(fn: object, *args: object, **kwargs: object) -> PostcompactError:
    assert callable(fn)
    with pytest.raises(PostcompactError) as exc:
        fn(*args, **kwargs)
    _fails_to_write(exc.value)
    return exc.value


def _texts(resp: PreviewCompactResponse) -> list[str]:
    return [text_of(a) for a in resp.attachments]


def test_a_failed_read_file_is_not_recorded(
    state: State, daemon: RunningDaemon, project: Path
) -> None:
    s = daemon.client.open_session(str(project), session_id=new_session_id("fw"))
    s.read_file("src/a.py")
    with state.writes_fail(daemon):
        _attempt(s.read_file, "src/b.py")
        # The same read again fails the same way: no "unchanged" stub from the first attempt.
        _attempt(s.read_file, "src/b.py")
    again = s.read_file("src/b.py")
    assert not again.unchanged, "a read the client never got was answered 'unchanged'"
    assert again.content == PROJECT_FILES["src/b.py"].encode()
    assert s.read_file("src/b.py").unchanged  # recorded now
    # The entry of the read before the failure is intact.
    assert s.read_file("src/a.py").unchanged


def test_a_failed_re_read_of_an_unchanged_file_is_not_recorded(
    state: State, daemon: RunningDaemon, project: Path
) -> None:
    """A re-read whose content stayed only moves its row: one statement of its own, outside any
    transaction (`SqlStore._single`). Failing, it is not recorded either: the entry is the one
    stored before, so the next read is answered whole, not with the stub."""
    s = daemon.client.open_session(str(project), session_id=new_session_id("fw"))
    s.read_file("src/a.py")
    path = project / "src/a.py"
    mtime = path.stat().st_mtime_ns + 5_000_000_000  # the same content, a new mtime
    os.utime(path, ns=(mtime, mtime))
    with state.writes_fail(daemon):
        _attempt(s.read_file, "src/a.py")
    again = s.read_file("src/a.py")
    assert not again.unchanged, "a re-read the client never got was recorded"
    assert again.content == PROJECT_FILES["src/a.py"].encode()
    assert s.read_file("src/a.py").unchanged


def test_a_failed_skill_is_not_restored(state: State, daemon: RunningDaemon, project: Path) -> None:
    s = daemon.client.open_session(str(project), session_id=new_session_id("fw"))
    s.record_skill("kept", content="Kept skill body.")
    with state.writes_fail(daemon):
        _attempt(s.record_skill, "refused", content="Refused skill body.")
    text = "\n".join(_texts(s.preview_compact()))
    assert "Kept skill body." in text
    assert "Refused skill body." not in text


def test_a_failed_compact_changes_nothing(
    state: State, daemon: RunningDaemon, project: Path
) -> None:
    s = daemon.client.open_session(str(project), session_id=new_session_id("fw"))
    for rel in ("src/a.py", "src/b.py", "README.md"):
        s.read_file(rel)
    before = s.preview_compact()
    with state.writes_fail(daemon):
        _attempt(s.compact)
    after = s.preview_compact()
    assert after.compaction == before.compaction == 0  # a preview reports the count as is
    assert _texts(after) == _texts(before)
    assert s.compact().compaction == 1  # the failed one did not count
    # The re-seed happened now: every restored file is "unchanged" to the agent.
    assert s.read_file("src/a.py").unchanged


def test_a_failed_open_session_leaves_no_session(
    state: State, daemon: RunningDaemon, project: Path
) -> None:
    sid = new_session_id("fw")
    with state.writes_fail(daemon):
        _attempt(daemon.client.open_session, str(project), session_id=sid)
    assert sid not in [i.session_id for i in daemon.client.list_sessions()]
    assert not daemon.client.open_session(str(project), session_id=sid).resumed


def test_a_failed_close_session_keeps_the_session(
    state: State, daemon: RunningDaemon, project: Path
) -> None:
    s = daemon.client.open_session(str(project), session_id=new_session_id("fw"))
    s.read_file("src/a.py")
    with state.writes_fail(daemon):
        _attempt(s.close)
    assert s.session_id in [i.session_id for i in daemon.client.list_sessions()]
    assert s.read_file("src/a.py").unchanged
    s.close()
    assert s.session_id not in [i.session_id for i in daemon.client.list_sessions()]


def test_memory_equals_the_database_after_failures(state: State, base: Path, project: Path) -> None:
    """What the daemon answers after failed writes is what a restart from its database
    answers: the two did not drift apart."""
    d = start_daemon(state.args, runtime_dir=_ddir(base))
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("fw"))
        s.read_file("src/a.py")
        s.record_skill("kept", content="Kept.")
        with state.writes_fail(d):
            _attempt(s.read_file, "README.md")
            _attempt(s.record_skill, "refused", content="Refused.")
            _attempt(s.set_mode, "plan")
            _attempt(s.compact)
        live = _texts(s.preview_compact())
        d.stop(signal.SIGKILL)
        d = start_daemon(state.args, runtime_dir=_ddir(base))
        s = d.client.session(s.session_id)
        assert _texts(s.preview_compact()) == live
        assert render.FILE_UNCHANGED_STUB.encode() == s.read_file("src/a.py").text
        assert not s.read_file("README.md").unchanged
    finally:
        d.stop()


def test_a_read_racing_close_session_leaves_no_rows(
    state: State, daemon: RunningDaemon, project: Path
) -> None:
    """ReadFile awaits its read (here on a worker thread: the file is evicted from the page
    cache) while CloseSession removes the session: the read must not write rows for it."""
    big = project / "big.txt"
    big.write_text("".join(f"line {i}\n" for i in range(20_000)))
    rounds = 60

    async def race() -> dict[str, int]:
        seen: dict[str, int] = {}
        async with AsyncClient(daemon.address, auto_start=False) as client:
            for i in range(rounds):
                s = await client.open_session(str(project), session_id=f"race-{i}")
                evict_from_page_cache(big)
                read = asyncio.ensure_future(s.read_file(str(big), offset=1, limit=10_000))
                await asyncio.sleep(0)  # the read is sent first
                await s.close()
                outcome = await asyncio.gather(read, return_exceptions=True)
                if isinstance(outcome[0], PostcompactError):
                    err = outcome[0]
                    assert err.code == grpc.StatusCode.NOT_FOUND, err
                    assert err.reason in ("SESSION_CLOSED", "SESSION_NOT_FOUND"), err
                    key = err.reason
                else:
                    assert isinstance(outcome[0], ReadFileResponse), outcome[0]
                    key = "read"
                seen[key] = seen.get(key, 0) + 1
        return seen

    seen = asyncio.run(race())
    assert sum(seen.values()) == rounds
    assert daemon.stop() == 0
    for table in ("sessions", "agents", "files"):
        ((rows,),) = state.sql(
            daemon, f"SELECT count(*) FROM {table} WHERE session_id LIKE 'race-%'"
        )
        assert rows == 0, f"{rows} {table} rows outlived their closed session ({seen})"


def test_a_failed_write_re_reads_only_what_it_wrote(tmp_path: Path) -> None:
    """In process, with SQLite itself refusing to grow (max_page_count): a failed write of one
    agent re-reads that agent; the session's other agents keep their objects untouched."""
    project = write_project(tmp_path / "proj")
    store = SqliteStore(tmp_path / "state.db", max_bytes=1 << 30)
    try:
        reg = Registry(Config(), store=store)
        files = FileService(reg, Config())
        work = WorkService(reg, Config())
        sessions = SessionService(reg, reg.config)
        s, _ = done(sessions.open(dpb.OpenSessionRequest(session_id="s", cwd=str(project))))
        done(sessions.start_agent(dpb.StartAgentRequest(session_id="s", agent_id="sub")))
        main, sub = s.agents[""], s.agents["sub"]
        for agent in ("", "sub"):
            done(
                files.record_read(
                    dpb.RecordReadRequest(
                        session_id="s", agent_id=agent, path="src/a.py", content=b"alpha = 1\n"
                    )
                )
            )
        main_cache, sub_cache = main.files, sub.files
        store.conn.execute("PRAGMA max_page_count = 1")  # clamped to the pages in use
        with pytest.raises(ResourceExhausted) as exc:
            done(
                work.record_skill(
                    dpb.RecordSkillRequest(
                        session_id="s", agent_id="sub", name="big", content=b"x" * 200_000
                    )
                )
            )
        assert exc.value.reason == "STATE_FULL"
        assert reg.resyncs == 1
        assert s.agents["sub"] is sub
        assert "big" not in sub.skills
        assert sub.files is not sub_cache  # re-read from the database...
        assert sub.files.keys() == sub_cache.keys()  # ...as it was stored
        assert s.agents[""] is main
        assert main.files is main_cache
    finally:
        store.close()
