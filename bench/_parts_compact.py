"""`python -m bench._parts_compact serve ...`: the real daemon, with the CPU time of each part of
Compact measured on the thread that runs it (the event loop's).

B5 runs it beside the real daemon (whose figures it does not touch: the wrappers cost their own
time here) to say where a Compact's own work goes, next to the I/O floor's re-reads and commit.
With `BENCH_PARTS_TIMES=FILE` it writes to FILE, every 100 calls, the median CPU time in µs of:
the whole handler; the files step (selection, the core's re-reads and rendering, the budget and
the decisions); the core call alone within it; the write-through (one transaction: the agent's
row, the file rows); the result applied to the agent.
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from postcompact import cli, core, server
from postcompact.persist.sqlstore import SqlStore
from postcompact.restore import pipeline

_TIMES = os.environ.get("BENCH_PARTS_TIMES")
_spent: dict[str, list[int]] = {}


def _record(part: str, ns: int) -> None:
    _spent.setdefault(part, []).append(ns)


def _timed(part: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.thread_time_ns()
        try:
            return fn(*args, **kwargs)
        finally:
            _record(part, time.thread_time_ns() - t0)

    return timed


def _timed_async(part: str, fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """The CPU time of the coroutine's own steps (an await of other work is not counted: the
    thread's clock is read around each step, as the event loop runs it)."""

    @functools.wraps(fn)
    async def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.thread_time_ns()
        try:
            return await fn(*args, **kwargs)
        finally:
            _record(part, time.thread_time_ns() - t0)

    return timed


def _dump_every(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(fn)
    async def dumping(*args: Any, **kwargs: Any) -> Any:
        out = await fn(*args, **kwargs)
        _dump()
        return out

    return dumping


def _dump() -> None:
    calls = len(_spent.get("handler", ()))
    if _TIMES and calls % 100 == 0:
        medians = {k: statistics.median(v[-1000:]) / 1000 for k, v in _spent.items()}
        with open(_TIMES, "w") as f:
            json.dump({**medians, "calls": calls}, f)


def install() -> None:
    """Each part wrapped where the daemon looks it up when it runs."""
    for owner, name, wrap in (
        (server.Servicer, "_compact", lambda fn: _dump_every(_timed_async("handler", fn))),
        (pipeline, "restore_files", lambda fn: _timed_async("files", fn)),
        (core, "restore_files", lambda fn: _timed("core", fn)),
        (SqlStore, "write", lambda fn: _timed("write", fn)),
        (pipeline.CompactResult, "apply", lambda fn: _timed("apply", fn)),
    ):
        setattr(owner, name, wrap(getattr(owner, name)))


if __name__ == "__main__":
    install()
    sys.exit(cli.main(sys.argv[1:]))
