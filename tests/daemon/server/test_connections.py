"""Connections (issue 11, items 3, 8, 9 and 16; docs/reliability.md, docs/security.md): another
user cannot lock the owner out, idle and silent connections are closed, a stopped client does
not pin its answer, nothing is told without the token, and every error carries a reason.

The tests that need a second user (setpriv) or a lowered descriptor limit (prlimit) say so and
skip unless run as root; CI runs as root."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from postcompact_client import Client

from tests.daemon.conftest import (
    Hold,
    RunningDaemon,
    daemon_env,
    held_daemon,
    new_session_id,
    serve_command,
    short_dir,
    start_daemon,
)

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not (ROOT and shutil.which("setpriv") and shutil.which("prlimit")),
    reason="needs root, setpriv and prlimit (a second uid, a lowered RLIMIT_NOFILE)",
)
NOBODY = 65534


def _reason(err: Any) -> str:
    return str(dict(err.trailing_metadata() or ()).get("postcompact-error-reason", ""))


def _call(channel: grpc.Channel, method: str, token: str | None = None) -> Any:
    """The error a raw call of `method` gets (a grpc.Call and RpcError)."""
    fn: Any = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
    md = (("authorization", f"Bearer {token}"),) if token else ()
    with pytest.raises(grpc.RpcError) as exc:
        fn(b"", timeout=10, metadata=md)
    return exc.value


@pytest.fixture(scope="module")
def tcp_daemon() -> Iterator[tuple[RunningDaemon, int, str]]:
    d = start_daemon(["--tcp-port", "0"])
    info = json.loads(d.server_json.read_text())
    token = Path(info["token_file"]).read_text().strip()
    yield d, info["tcp_port"], token
    d.stop()
    shutil.rmtree(d.dir, ignore_errors=True)


# --- item 9: nothing is told without the token ----------------------------------------------


@pytest.mark.parametrize(
    "method",
    [
        "/postcompact.v1.PostcompactService/GetServerInfo",
        "/postcompact.v1.PostcompactService/NoSuchMethod",
        "/no.such.Service/Call",
        "/grpc.health.v1.Health/Check",
    ],
)
def test_without_the_token_every_method_is_unauthenticated(
    tcp_daemon: tuple[RunningDaemon, int, str], method: str
) -> None:
    _, port, _ = tcp_daemon
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        err = _call(ch, method)
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED
    assert _reason(err) == "UNAUTHENTICATED"


# --- item 16: gRPC's own errors carry a reason ----------------------------------------------


def _clean_up(d: RunningDaemon, readers: list[subprocess.Popen[str]], root: Path | None) -> None:
    """Stopped readers woken and killed, the daemon stopped, their directories removed."""
    for r in readers:
        if r.poll() is None:
            r.send_signal(signal.SIGCONT)
            r.kill()
            r.communicate()
    d.stop()
    shutil.rmtree(d.dir, ignore_errors=True)
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)


def test_an_unknown_method_has_a_reason(tcp_daemon: tuple[RunningDaemon, int, str]) -> None:
    d, port, token = tcp_daemon
    for target, tok in ((f"unix://{d.socket_path}", None), (f"127.0.0.1:{port}", token)):
        with grpc.insecure_channel(target) as ch:
            err = _call(ch, "/postcompact.v1.PostcompactService/NoSuchMethod", tok)
        assert err.code() == grpc.StatusCode.UNIMPLEMENTED
        assert _reason(err) == "UNKNOWN_METHOD"
        assert "NoSuchMethod" in err.details()


def test_health_of_an_unknown_service_has_a_reason(
    tcp_daemon: tuple[RunningDaemon, int, str],
) -> None:
    d, _, _ = tcp_daemon
    with grpc.insecure_channel(f"unix://{d.socket_path}") as ch:
        stub = health_pb2_grpc.HealthStub(ch)
        assert stub.Check(health_pb2.HealthCheckRequest(), timeout=10).status == 1
        with pytest.raises(grpc.RpcError) as exc:
            stub.Check(health_pb2.HealthCheckRequest(service="nope"), timeout=10)
    assert exc.value.code() == grpc.StatusCode.NOT_FOUND
    assert _reason(exc.value) == "UNKNOWN_SERVICE"


# --- item 8: idle connections and another user ----------------------------------------------

HOLDER = textwrap.dedent(
    """
    import socket, sys, time
    family, target, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    held = []
    for _ in range(n):
        if family == "tcp":
            s = socket.create_connection(("127.0.0.1", int(target)))
        else:
            s = socket.socket(socket.AF_UNIX)
            s.connect(target)
        held.append(s)
    print("held", len(held), flush=True)
    time.sleep(3600)
    """
)


def _hold(args: list[str], family: str, target: str, n: int) -> subprocess.Popen[str]:
    """A process holding `n` idle connections (no handshake, no call); returns once it holds
    them all."""
    proc = subprocess.Popen(
        [*args, sys.executable, "-c", HOLDER, family, target, str(n)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("held"), proc.stderr.read() if proc.stderr else line
    return proc


def _limited_daemon(base: Path, args: list[str]) -> subprocess.Popen[bytes]:
    """The daemon under RLIMIT_NOFILE 1024:1024 (the hard limit too: raising the soft one to it
    at start is not enough on its own)."""
    with open(base / "daemon.stderr", "wb") as log:
        return subprocess.Popen(
            ["prlimit", "--nofile=1024:1024", *serve_command(base / "d.sock", args)],
            env=daemon_env(base),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )


def _owner_pings(socket_path: Path, timeout: float) -> int:
    c = Client(f"unix://{socket_path}", auto_start=False, timeout=timeout)
    try:
        c.wait_for_health(timeout)
        return c.server_info().pid
    finally:
        c.close()


@needs_root
def test_another_user_holding_tcp_connections_cannot_lock_the_owner_out() -> None:
    """1,100 idle TCP connections from another uid against a daemon whose descriptors are
    1024:1024: the TCP front's bound on unauthenticated connections keeps them off the
    descriptors the Unix socket needs, so a fresh owner connection is answered within 10 s; the
    daemon logs the bound."""
    base = short_dir("pcn")
    proc = _limited_daemon(base, ["--tcp-port", "0"])
    holder = None
    try:
        _owner_pings(base / "d.sock", 30)
        port = json.loads((base / "server.json").read_text())["tcp_port"]
        holder = _hold(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"],
            "tcp",
            str(port),
            1100,
        )
        assert _owner_pings(base / "d.sock", 10) == proc.pid
        deadline = time.monotonic() + 30
        log = base / "daemon.stderr"
        while "unauthenticated TCP connections are at their bound" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.1)
    finally:
        if holder is not None:
            holder.kill()
            holder.communicate()
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        shutil.rmtree(base, ignore_errors=True)


@needs_root
def test_idle_unix_connections_are_closed() -> None:
    """1,100 same-user Unix connections that never handshake, against 1024 descriptors: they
    are closed after the handshake timeout, and the owner's next connection is answered (before
    this, they were held until the client went away, and the owner's calls timed out)."""
    base = short_dir("pcn")
    proc = _limited_daemon(base, [])
    holder = None
    try:
        _owner_pings(base / "d.sock", 30)
        holder = _hold([], "unix", str(base / "d.sock"), 1100)
        assert _owner_pings(base / "d.sock", 30) == proc.pid
    finally:
        if holder is not None:
            holder.kill()
            holder.communicate()
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        shutil.rmtree(base, ignore_errors=True)


