"""`python -m bench._io_floor_compact serve ...`: the canned Compact of `bench._canned_compact`
plus the I/O no implementation of Compact can skip, and nothing else.

The behaviour asks two things of every Compact besides its response: the restored files are
re-read from disk (they may have changed since they were read), and the change of state (the
cache cleared and re-seeded, the compaction count) is written through before the reply, so a
`kill -9` after the reply loses nothing (docs/persistence.md). Here each call reads the five
files with the same GIL-free core call the pipeline uses (`_core.read_whole`, from the page
cache) and commits one transaction rewriting the agent's row (a unit of work naming it); the
answer is the canned one. B5 runs it to measure the floor those two leave: what a Compact would
cost with the whole pipeline (selection, rendering, budgets, decisions) taking no time at all;
and, with `BENCH_FLOOR=reads` or `BENCH_FLOOR=commit`, each of the two alone. With
`BENCH_FLOOR_TIMES=FILE` it writes to FILE, every 100 calls, the median CPU time (of the event
loop's thread) that the re-reads and the commit took inside the handler, in µs, as JSON.

The commit stays the reference it was when this floor was set: the agent's row and the session's
activity time, every call (`reference_commit`). With `BENCH_FLOOR_COMMIT=store` it is the commit
as the store writes it now (the activity time only once it is a second old:
`persist.sqlstore.ACTIVITY_STEP_MS`), the floor's own gain, reported as a row of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Iterator

from postcompact import _core, cli, diskaccess, server
from postcompact.persist import sqlstore
from postcompact.v1 import postcompact_pb2 as pb

from bench import _canned_compact

_FLOOR = os.environ.get("BENCH_FLOOR", "both")
_READS, _COMMIT = _FLOOR in ("both", "reads"), _FLOOR in ("both", "commit")
_TIMES = os.environ.get("BENCH_FLOOR_TIMES")
_spent: dict[str, list[int]] = {"reads": [], "commit": []}


@contextlib.contextmanager
def reference_commit() -> Iterator[None]:
    """Every write stores the session's activity time, as every write did when the floor was
    set: its commit is the agent's row and the session's, each call."""
    step = sqlstore.ACTIVITY_STEP_MS
    sqlstore.ACTIVITY_STEP_MS = 0
    try:
        yield
    finally:
        sqlstore.ACTIVITY_STEP_MS = step


def _record(reads_ns: int, commit_ns: int) -> None:
    _spent["reads"].append(reads_ns)
    _spent["commit"].append(commit_ns)
    if _TIMES and len(_spent["reads"]) % 100 == 0:
        medians = {k: statistics.median(v) / 1000 for k, v in _spent.items()}
        with open(_TIMES, "w") as f:
            json.dump({**medians, "calls": len(_spent["reads"])}, f)


async def _canned_with_io(
    self: server.Servicer, req: pb.CompactRequest, preview: bool
) -> pb.CompactResponse:
    resp = await _canned_compact.canned(self, req, preview)
    s, a = await self.registry.agent(req.session_id, req.agent_id)
    t0 = time.thread_time_ns()
    for att in resp.attachments if _READS else ():
        if att.HasField("file"):
            _core.read_whole(att.file.path, 1 << 20, diskaccess.SNIFF_BYTES)
    t1 = time.thread_time_ns()
    if _COMMIT:
        async with self.registry.mutate(s, a, room=None) as change:
            change.agent = True
    _record(t1 - t0, time.thread_time_ns() - t1)
    return resp


if __name__ == "__main__":
    server.Servicer._compact = _canned_with_io  # type: ignore[method-assign, assignment]
    with contextlib.ExitStack() as stack:
        if os.environ.get("BENCH_FLOOR_COMMIT") != "store":
            stack.enter_context(reference_commit())
        code = cli.main(sys.argv[1:])
    sys.exit(code)
