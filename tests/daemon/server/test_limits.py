"""Limits through the real daemon: each configurable, each answered with RESOURCE_EXHAUSTED (or
NOT_FOUND for an expired session) and a message naming the limit; the daemon keeps serving."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from postcompact_client import PostcompactError, Session
from postcompact_client.types import DeferredToolsDelta

from tests.daemon.conftest import (
    PROJECT_FILES,
    RunningDaemon,
    daemon_env,
    new_session_id,
    payload_of,
    serve_command,
    short_dir,
    start_daemon,
)

LIMITS = """
max_message_bytes = 65536
[limits]
max_sessions = 3
max_agents_per_session = 2
max_skills_per_agent = 2
max_tasks_per_session = 3
max_tasks_per_agent = 2
max_catalog_entries = 4
max_catalog_bytes = 600
"""
RE = grpc.StatusCode.RESOURCE_EXHAUSTED


@pytest.fixture(scope="module")
def limited() -> Iterator[RunningDaemon]:
    # Memory only: with state stored, max_sessions bounds memory and evicts instead of refusing
    # (tests/daemon/persist/test_lazy_sessions.py).
    d = start_daemon(["--no-persist"], config_toml=LIMITS)
    yield d
    d.stop()
    shutil.rmtree(d.dir, ignore_errors=True)


@pytest.fixture
def proj() -> Iterator[Path]:
    root = short_dir("pcl")
    for rel, text in PROJECT_FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _refused(call: Callable[[], Any], reason: str, limit: str) -> PostcompactError:
    with pytest.raises(PostcompactError) as exc:
        call()
    err = exc.value
    assert err.code == RE, err
    assert err.reason == reason, err
    assert f"limits.{limit}" in err.message, err.message
    return err


def _fresh(d: RunningDaemon, proj: Path, tag: str) -> Session:
    for info in d.client.list_sessions():  # the session limit is tiny: start from none
        d.client.session(info.session_id).close()
    return d.client.open_session(str(proj), session_id=new_session_id(tag))


def test_sessions(limited: RunningDaemon, proj: Path) -> None:
    first = _fresh(limited, proj, "s")
    for _ in range(2):
        limited.client.open_session(str(proj), session_id=new_session_id("s"))
    _refused(
        lambda: limited.client.open_session(str(proj), session_id=new_session_id("s")),
        "TOO_MANY_SESSIONS",
        "max_sessions",
    )
    # Resuming an existing session is not a new one; closing one makes room.
    assert limited.client.open_session(str(proj), session_id=first.session_id).resumed
    first.close()
    limited.client.open_session(str(proj), session_id=new_session_id("s"))


def test_agents_per_session(limited: RunningDaemon, proj: Path) -> None:
    s = _fresh(limited, proj, "a")
    s.start_agent("one")
    _refused(lambda: s.start_agent("two"), "TOO_MANY_AGENTS", "max_agents_per_session")


def test_skills_per_agent(limited: RunningDaemon, proj: Path) -> None:
    s = _fresh(limited, proj, "k")
    assert s.record_skill("a", content="x") == 1
    assert s.record_skill("b", content="y") == 2
    _refused(lambda: s.record_skill("c", content="z"), "TOO_MANY_SKILLS", "max_skills_per_agent")
    assert s.record_skill("a", content="again") == 2  # re-recording one is no new skill
    sub = s.start_agent("sub")
    assert sub.record_skill("c", content="z") == 1  # the limit is per agent


def test_tasks_per_session_and_agent(limited: RunningDaemon, proj: Path) -> None:
    s = _fresh(limited, proj, "t")
    s.upsert_task({"task_id": "1", "task_type": "local_agent", "agent_id": "w"})
    s.upsert_task({"task_id": "2", "task_type": "local_agent", "agent_id": "w"})
    _refused(
        lambda: s.upsert_task({"task_id": "3", "task_type": "local_agent", "agent_id": "w"}),
        "TOO_MANY_TASKS_FOR_AGENT",
        "max_tasks_per_agent",
    )
    s.upsert_task({"task_id": "2", "task_type": "local_agent", "agent_id": "w", "status": 2})
    s.upsert_task({"task_id": "3", "task_type": "shell"})
    _refused(
        lambda: s.upsert_task({"task_id": "4", "task_type": "shell"}),
        "TOO_MANY_TASKS",
        "max_tasks_per_session",
    )
    s.upsert_task({"task_id": "1", "task_type": "local_agent", "agent_id": "w", "status": 2})


def test_catalog_entries_and_bytes(limited: RunningDaemon, proj: Path) -> None:
    s = _fresh(limited, proj, "c")
    assert len(s.set_catalog(deferred_tools=["A", "B", "C"])) == 1
    _refused(
        lambda: s.set_catalog(skill_listing=[("x", "1"), ("y", "2")]),
        "CATALOG_TOO_MANY_ENTRIES",
        "max_catalog_entries",
    )
    _refused(
        lambda: s.set_catalog(mcp_servers={"big": "instructions " * 60}),
        "CATALOG_TOO_LARGE",
        "max_catalog_bytes",
    )
    # A refused catalogue changed nothing: replacing a part is judged on the result.
    (delta,) = s.set_catalog(deferred_tools=["A", "D"], skill_listing=[("x", "1")])[:1]
    tools = payload_of(delta, DeferredToolsDelta)
    assert (tools.added_names, tools.removed_names) == (("D",), ("B", "C"))


def test_message_size(limited: RunningDaemon, proj: Path) -> None:
    s = _fresh(limited, proj, "m")
    _refused(
        lambda: s.record_read("src/a.py", b"x" * 100_000), "MESSAGE_TOO_LARGE", "max_message_bytes"
    )
    assert limited.client.health()
    s.record_read("src/a.py", b"x" * 1000)


def test_idle_sessions_expire(proj: Path) -> None:
    d = start_daemon(config_toml="[limits]\nsession_ttl_s = 0.3\nsweep_interval_s = 0.05\n")
    try:
        s = d.client.open_session(str(proj), session_id=new_session_id("ttl"))
        deadline = time.monotonic() + 30
        while any(i.session_id == s.session_id for i in d.client.list_sessions()):
            assert time.monotonic() < deadline, "the idle session was never swept"
            time.sleep(0.05)
        with pytest.raises(PostcompactError) as exc:
            s.record_skill("x", content="y")
        assert exc.value.code == grpc.StatusCode.NOT_FOUND
        assert exc.value.reason == "SESSION_EXPIRED"
        assert "limits.session_ttl_s" in exc.value.message
        # Removed from disk too: a restart does not bring it back.
        d.stop(signal.SIGKILL)
        d = start_daemon(runtime_dir=d.dir)
        assert d.client.list_sessions() == []
        # Reopening the id starts a fresh session.
        assert not d.client.open_session(str(proj), session_id=s.session_id).resumed
    finally:
        d.stop()


def test_state_on_disk(proj: Path) -> None:
    d = start_daemon(config_toml="[limits]\nmax_state_bytes = 262144\n")
    try:
        s = d.client.open_session(str(proj), session_id=new_session_id("disk"))
        err: PostcompactError | None = None
        for i in range(100):
            try:
                s.record_skill(f"skill-{i}", content="z" * 20_000)
            except PostcompactError as exc:
                err = exc
                break
        assert err is not None, "100 skills of 20 kB fitted in 256 kB"
        assert err.code == RE
        assert err.reason in ("STATE_TOO_LARGE", "STATE_FULL")
        assert "limits.max_state_bytes" in err.message
        # Reads still work, and closing a session makes room again.
        assert s.read_file("src/a.py").content.startswith(b"alpha")
        s.close()
        s = d.client.open_session(str(proj), session_id=new_session_id("disk"))
        s.record_skill("after", content="z" * 20_000)
    finally:
        d.stop()


def test_a_bad_limit_is_a_configuration_error() -> None:
    base = short_dir("pcb")
    try:
        cfg = base / "config" / "postcompact" / "config.toml"
        cfg.parent.mkdir(parents=True)
        cfg.write_text("[limits]\nsession_ttl_s = -1\n")
        r = subprocess.run(
            serve_command(base / "d.sock"),
            env=daemon_env(base),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert r.returncode == 2
        assert "session_ttl_s" in r.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)