# --- item 3: a stopped client does not pin its answer --------------------------------------

READER = textwrap.dedent(
    """
    import sys, grpc
    from postcompact.v1 import postcompact_pb2 as pb, postcompact_pb2_grpc as g
    address, session, agent, path, token = sys.argv[1:6]
    md = (("authorization", "Bearer " + token),) if token else ()
    ch = grpc.insecure_channel(address, options=[("grpc.max_receive_message_length", 1 << 30)])
    stub = g.PostcompactServiceStub(ch)
    stub.StartAgent(pb.StartAgentRequest(session_id=session, agent_id=agent), timeout=60,
                    metadata=md)
    print("calling", flush=True)
    try:
        r = stub.ReadFile(pb.ReadFileRequest(session_id=session, agent_id=agent, path=path,
                                             offset=2, limit=10**7), timeout=600, metadata=md)
        print("answered", len(r.content), flush=True)
    except grpc.RpcError as e:
        reason = dict(e.trailing_metadata() or ()).get("postcompact-error-reason", "")
        print("failed", e.code().name, reason, flush=True)
    """
)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _wait(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def _stalled_readers(
    d: RunningDaemon, hold: Hold, address: str, token: str, n: int
) -> tuple[list[subprocess.Popen[str]], Path, int]:
    """`n` client processes, each with a ReadFile of a 7.9 MB range (a 15.6 MiB answer) held in
    its worker, then stopped (SIGSTOP) before the answers exist; the hold released."""
    root = short_dir("pcr")
    big = root / "big.txt"
    big.write_text("".join(f"{i:07d} {'y' * 70}\n" for i in range(100_000)))
    s = d.client.open_session(str(root), session_id=new_session_id("stall"))
    base_rss = _rss_kib(d.proc.pid)
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, address, s.session_id, f"r{i}", str(big), token],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    for r in readers:
        assert r.stdout is not None
        assert r.stdout.readline().strip() == "calling"
    hold.wait_reached(n)
    for r in readers:
        r.send_signal(signal.SIGSTOP)
    hold.release()
    return readers, root, base_rss


