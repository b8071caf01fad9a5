"""Latency/throughput loops shared by the transport benchmarks (B4, B5)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc

from bench.report import percentile

CLIENT_CPU = 1
SERVER_CPU = 0
GRPC_OPTIONS = [
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
]


@dataclass
class Stats:
    p50_us: float
    p99_us: float
    p999_us: float
    qps: float
    calls: int


def stats(latencies_s: list[float], wall_s: float) -> Stats:
    lat = sorted(x * 1e6 for x in latencies_s)
    return Stats(
        percentile(lat, 0.50),
        percentile(lat, 0.99),
        percentile(lat, 0.999),
        len(lat) / wall_s,
        len(lat),
    )


def median_run(runs: Sequence[Stats]) -> Stats:
    """The run with the median p50 (its p99 and QPS with it)."""
    return sorted(runs, key=lambda st: st.p50_us)[len(runs) // 2]


def pin_client() -> None:
    if len(os.sched_getaffinity(0)) > 1:
        os.sched_setaffinity(0, {CLIENT_CPU})


@contextmanager
def short_tmpdir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="pcb-", dir="/tmp"))
    try:
        yield d
    finally:
        subprocess.run(["rm", "-rf", str(d)], check=False)


@contextmanager
def spawn(
    argv: list[str], env: dict[str, str] | None = None, ready: str = "READY"
) -> Iterator[subprocess.Popen[str]]:
    """Start a server process pinned to SERVER_CPU and wait for its ready line on stdout."""
    full_env = {**os.environ, "BENCH_CPU": str(SERVER_CPU), **(env or {})}
    proc = subprocess.Popen(
        ["taskset", "-c", str(SERVER_CPU), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=full_env,
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server exited before ready: {argv}")
            if ready in line:
                break
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def baseline_server(kind: str, address: str) -> list[str]:
    return [sys.executable, "-m", "bench._servers", kind, address]


def raw_serial(address: str, size: int, calls: int, warmup: int) -> Stats:
    if address.startswith("unix://"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(address.removeprefix("unix://"))
    else:
        host, port = address.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    req = echo_request(size)
    frame = struct.pack("!I", len(req)) + req
    lat: list[float] = []
    with s:
        t_all = 0.0
        for i in range(warmup + calls):
            t0 = time.perf_counter()
            s.sendall(frame)
            (n,) = struct.unpack("!I", _recv_exact(s, 4))
            _recv_exact(s, n)
            dt = time.perf_counter() - t0
            if i >= warmup:
                lat.append(dt)
                t_all += dt
    return stats(lat, t_all)


def _recv_exact(s: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("server closed")
        buf += chunk
    return bytes(buf)


def echo_request(size: int) -> bytes:
    """A ~100 B request asking for `size` bytes back."""
    return (b"%08d" % size).ljust(100, b"-")


_TICK = os.sysconf("SC_CLK_TCK")


def proc_stat(path: str) -> list[str]:
    """The fields of a /proc stat file after the command name (field 3, state, is index 0)."""
    with open(path) as f:
        return f.read().rsplit(")", 1)[1].split()


def stat_cpu_s(fields: Sequence[str]) -> float:
    """utime + stime of a /proc stat file's fields (`proc_stat`), in seconds."""
    return (int(fields[11]) + int(fields[12])) / _TICK


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used so far, all its threads included
    (/proc/PID/stat; a clock tick's resolution: measure windows of a second or more)."""
    return stat_cpu_s(proc_stat(f"/proc/{pid}/stat"))


def run_time_s(pid: int) -> float:
    """CPU seconds (user + system) the live threads of process `pid` have used so far, to the
    nanosecond: the sum of /proc/PID/task/*/schedstat, where the kernel has it; else
    `process_cpu_s` (a clock tick's resolution). A thread that ends takes its time with it:
    measure servers whose threads live as long as they do (grpc's and asyncio's do)."""
    if not os.path.exists(f"/proc/{pid}/schedstat"):  # a kernel without scheduler stats
        return process_cpu_s(pid)
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        # (a thread that just ended has no file any more)
        with (
            contextlib.suppress(FileNotFoundError),
            open(f"/proc/{pid}/task/{tid}/schedstat") as f,
        ):
            total += int(f.read().split()[0])
    return total / 1e9


def cpu_interleaved(
    sides: Mapping[str, tuple[int, Callable[[], object]]],
    calls: int,
    warmup: int,
    block: int = 300,
) -> dict[str, list[float]]:
    """Microseconds of server CPU per serial call for each side (name -> (server pid, call)),
    `calls` each, measured in blocks of `block` calls that go round the sides (forwards, then
    backwards, ...): the machine's swings, which move one server's CPU per call by 10-20% over
    seconds here, fall on every side alike. Each side's figure per cycle; a ratio of two sides
    is best taken over their sums (`per_call`)."""
    for _pid, call in sides.values():
        for _ in range(warmup):
            call()
    out: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for i in range(max(1, calls // block)):
        for name in names if i % 2 == 0 else names[::-1]:
            pid, call = sides[name]
            before = run_time_s(pid)
            for _ in range(block):
                call()
            out[name].append((run_time_s(pid) - before) / block * 1e6)
    return out


def per_call(cycles: Sequence[float]) -> float:
    """A side's CPU per call over all its cycles (`cpu_interleaved`; every cycle the same size)."""
    return sum(cycles) / len(cycles)


def sync_serial(call: Callable[[], object], calls: int, warmup: int) -> Stats:
    for _ in range(warmup):
        call()
    lat = []
    t_start = time.perf_counter()
    for _ in range(calls):
        t0 = time.perf_counter()
        call()
        lat.append(time.perf_counter() - t0)
    return stats(lat, time.perf_counter() - t_start)


def paired_serial(
    a: Callable[[], object], b: Callable[[], object], calls: int, warmup: int, block: int = 100
) -> tuple[Stats, Stats]:
    """Serial calls of `a` and of `b`, `calls` each, in alternating blocks of `block` (A B, then
    B A, ...), so that drift of the machine falls on both alike: for a ratio of the two, which
    separate runs seconds apart let the machine's own swings decide. Each one's latencies over
    all its blocks."""
    for _ in range(warmup):
        a()
        b()
    lat: tuple[list[float], list[float]] = ([], [])
    wall = [0.0, 0.0]
    sides = ((0, a), (1, b))
    for i in range(max(1, calls // block)):
        for side, call in sides if i % 2 == 0 else sides[::-1]:
            out = lat[side]
            t_start = time.perf_counter()
            for _ in range(block):
                t0 = time.perf_counter()
                call()
                out.append(time.perf_counter() - t0)
            wall[side] += time.perf_counter() - t_start
    return stats(lat[0], wall[0]), stats(lat[1], wall[1])


def aio_concurrent(
    make_call: Callable[[grpc.aio.Channel], Callable[[], Awaitable[object]]],
    address: str,
    calls: int,
    warmup: int,
    concurrency: int,
    metadata: tuple[tuple[str, str], ...] = (),
) -> Stats:
    async def main() -> Stats:
        async with grpc.aio.insecure_channel(address, options=GRPC_OPTIONS) as ch:
            call = make_call(ch)
            for _ in range(warmup):
                await call()
            lat: list[float] = []
            remaining = calls

            async def worker() -> None:
                nonlocal remaining
                while remaining > 0:
                    remaining -= 1
                    t0 = time.perf_counter()
                    await call()
                    lat.append(time.perf_counter() - t0)

            t_start = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return stats(lat, time.perf_counter() - t_start)

    return asyncio.run(main())
