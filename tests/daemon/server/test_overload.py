"""Under overload (issue 11, item 15; docs/reliability.md): a bounded number of calls is admitted,
the rest are answered RESOURCE_EXHAUSTED `OVERLOADED` with a google.rpc.RetryInfo before anything
is applied, gRPC never cancels a call without a reason, and the Python client retries exactly the
errors that carry a RetryInfo (the Go, Node and Rust clients are held to the same rule by the
conformance suite)."""

from __future__ import annotations

import asyncio
import collections
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from postcompact.v1 import postcompact_pb2 as pb
from postcompact.v1 import postcompact_pb2_grpc as pb_grpc
from postcompact_client import Client, PostcompactError, RetryPolicy

from tests.daemon.conftest import (
    Hold,
    RunningDaemon,
    held_daemon,
    new_session_id,
    short_dir,
    start_daemon,
)

LIMITS = "[limits]\nmax_calls_in_flight = 2\nmax_agents_per_session = 3\n"


@pytest.fixture
def held() -> Iterator[tuple[RunningDaemon, Hold, Path]]:
    d, (hold,) = held_daemon("readfile.worker", config_toml=LIMITS)
    root = short_dir("pco")
    big = root / "big.txt"
    big.write_text("".join(f"line {i}\n" for i in range(100_000)))  # not read inline
    yield d, hold, root
    hold.release()
    d.stop()
    shutil.rmtree(d.dir, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)


def _background(call: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(call())
        except Exception as exc:  # inspected by the test
            out.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


def _fill(d: RunningDaemon, hold: Hold, root: Path) -> tuple[Any, list[threading.Thread]]:
    """Two ReadFiles held in their worker: the daemon is at its limit of 2 calls in flight."""
    s = d.client.open_session(str(root), session_id=new_session_id("ovl"))
    readers = [s, s.start_agent("second")]  # one agent's calls would wait for each other
    threads = []
    for r in readers:
        t, _ = _background(lambda r=r: r.read_file(str(root / "big.txt"), offset=2, limit=3))
        threads.append(t)
    hold.wait_reached(2)
    return s, threads


def test_over_the_limit_a_call_is_refused_with_retry_info_and_not_applied(
    held: tuple[RunningDaemon, Hold, Path],
) -> None:
    d, hold, root = held
    s, threads = _fill(d, hold, root)
    channel = grpc.insecure_channel(d.address)
    stub = pb_grpc.PostcompactServiceStub(channel)
    path = str(root / "recorded.txt")
    Path(path).write_text("x")
    with pytest.raises(grpc.RpcError) as exc:
        stub.RecordRead(
            pb.RecordReadRequest(session_id=s.session_id, path=path, content=b"x", timestamp_ms=1),
            timeout=10,
        )
    err: Any = exc.value
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    trailers = dict(err.trailing_metadata())
    assert trailers["postcompact-error-reason"] == "OVERLOADED"
    assert "limits.max_calls_in_flight (2)" in err.details()
    status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    delays = []
    for detail in status.details:
        retry = error_details_pb2.RetryInfo()
        if detail.Unpack(retry):
            delays.append(retry.retry_delay.ToMilliseconds())
    assert delays == [100]
    # GetServerInfo is not counted: an overloaded daemon still says who it is.
    assert stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=10).pid == d.proc.pid
    hold.release()
    for t in threads:
        t.join(60)
    # Refused before it was applied: the file was never recorded.
    assert s.check_write(path).result == pb.WRITE_CHECK_NOT_READ
    channel.close()


def test_the_client_retries_an_overloaded_call_once_applied(
    held: tuple[RunningDaemon, Hold, Path],
) -> None:
    """Compact is not idempotent, yet an OVERLOADED Compact is retried: it was not applied. It
    succeeds once the daemon has room, and counts one compaction."""
    d, hold, root = held
    s, threads = _fill(d, hold, root)
    t, out = _background(lambda: d.client.session(s.session_id).compact())
    deadline = time.monotonic() + 30
    while d.log.read_text().count('"reason": "OVERLOADED"') < 2:  # refused, then retried
        assert time.monotonic() < deadline, d.stderr()
        t.join(0.05)
    hold.release()
    t.join(60)
    for th in threads:
        th.join(60)
    (resp,) = out
    assert not isinstance(resp, Exception), resp
    assert resp.compaction == 1


def test_a_permanent_limit_is_not_retried(held: tuple[RunningDaemon, Hold, Path]) -> None:
    d, _hold, root = held
    s = d.client.open_session(str(root), session_id=new_session_id("full"))
    s.start_agent("one")
    s.start_agent("two")  # the main agent and these two: limits.max_agents_per_session
    before = d.log.read_text().count("TOO_MANY_AGENTS")
    with pytest.raises(PostcompactError) as exc:
        s.start_agent("three")
    assert exc.value.reason == "TOO_MANY_AGENTS"
    assert exc.value.retry_after is None
    assert d.log.read_text().count("TOO_MANY_AGENTS") == before + 1  # asked once


def test_a_flood_gets_an_answer_with_a_reason_for_every_call() -> None:
    """1,500 calls at once on 4 channels, no client retries: each is answered, and every error
    has a reason (gRPC's own limit of 1,000 pending calls used to cancel the excess bare)."""
    d = start_daemon()
    root = short_dir("pcf")
    try:
        big = root / "big.txt"
        big.write_text("x\n" * 200_000)
        counts = asyncio.run(_flood(d.address, str(root), str(big), 1500))
    finally:
        d.stop()
        shutil.rmtree(d.dir, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)
    bare = {k: v for k, v in counts.items() if k != "OK" and not k.split(" ")[1]}
    assert not bare, counts
    assert counts["OK"] > 0


async def _flood(address: str, cwd: str, big: str, n: int) -> collections.Counter[str]:
    channels = [grpc.aio.insecure_channel(address) for _ in range(4)]
    stubs = [pb_grpc.PostcompactServiceStub(c) for c in channels]
    sid = (await stubs[0].OpenSession(pb.OpenSessionRequest(cwd=cwd))).session_id

    async def one(i: int) -> str:
        stub = stubs[i % 4]
        try:
            if i % 2:
                await stub.ReadFile(
                    pb.ReadFileRequest(session_id=sid, path=big, offset=1 + i, limit=10),
                    timeout=120,
                )
            else:
                await stub.TruncateTokens(
                    pb.TruncateTokensRequest(text=b"word " * 20_000, max_tokens=10),
                    timeout=120,
                )
            return "OK"
        except grpc.aio.AioRpcError as exc:
            reason = dict(exc.trailing_metadata() or ()).get("postcompact-error-reason", "")
            return f"{exc.code().name} {reason}"

    try:
        return collections.Counter(await asyncio.gather(*(one(i) for i in range(n))))
    finally:
        for c in channels:
            await c.close()


def test_retry_policy_none_reports_the_overload(
    held: tuple[RunningDaemon, Hold, Path],
) -> None:
    d, hold, root = held
    _, threads = _fill(d, hold, root)
    c = Client(d.address, auto_start=False, retry=RetryPolicy.none())
    try:
        with pytest.raises(PostcompactError) as exc:
            c.estimate_tokens_batch(["a", "b"])
        assert exc.value.reason == "OVERLOADED"
        assert exc.value.retry_after == pytest.approx(0.1)
    finally:
        c.close()
        hold.release()
        for t in threads:
            t.join(60)
