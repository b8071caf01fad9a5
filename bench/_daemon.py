"""Start the real daemon for a benchmark: isolated XDG dirs, pinned to the server CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench._measure import SERVER_CPU


@dataclass
class Daemon:
    address: str
    tcp_address: str | None
    metadata: tuple[tuple[str, str], ...]  # the TCP token
    home: Path
    pid: int  # the daemon's process (taskset execs it), for its CPU time in /proc


@contextmanager
def running_daemon(
    tmp: Path,
    *,
    tcp: bool = False,
    module: str = "postcompact",
    env_extra: dict[str, str] | None = None,
    cpus: str = str(SERVER_CPU),
    extra_args: Sequence[str] = (),
) -> Iterator[Daemon]:
    """The daemon (`python -m <module> serve [extra_args]`, by default the real one) in `tmp`, on
    the CPUs `cpus` (taskset's list: by default the server CPU alone)."""
    sock = tmp / "d.sock"
    env = {
        **os.environ,
        **(env_extra or {}),
        "XDG_RUNTIME_DIR": str(tmp / "run"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_STATE_HOME": str(tmp / "state"),
        "POSTCOMPACT_LOG_LEVEL": "warning",
    }
    (tmp / "run").mkdir(mode=0o700, exist_ok=True)
    argv = [
        "taskset",
        "-c",
        cpus,
        sys.executable,
        "-m",
        module,
        "serve",
        "--socket",
        str(sock),
    ]
    if tcp:
        argv += ["--tcp-port", "0"]
    argv += extra_args
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        address = f"unix://{sock}"
        _wait_healthy(address, proc)
        tcp_address: str | None = None
        metadata: tuple[tuple[str, str], ...] = ()
        if tcp:
            # With --socket the runtime directory is the socket's (lifecycle.RuntimePaths).
            info = json.loads((sock.parent / "server.json").read_text())
            tcp_address = f"127.0.0.1:{info['tcp_port']}"
            token = Path(info["token_file"]).read_text().strip()
            metadata = (("authorization", f"Bearer {token}"),)
        yield Daemon(address, tcp_address, metadata, tmp, proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def _wait_healthy(address: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    with grpc.insecure_channel(address) as ch:
        stub = health_pb2_grpc.HealthStub(ch)
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                err = proc.stderr.read() if proc.stderr else ""
                raise RuntimeError(f"daemon exited with {proc.returncode}: {err[-2000:]}")
            try:
                r = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if r.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.05)
    raise RuntimeError("daemon did not become healthy within 30 s")