def _resume(readers: list[subprocess.Popen[str]]) -> list[str]:
    for r in readers:
        r.send_signal(signal.SIGCONT)
    return sorted(r.communicate(timeout=120)[0].strip() for r in readers)


def test_stopped_readers_pin_at_most_the_answer_budget() -> None:
    """Four stopped clients over the Unix socket, whose kernel buffer keeps a stalled answer
    until the client goes away: with limits.max_answer_bytes_in_flight at 20 MiB one answer is
    held, the other three are refused OVERLOADED (with a RetryInfo) before anything is applied,
    and the daemon's RSS grows by one answer's worth, not four (before: +218 MiB)."""
    d, (hold,) = held_daemon(
        "readfile.worker", config_toml="[limits]\nmax_answer_bytes_in_flight = 20971520\n"
    )
    readers: list[subprocess.Popen[str]] = []
    root = None
    try:
        readers, root, base_rss = _stalled_readers(d, hold, d.address, "", 4)
        _wait(lambda: d.log.read_text().count('"reason": "OVERLOADED"') >= 3, d.stderr()[-2000:])
        held = d.client.stats().answer_bytes_in_flight
        assert 15 << 20 < held < 20 << 20  # one answer
        grown_mib = (_rss_kib(d.proc.pid) - base_rss) / 1024
        assert grown_mib < 64, f"RSS grew {grown_mib:.0f} MiB for one held 15.6 MiB answer"
        outcomes = _resume(readers)
        assert outcomes[0].startswith("answered")  # the one held is delivered once read
        assert outcomes[1:] == ["failed RESOURCE_EXHAUSTED OVERLOADED"] * 3
    finally:
        _clean_up(d, readers, root)


def test_a_stopped_tcp_reader_is_dropped_by_the_ping_timeout() -> None:
    """Over TCP the keepalive ping of a stopped client goes unanswered: the daemon closes the
    connection and frees the answer (RSS back near where it was, the answer budget free again);
    resumed, the clients find their calls failed (before, the daemon kept every answer until
    the client read it or died)."""
    base = short_dir("pch")
    hold = Hold(base, "readfile.worker")
    d = start_daemon(
        ["--tcp-port", "0"], env={"POSTCOMPACT_FAILPOINTS": hold.env}, runtime_dir=base
    )
    info = json.loads(d.server_json.read_text())
    token = Path(info["token_file"]).read_text().strip()
    readers: list[subprocess.Popen[str]] = []
    root = None
    try:
        address = f"127.0.0.1:{info['tcp_port']}"
        readers, root, base_rss = _stalled_readers(d, hold, address, token, 3)
        _wait(lambda: d.client.stats().answer_bytes_in_flight > 45 << 20, "no answers held")
        _wait(
            lambda: d.client.stats().answer_bytes_in_flight == 0,
            "the stalled answers were not released",
        )
        # What stays is the three recorded 7.9 MB entries, not the answers (~31 MiB each).
        grown_mib = (_rss_kib(d.proc.pid) - base_rss) / 1024
        assert grown_mib < 48, f"RSS still {grown_mib:.0f} MiB up after the answers were dropped"
        assert _resume(readers) == ["failed UNAVAILABLE"] * 3  # stripped: no reason
    finally:
        _clean_up(d, readers, root)
