"""ReadFile's own work outside gRPC, with the processor's caches warm and after they were
overwritten between calls (B4, informational).

`FileService.read_file` of B4's 20 KB file runs in this process, on the SQLite store, without
gRPC: back to back (caches warm: the handler's code and data stay in them from one call to the
next), and with a buffer of 1 MB and of 8 MB filled between calls, as grpc.aio's threads, the
kernel and the other calls overwrite the caches between two calls of one agent in the daemon
(the bare echo's handler touches next to nothing). The thread's CPU time around each call
counts; the fill does not. The modes take turns in blocks, so that the machine's drift is shared.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import time
from collections.abc import Sequence
from pathlib import Path

from postcompact.config import Config
from postcompact.persist.sqlstore import SqliteStore
from postcompact.service.files import FileService
from postcompact.service.sessions import SessionService
from postcompact.state.registry import Registry
from postcompact.v1 import postcompact_pb2 as pb

# Bytes filled between two calls, by mode (0: none, caches warm); the first mode is the one the
# others are compared with, the last the coldest.
FILLS = {
    "warm caches (calls back to back)": 0,
    "1 MB filled between calls": 1 << 20,
    "8 MB filled between calls": 8 << 20,
}


def measure(tmp: Path, file_text: str, calls: int, block: int) -> dict[str, float]:
    """CPU µs per `read_file` call of a `file_text` file under each of `FILLS`, `calls` calls
    each in blocks of `block` (after a warm-up block of each)."""
    root = tmp / "cold-proj"
    root.mkdir()
    path = root / "module.ts"
    path.write_text(file_text)
    store = SqliteStore(tmp / "cold-state.db", max_bytes=1 << 30)
    try:
        return asyncio.run(_run(store, root, path, calls, block))
    finally:
        store.close()


async def _run(
    store: SqliteStore, root: Path, path: Path, calls: int, block: int
) -> dict[str, float]:
    registry = Registry(Config(), store=store)
    await SessionService(registry, registry.config).open(
        pb.OpenSessionRequest(session_id="b4-cold", cwd=str(root))
    )
    files = FileService(registry, registry.config)
    req = pb.ReadFileRequest(session_id="b4-cold", path=str(path))
    buffers = {mode: ctypes.create_string_buffer(size) for mode, size in FILLS.items() if size}
    stamp = time.time_ns()
    spent = dict.fromkeys(FILLS, 0)

    async def one_block(mode: str) -> int:
        nonlocal stamp
        buf, total = buffers.get(mode), 0
        for i in range(block):
            stamp += 1_000_000  # a new mtime: a re-read of the whole file, never the stub
            os.utime(path, ns=(stamp, stamp))
            if buf is not None:
                ctypes.memset(buf, i & 0xFF, len(buf))
            t = time.thread_time_ns()
            answer = await files.read_file(req)
            total += time.thread_time_ns() - t
            if not isinstance(answer, bytes):  # the core's answer, as in B4's daemon
                raise RuntimeError("B4's in-process ReadFile took the general path")
        return total

    for mode in FILLS:
        await one_block(mode)
    order = list(FILLS)
    for n in range(max(1, calls // block)):
        for mode in order if n % 2 == 0 else order[::-1]:
            spent[mode] += await one_block(mode)
    done = max(1, calls // block) * block
    return {mode: ns / done / 1000 for mode, ns in spent.items()}


def rows(cpu: dict[str, float]) -> list[Sequence[object]]:
    warm = next(iter(cpu.values()))
    return [[mode, us, us / warm] for mode, us in cpu.items()]
