"""Auto-start over a client's whole life (docs/clients.md, "Auto-start"): a long-lived client
that finds its daemon gone starts it again, bounded (at most `max_starts` a `window`, with a
back-off after each start); an auto-started daemon logs to a file in its state directory, and
one that cannot start fails the call at once with its first error line."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from postcompact_client import (
    AsyncClient,
    AutoStartPolicy,
    Client,
    DaemonStartFailed,
    DaemonUnavailable,
    RetryPolicy,
)

from tests.daemon.conftest import short_dir

POSTCOMPACT = str(Path(sys.executable).with_name("postcompact"))


@pytest.fixture
def base(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A scratch directory holding the auto-started daemons' runtime, state and config
    directories (the daemon inherits the client's environment)."""
    d = short_dir("pca")
    for key in list(os.environ):
        if key.startswith("POSTCOMPACT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(d / "run"))
    monkeypatch.setenv("XDG_STATE_HOME", str(d / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(d / "config"))
    monkeypatch.setenv("POSTCOMPACT_BIN", POSTCOMPACT)
    yield d
    server_json = d / "run" / "postcompact" / "server.json"
    for sj in (server_json, d / "server.json"):
        if sj.exists():
            _stop(json.loads(sj.read_text())["pid"])
    shutil.rmtree(d, ignore_errors=True)


def _stop(pid: int) -> None:
    """SIGTERM `pid` and wait (bounded) until it is gone: it is not our child."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(600):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)


def _log_records(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


def test_a_long_lived_client_starts_its_daemon_again(base: Path) -> None:
    with Client(auto_start=True, retry=RetryPolicy(max_elapsed=20.0)) as client:
        first = client.server_info().pid
        _stop(first)
        # Found gone: started again (after the back-off that follows a start), not
        # DAEMON_UNAVAILABLE once the retries run out.
        second = client.server_info().pid
        assert second != first
    # Logged to the state directory: both daemons, in one file (the default socket's).
    log = base / "state" / "postcompact" / "daemon.log"
    pids = [rec["pid"] for rec in _log_records(log) if rec["msg"] == "serving"]
    assert pids == [first, second]


def test_the_async_client_starts_its_daemon_again(base: Path) -> None:
    async def scenario() -> None:
        async with AsyncClient(auto_start=True, retry=RetryPolicy(max_elapsed=20.0)) as client:
            first = (await client.server_info()).pid
            _stop(first)
            assert (await client.server_info()).pid != first

    asyncio.run(scenario())


def test_a_daemon_that_cannot_start_fails_the_call_at_once_with_its_first_error_line(
    base: Path,
) -> None:
    cfg = base / "config" / "postcompact" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("[policy]\nfoo = 1\n")
    # The start timeout is long: the call must not wait it out for a daemon that has exited.
    with (
        Client(auto_start=True, start_timeout=120.0) as client,
        pytest.raises(DaemonStartFailed) as info,
    ):
        client.stats()
    err = info.value
    assert err.reason == "DAEMON_START_FAILED"
    assert "exited with status 2 before serving" in err.message, err.message
    assert "postcompact: configuration error:" in err.message, err.message
    assert "unknown key policy.foo" in err.message, err.message
    assert isinstance(err, DaemonUnavailable)  # what callers caught before
    # ... and the daemon said so in its log file too.
    log = base / "state" / "postcompact" / "daemon.log"
    assert any("unknown key policy.foo" in str(rec["msg"]) for rec in _log_records(log))


def test_the_async_client_says_why_the_daemon_could_not_start(base: Path) -> None:
    cfg = base / "config" / "postcompact" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("[policy]\nfoo = 1\n")

    async def scenario() -> None:
        async with AsyncClient(auto_start=True, start_timeout=120.0) as client:
            with pytest.raises(DaemonStartFailed, match=r"unknown key policy\.foo"):
                await client.stats()

    asyncio.run(scenario())


def _recording_bin(base: Path) -> tuple[Path, Path]:
    """A "daemon" that records its start and exits without serving."""
    spawns = base / "spawns"
    bin_ = base / "record-spawn"
    bin_.write_text(f'#!/bin/sh\necho x >> "{spawns}"\necho "postcompact: not today" >&2\n')
    bin_.chmod(0o755)
    return bin_, spawns


def test_starts_are_bounded_per_window(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_, spawns = _recording_bin(base)
    monkeypatch.setenv("POSTCOMPACT_BIN", str(bin_))
    policy = AutoStartPolicy(max_starts=2, window=3600.0, initial_backoff=0.0, max_backoff=0.0)
    with Client(
        f"unix://{base / 'none.sock'}",
        auto_start=True,
        auto_start_policy=policy,
        retry=RetryPolicy.none(),
    ) as client:
        for _ in range(2):
            with pytest.raises(DaemonStartFailed, match="postcompact: not today"):
                client.stats()
        with pytest.raises(DaemonUnavailable) as info:
            client.stats()
    assert not isinstance(info.value, DaemonStartFailed)
    assert info.value.reason == "DAEMON_UNAVAILABLE"
    assert "2 starts in the last 3600 s" in info.value.message, info.value.message
    assert spawns.read_text() == "x\nx\n"


def test_a_start_waits_out_the_back_off(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_, spawns = _recording_bin(base)
    monkeypatch.setenv("POSTCOMPACT_BIN", str(bin_))
    policy = AutoStartPolicy(initial_backoff=3600.0, max_backoff=3600.0)
    with Client(
        f"unix://{base / 'none.sock'}",
        auto_start=True,
        auto_start_policy=policy,
        retry=RetryPolicy.none(),
    ) as client:
        with pytest.raises(DaemonStartFailed):
            client.stats()
        with pytest.raises(DaemonUnavailable) as info:
            client.stats()
    assert info.value.reason == "DAEMON_UNAVAILABLE"
    assert "the last start failed" in info.value.message, info.value.message
    assert "postcompact: not today" in info.value.message, info.value.message
    assert spawns.read_text() == "x\n"
    # Off: nothing is started at all.
    off = Client(f"unix://{base / 'none.sock'}", auto_start=False, retry=RetryPolicy.none())
    with off, pytest.raises(DaemonUnavailable):
        off.stats()
    assert spawns.read_text() == "x\n"
