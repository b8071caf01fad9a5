"""The Python driver of B6 (bench/b6_clients.py), with the same flags and output as the others.

    python -m bench._b6_python --daemon ADDR --echo ADDR --mode small|compact --c N \
        --calls N --warmup N [--rounds N] [--project DIR]

It times the daemon through the pure-Python client's `AsyncClient` (grpc.aio) beside a bare echo
on a grpc.aio channel with the client's own channel options, in the same run. It runs in its own
process because it imports `postcompact_client`'s generated code, which registers the same proto
names as the daemon's copy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
from postcompact_client import AsyncClient, AsyncSession, pb
from postcompact_client._channel import CHANNEL_OPTIONS
from postcompact_client.types import AttachmentKind

from bench._measure import echo_request
from bench._servers import ECHO_METHOD
from bench.report import percentile

Call = Callable[[int], Awaitable[object]]


class Series:
    def __init__(self, name: str, call: Call) -> None:
        self.name = name
        self.call = call
        self.lat: list[float] = []
        self.wall = 0.0

    async def run(self, calls: int, conc: int, record: bool) -> None:
        remaining = calls
        lat: list[float] = []

        async def worker(w: int) -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                t0 = time.perf_counter()
                await self.call(w)
                lat.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        await asyncio.gather(*(worker(w) for w in range(conc)))
        if record:
            self.wall += time.perf_counter() - t0
            self.lat += lat

    def result(self, mode: str, conc: int) -> dict[str, object]:
        us = sorted(x * 1e6 for x in self.lat)
        return {
            "client": "python",
            "series": self.name,
            "mode": mode,
            "concurrency": conc,
            "p50_us": percentile(us, 0.5),
            "p99_us": percentile(us, 0.99),
            "p999_us": percentile(us, 0.999),
            "qps": len(us) / self.wall,
            "calls": len(us),
        }


async def _sessions(client: AsyncClient, project: Path, n: int) -> list[AsyncSession]:
    root = project  # absolute: the harness passes its temporary project directory
    out = []
    for _ in range(n):
        s = await client.open_session(
            str(root),
            policy=pb.RestorePolicy(
                max_files=5,
                file_token_budget=50_000,
                max_tokens_per_file=8_000,
                match_budget=pb.HARNESS_RULE_NONE,
            ),
        )
        for f in range(5):
            await s.read_file(str(root / "src" / f"module{f}.ts"))
        res = await s.compact(skip_hooks=True)
        files = sum(1 for a in res.attachments if a.kind == AttachmentKind.FILE)
        if files != 5:
            raise RuntimeError(f"compact restored {files} files, want 5")
        out.append(s)
    return out


async def main_async(a: argparse.Namespace) -> None:
    client = AsyncClient(a.daemon, token=a.token or None, auto_start=False)
    echo_channel = grpc.aio.insecure_channel(a.echo, options=CHANNEL_OPTIONS)
    try:
        if a.mode == "small":
            size = 100
            text = b"x" * 100
            real = Series("EstimateTokens 100 B", lambda _w: client.estimate_tokens(text))
        else:
            size = 100 * 1024
            sessions = await _sessions(client, Path(a.project), a.c)
            real = Series("Compact 5x20KB", lambda w: sessions[w].compact(skip_hooks=True))
        method: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = echo_channel.unary_unary(
            ECHO_METHOD
        )
        req = echo_request(size)

        async def echo(_w: int) -> None:
            out = await method(req, timeout=client.timeout)
            if len(out) != size:
                raise RuntimeError(f"echo returned {len(out)} bytes, want {size}")

        label = f"echo {size // 1024} KB" if size >= 1024 else f"echo {size} B"
        series = [Series(label, echo), real]
        for s in series:
            await s.run(a.warmup, a.c, record=False)
        rounds = max(1, a.rounds)
        base = a.calls // rounds
        for r in range(rounds):
            n = a.calls - base * (rounds - 1) if r == rounds - 1 else base
            for s in series:
                await s.run(n, a.c, record=True)
        for s in series:
            print(json.dumps(s.result(a.mode, a.c)), flush=True)
    finally:
        await echo_channel.close()
        await client.close()


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench._b6_python")
    p.add_argument("--daemon", required=True)
    p.add_argument("--echo", required=True)
    p.add_argument("--mode", choices=("small", "compact"), default="small")
    p.add_argument("--c", type=int, default=1)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--project", default="")
    p.add_argument("--token", default="")
    try:
        asyncio.run(main_async(p.parse_args()))
    except grpc.RpcError as e:  # one line: the harness reports the last line of stderr
        code = e.code() if isinstance(e, grpc.aio.AioRpcError) else "?"
        details = e.details() if isinstance(e, grpc.aio.AioRpcError) else str(e)
        sys.exit(f"b6_python: {code}: {details}")
    except Exception as e:
        sys.exit(f"b6_python: {type(e).__name__}: {e}")


if __name__ == "__main__":
    main()
