"""Heavy work leaves the event loop (issue 11, item 2; docs/reliability.md): a call held in its
worker thread by a failpoint does not stop another client's ping. Had the work run on the loop,
the hold would stop the loop and the ping would time out."""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from postcompact_client import Client

from tests.daemon.conftest import (
    Hold,
    RunningDaemon,
    daemon_env,
    held_daemon,
    new_session_id,
    serve_command,
    short_dir,
)

PING_TIMEOUT_S = 10.0


@pytest.fixture(scope="module")
def held() -> Iterator[tuple[RunningDaemon, dict[str, Hold]]]:
    d, holds = held_daemon("tokens.worker", "readfile.worker")
    yield d, {h.name: h for h in holds}
    d.stop()
    shutil.rmtree(d.dir, ignore_errors=True)


def _in_background(call: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(call())
        except Exception as exc:  # surfaced by the test's assertion on `out`
            out.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def _ping_while_held(d: RunningDaemon, hold: Hold) -> None:
    hold.wait_reached()
    other = Client(d.address, auto_start=False, timeout=PING_TIMEOUT_S)
    try:
        assert other.server_info().pid == d.proc.pid  # answered while the worker is held
        assert other.estimate_tokens("small text stays inline") > 0
    finally:
        other.close()


def test_a_single_exact_truncation_runs_off_the_loop(
    held: tuple[RunningDaemon, dict[str, Hold]],
) -> None:
    d, holds = held
    text = "word " * 200_000  # 1 MB: over the inline threshold
    t, out = _in_background(lambda: d.client.truncate_tokens(text, 1000, counter="exact"))
    _ping_while_held(d, holds["tokens.worker"])
    holds["tokens.worker"].release()
    t.join(60)
    (resp,) = out
    assert not isinstance(resp, Exception), resp
    assert resp.truncated
    assert resp.tokens <= 1000


def test_a_large_read_runs_off_the_loop(held: tuple[RunningDaemon, dict[str, Hold]]) -> None:
    d, holds = held
    root = short_dir("pce")
    try:
        big = root / "big.txt"
        big.write_text("".join(f"line {i}\n" for i in range(100_000)))  # ~700 KB, not inline
        s = d.client.open_session(str(root), session_id=new_session_id("loop"))
        t, out = _in_background(lambda: s.read_file(str(big), offset=10, limit=5))
        _ping_while_held(d, holds["readfile.worker"])
        holds["readfile.worker"].release()
        t.join(60)
        (resp,) = out
        assert not isinstance(resp, Exception), resp
        assert resp.content == b"line 9\nline 10\nline 11\nline 12\nline 13"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_bad_failpoint_spec_is_one_line_at_start(tmp_path: Path) -> None:
    env = daemon_env(tmp_path, {"POSTCOMPACT_FAILPOINTS": "tokens.worker=sleep:1"})
    r = subprocess.run(
        serve_command(tmp_path / "d.sock"),
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert r.returncode != 0
    assert "POSTCOMPACT_FAILPOINTS" in r.stderr
    assert "Traceback" not in r.stderr
