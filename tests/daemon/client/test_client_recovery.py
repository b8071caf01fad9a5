"""The Python client recovers across a daemon restart (docs/clients.md, "Retries"): idempotent
calls made while the daemon restarts (SIGTERM or kill -9, then a new daemon on the same socket
and state) succeed with the state intact; a call that was never sent is retried too; a daemon
gone for good gives DaemonUnavailable (DAEMON_UNAVAILABLE) within the retry bound."""

from __future__ import annotations

import asyncio
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from postcompact_client import (
    AsyncClient,
    Client,
    DaemonUnavailable,
    PostcompactError,
    RetryPolicy,
    is_idempotent,
)
from postcompact_client.types import WriteCheck
from postcompact_client.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import (
    PROJECT_FILES,
    RunningDaemon,
    short_dir,
    start_daemon,
    write_project,
)

TS = 1_700_000_000_000


@pytest.fixture
def project() -> Iterator[Path]:
    root = write_project(short_dir("pcr"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def daemon() -> Iterator[list[RunningDaemon]]:
    """A daemon of its own (a one-element list: the test replaces it when it restarts it)."""
    box = [start_daemon()]
    yield box
    if box[0].proc.poll() is None:
        box[0].stop()
    shutil.rmtree(box[0].dir, ignore_errors=True)


def _restart(box: list[RunningDaemon], sig: int, down_s: float) -> None:
    d = box[0]
    d.stop(sig)
    time.sleep(down_s)
    box[0] = start_daemon(runtime_dir=d.dir)  # same socket, same state dir


def test_idempotence_table() -> None:
    assert is_idempotent("GetStats", pb.GetStatsRequest())
    assert is_idempotent("CheckWrite", pb.CheckWriteRequest())
    assert is_idempotent("OpenSession", pb.OpenSessionRequest(session_id="s", cwd="/"))
    assert not is_idempotent("OpenSession", pb.OpenSessionRequest(cwd="/"))
    assert is_idempotent("RecordRead", pb.RecordReadRequest(timestamp_ms=5))
    assert not is_idempotent("RecordRead", pb.RecordReadRequest())
    assert is_idempotent("RecordSkill", pb.RecordSkillRequest(invoked_at_ms=5))
    assert not is_idempotent("RecordSkill", pb.RecordSkillRequest())
    for method in ("ReadFile", "Compact", "SetCatalog", "StartAgent", "CloseSession"):
        assert not is_idempotent(method, None)
    waits = [RetryPolicy(jitter=0.0).backoff(n) for n in range(1, 8)]
    assert waits == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill9"])
def test_idempotent_calls_survive_a_restart(
    daemon: list[RunningDaemon], project: Path, sig: int
) -> None:
    client = Client(daemon[0].address, auto_start=False, timeout=10.0)
    s = client.open_session(str(project), session_id=f"recover-{sig}")
    a = str(project / "src/a.py")
    s.record_read(a, PROJECT_FILES["src/a.py"], timestamp_ms=int(time.time() * 1000))
    s.record_skill("review", path="/skills/review.md", content=b"look closely", invoked_at_ms=TS)
    s.upsert_task({"task_id": "t1", "task_type": "local_agent", "description": "bg"})

    stop = threading.Event()
    calls = 0
    errors: list[BaseException] = []

    def keep_calling() -> None:
        nonlocal calls
        n = 0
        while not stop.is_set():
            n += 1
            try:
                assert s.check_write(a).result == WriteCheck.ALLOWED
                s.record_skill(f"k{n % 5}", content=b"x", invoked_at_ms=TS + n)
                assert client.estimate_tokens("hello world") > 0
                assert any(i.session_id == s.session_id for i in client.list_sessions())
                calls += 4
            except BaseException as exc:
                errors.append(exc)
                return

    worker = threading.Thread(target=keep_calling)
    worker.start()
    try:
        time.sleep(0.3)
        before = calls
        _restart(daemon, sig, down_s=1.0)
        after_restart = calls
        deadline = time.monotonic() + 10
        while calls < after_restart + 8 and not errors and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        worker.join(30)
    assert not errors, errors
    assert before > 0
    assert calls >= after_restart + 8

    # The state recorded before (and during) the restart is all there.
    assert s.check_write(a).result == WriteCheck.ALLOWED
    assert s.record_skill("review", content=b"look closely", invoked_at_ms=TS) == 6
    again = client.open_session(str(project), session_id=s.session_id)
    assert again.resumed
    client.close()


def test_a_call_never_sent_is_retried_even_when_not_idempotent(
    daemon: list[RunningDaemon], project: Path
) -> None:
    client = Client(daemon[0].address, auto_start=False, timeout=10.0)
    s = client.open_session(str(project), session_id="recover-compact")
    s.read_file("src/a.py")
    d = daemon[0]
    d.stop()
    restarter = threading.Timer(1.0, lambda: daemon.__setitem__(0, start_daemon(runtime_dir=d.dir)))
    restarter.start()
    try:
        # Connection refused until the daemon is back: nothing was sent, so retrying is safe.
        resp = s.compact()
    finally:
        restarter.join(30)
    assert any(dec.name.endswith("src/a.py") for dec in resp.decisions)
    client.close()


def test_gone_for_good_is_a_clear_error_within_the_bound(
    daemon: list[RunningDaemon], project: Path
) -> None:
    client = Client(daemon[0].address, auto_start=False, retry=RetryPolicy(max_elapsed=2.0))
    s = client.open_session(str(project), session_id="recover-gone")
    daemon[0].stop()
    with pytest.raises(DaemonUnavailable) as info:
        s.check_write(str(project / "src/a.py"))
    err = info.value
    assert err.reason == "DAEMON_UNAVAILABLE"
    assert daemon[0].address in str(err)
    assert "CheckWrite" in str(err)
    # It retried, then gave up (the bound is time: 2 s of backoff, far below the attempt cap).
    assert err.attempts > 3
    assert err.metadata["attempts"] == str(err.attempts)
    # Turned off: one attempt.
    with pytest.raises(DaemonUnavailable) as once:
        Client(daemon[0].address, auto_start=False, retry=RetryPolicy.none()).stats()
    assert once.value.attempts == 1
    client.close()


def test_a_daemon_answer_is_never_retried(daemon: list[RunningDaemon], project: Path) -> None:
    client = Client(daemon[0].address, auto_start=False)
    with pytest.raises(PostcompactError) as info:
        client.session("no-such-session").check_write(str(project / "src/a.py"))
    # The daemon's own answer comes back as is: not retried into DAEMON_UNAVAILABLE.
    assert not isinstance(info.value, DaemonUnavailable)
    assert info.value.reason == "SESSION_NOT_FOUND"
    client.close()


def test_async_client_survives_a_kill9_restart(daemon: list[RunningDaemon], project: Path) -> None:
    async def scenario() -> None:
        client = AsyncClient(daemon[0].address, auto_start=False, timeout=10.0)
        s = await client.open_session(str(project), session_id="recover-async")
        a = str(project / "src/b.py")
        await s.record_read(a, PROJECT_FILES["src/b.py"], timestamp_ms=int(time.time() * 1000))
        restart = asyncio.get_running_loop().run_in_executor(
            None, _restart, daemon, signal.SIGKILL, 0.5
        )
        results = []
        while not restart.done():
            results.append((await s.check_write(a)).result)
            await asyncio.sleep(0.02)
        await restart
        results.append((await s.check_write(a)).result)
        assert set(results) == {WriteCheck.ALLOWED}
        daemon[0].stop()
        client.retry = RetryPolicy(max_elapsed=1.0)
        with pytest.raises(DaemonUnavailable):
            await client.stats()
        await client.close()

    asyncio.run(scenario())


def test_auto_start_with_a_missing_executable_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = short_dir("pcx")
    try:
        monkeypatch.setenv("POSTCOMPACT_BIN", str(base / "no-such-postcompact"))
        client = Client(f"unix://{base / 'd.sock'}", auto_start=True, start_timeout=2.0)
        with client, pytest.raises(DaemonUnavailable) as exc:
            client.server_info()
        assert "no-such-postcompact" in exc.value.message
        assert "POSTCOMPACT_BIN" in exc.value.message
    finally:
        shutil.rmtree(base, ignore_errors=True)
