"""B5: restoring five 20 KB files — one Compact RPC against five single RPCs and in-process.

A session reads five 20 KB source files; each iteration compacts it (FULL), which re-reads the
five files from disk, caps, budgets, renders them and re-seeds the cache, so every iteration does
the same work. Competitors in the same run:

- `Compact` over the Unix socket (one RPC moving ~100 KB of rendered text back);
- five `ReadFile` RPCs of the same files (alternating the range so none is answered with the
  "unchanged" stub) — what a client doing it file by file would pay;
- the pipeline called in-process (`run_compact` on the daemon's own registry, no gRPC), alone
  and followed by the write-through to the state database that the daemon does before replying
  (`SqliteStore`, as `serve` runs it);
- Compact against a daemon that answers every Compact with the response of its first one
  (`bench/_canned_compact.py`): the service path for this response — the servicer's wrappers,
  serialising ~110 KB of attachments and decisions, decoding them in the client — without the
  work (the canned answer stays a message serialised per call, as every answer was when this
  floor was set; the real Compact now sends the bytes the core wrote);
- the same canned daemon doing, per call, only the I/O that no Compact may skip
  (`bench/_io_floor_compact.py`): re-reading the five files from disk (the same core call, from
  the page cache) and committing the write-through transaction before the reply (the durability
  of docs/persistence.md) — the floor of a pipeline that took no time at all. Its commit stays
  the reference it was when the floor was set (the agent's row and the session's activity
  time, each call); a row of its own has the floor with the commit as the store writes it now
  (the activity time once a second), the floor's own gain;
- a bare grpcio echo of a 100 KB response and the raw-socket 100 KB ping-pong (the floor).

All servers are up at once and the competitors take turns, in five rounds, each round in its own
(seeded) order; each one's median run counts, so that drift of the machine, and what one
competitor leaves behind for the next (the commits' dirty pages), is spread over all of them.

Targets: Compact p50 at most 1.25x the I/O floor row's (the pipeline's own work — selection,
rendering, budgets, decisions, the response — costing at most a quarter of the I/O no Compact
can skip), and at least 3x faster than five RPCs. The first is judged on a paired measurement
after the rounds: the real daemon and the floor's, in alternating blocks of 100 calls (ABBA), as
many calls each as the rounds made. On this VM the machine's speed swings by ±15% within
minutes, and the table's rows, runs seconds apart, gave this ratio anywhere from 1.13x to 1.36x
on the same code; paired, 1.15-1.22x. The table's ratio stays as an informational line.
(Issue #3's "at most 1.3x a 100 KB echo" was set before the floor was known and is withdrawn:
the floor alone is above it. Its ratio stays as an informational line.)

Where a Compact's own work goes: a third table has the CPU time of each part of a Compact on the
event loop's thread, from a daemon instrumented for it (`bench/_parts_compact.py`), beside the
floor's re-reads and commit.

Where the floor's time goes: a second table takes the re-reads and the commit apart, as CPU time
of the thread doing them — back to back in this process (hot caches), inside the floor daemon's
handler (measured there, `BENCH_FLOOR_TIMES`), and SQLite's own one-row transaction in bare
`sqlite3`; beside them, a Compact's own write-through, which stores six rows where the floor's
commit stores one (the five re-seeded file rows: their read time and recency change at every
Compact), and the same six rows in bare `sqlite3`. The kernel's page-cache reads and SQLite's
commit are a small part of it: the same Python and core calls cost several times more inside the
daemon, where each call finds the caches cold after gRPC's work for the previous ~110 KB answer
(and gRPC's poller and event-engine threads share the pinned CPU). The pipeline pays the same
factor on all its work.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc
from postcompact import _core, diskaccess
from postcompact._core import FileState
from postcompact.config import Config
from postcompact.persist import SqliteStore
from postcompact.restore.context import CompactContext
from postcompact.restore.pipeline import run_compact
from postcompact.service.sessions import SessionService
from postcompact.state.model import CarriedRead, content_digest
from postcompact.state.registry import Registry
from postcompact.state.worker import finish_inline
from postcompact.v1 import postcompact_pb2 as pb
from postcompact.v1 import postcompact_pb2_grpc as pbg

from bench import _measure as m
from bench._daemon import running_daemon
from bench._servers import ECHO_METHOD
from bench.report import Section, Table, bar_chart, verdict

FILES = 5
FILE_BYTES = 20 * 1024


def make_project(root: Path) -> list[Path]:
    """Five ~20 KB TypeScript-like files (about 5,000 rough tokens is the per-file cap: stay
    under it so each is restored whole)."""
    paths = []
    for i in range(FILES):
        lines = []
        n = 0
        while n < FILE_BYTES - 64:
            line = f"export function handler{i}_{n}(input: string): number {{ return {n}; }}"
            lines.append(line)
            n += len(line) + 1
        p = root / "src" / f"module{i}.ts"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(lines)[: FILE_BYTES - 1])
        paths.append(p)
    return paths


def _policy() -> pb.RestorePolicy:
    # 20 KB of code is ~5,100 rough tokens with numbering: five files restored whole, whatever
    # the default profile's rule (docs/eval.md: its cap and its budget matched to Claude Code's,
    # which notes 20 KB files, would leave them out: a different measurement).
    return pb.RestorePolicy(
        max_files=5,
        file_token_budget=50_000,
        max_tokens_per_file=8_000,
        match_budget=pb.HARNESS_RULE_NONE,
    )


def _session(
    stub: pbg.PostcompactServiceStub, root: Path, paths: Sequence[Path]
) -> pb.CompactRequest:
    """Open B5's session and read its files: the Compact request to repeat."""
    sid = stub.OpenSession(
        pb.OpenSessionRequest(session_id="b5", cwd=str(root), policy=_policy())
    ).session_id
    for p in paths:
        stub.ReadFile(pb.ReadFileRequest(session_id=sid, path=str(p)))
    preview = stub.PreviewCompact(pb.PreviewCompactRequest(session_id=sid, skip_hooks=True))
    whole = [a for a in preview.attachments if a.kind == pb.ATTACHMENT_KIND_FILE]
    assert len(whole) == len(paths), "B5 measures a Compact restoring every file whole"
    return pb.CompactRequest(session_id=sid, skip_hooks=True)


def _five_reads(
    stub: pbg.PostcompactServiceStub, sid: str, paths: Sequence[Path]
) -> Callable[[], object]:
    """Five ReadFile RPCs, alternating the range so that none is answered with the stub."""
    flip = [0]

    def five() -> None:
        flip[0] ^= 1
        for p in paths:
            stub.ReadFile(pb.ReadFileRequest(session_id=sid, path=str(p), limit=100_000 + flip[0]))

    return five


def _serial_compact(
    stub: pbg.PostcompactServiceStub, req: pb.CompactRequest, calls: int, warmup: int
) -> Callable[[], m.Stats]:
    return lambda: m.sync_serial(lambda: stub.Compact(req), calls, warmup)


def _echo_call(ch: grpc.Channel, size: int) -> Callable[[], object]:
    method: grpc.UnaryUnaryMultiCallable[bytes, bytes] = ch.unary_unary(ECHO_METHOD)
    req = m.echo_request(size)
    return lambda: method(req)


def _in_process(
    root: Path, paths: Sequence[Path], calls: int, warmup: int, *, persist: bool = False
) -> m.Stats:
    """`run_compact` in this process; with `persist`, then the daemon's write-through (the
    agent's file rows and the agent row, in one transaction) into a real state database."""

    async def main(store: SqliteStore | None) -> m.Stats:
        reg = Registry(Config()) if store is None else Registry(Config(), store=store)
        open_req = pb.OpenSessionRequest(session_id="b5", cwd=str(root), policy=_policy())
        s, _ = await SessionService(reg, reg.config).open(open_req)
        agent = s.agents[""]
        now = time.time_ns() // 1_000_000
        for i, p in enumerate(paths):
            agent.files.set(str(p), _state(p.read_bytes(), now + i))
        req = pb.CompactRequest(session_id="b5", skip_hooks=True)

        async def once() -> None:
            # As Compact does: the result applied and (with a store) written in one unit.
            async with reg.mutate(s, agent, room=None) as change:
                result = await run_compact(CompactContext.of(s, req), s, agent, req)
                result.apply(agent, change)

        for _ in range(warmup):
            await once()
        lat = []
        t_start = time.perf_counter()
        for _ in range(calls):
            t0 = time.perf_counter()
            await once()
            lat.append(time.perf_counter() - t0)
        return m.stats(lat, time.perf_counter() - t_start)

    if not persist:
        return asyncio.run(main(None))
    with m.short_tmpdir() as tmp:
        store = SqliteStore(tmp / "state.db", max_bytes=1 << 30)
        try:
            return asyncio.run(main(store))
        finally:
            store.close()


def _median_cpu_us(once: Callable[[], object], calls: int, warmup: int) -> float:
    """The median CPU time (this thread's) of `once()`, back to back, in µs."""
    for _ in range(warmup):
        once()
    spent = []
    for _ in range(calls):
        t0 = time.thread_time_ns()
        once()
        spent.append(time.thread_time_ns() - t0)
    return statistics.median(spent) / 1000


def _hot_floor(
    tmp: Path, root: Path, paths: Sequence[Path], calls: int, warmup: int
) -> dict[str, float]:
    """The floor's two parts back to back in this process: the five re-reads (the same core
    call), the daemon's write-through commit of the agent's row (a real SqliteStore), and a
    bare one-row sqlite3 transaction (WAL, synchronous=NORMAL, as the store opens it)."""

    def reads() -> None:
        for p in paths:
            _core.read_whole(str(p), 1 << 20, diskaccess.SNIFF_BYTES)

    store = SqliteStore(tmp / "hot-floor.db", max_bytes=1 << 30)
    try:
        reg = Registry(Config(), store=store)
        open_req = pb.OpenSessionRequest(session_id="b5", cwd=str(root), policy=_policy())
        s, _ = finish_inline(SessionService(reg, reg.config).open(open_req))
        agent = s.agents[""]
        for i, p in enumerate(paths):
            agent.files.set(str(p), _state(p.read_bytes(), 1_000 + i))

        async def commit_unit() -> None:
            async with reg.mutate(s, agent, room=None) as change:
                change.agent = True

        def commit() -> None:
            finish_inline(commit_unit())

        # A Compact's write-through: the five entries re-seeded with a new read time (the same
        # contents: each row moves, as `_MOVE_FILE`), the agent's row with its carried reads.
        contents = {str(p): p.read_bytes() for p in paths}
        agent.carried_reads = {
            path: CarriedRead(len(c), sha256=content_digest(c)) for path, c in contents.items()
        }
        tick = [2_000]

        async def compact_unit() -> None:
            tick[0] += 10
            async with reg.mutate(s, agent, room=None) as change:
                for i, (path, content) in enumerate(reversed(contents.items())):
                    agent.files.set(path, _state(content, tick[0] + i))
                change.agent = change.files = True

        def compact_write() -> None:
            finish_inline(compact_unit())

        out = {"reads": _median_cpu_us(reads, calls, warmup)}
        out["commit"] = _median_cpu_us(commit, calls, warmup)
        out["compact_write"] = _median_cpu_us(compact_write, calls, warmup)
    finally:
        store.close()
    conn = sqlite3.connect(str(tmp / "bare.db"), isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)")
        row = ("agent", "x" * 300)

        def bare() -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT OR REPLACE INTO t VALUES (?, ?)", row)
            conn.execute("COMMIT")

        out["sqlite"] = _median_cpu_us(bare, calls, warmup)
        # A Compact's six rows: the agent's, and five rows of 10 columns updated in place.
        conn.execute(f"CREATE TABLE f (k TEXT PRIMARY KEY, {', '.join(_F_COLS)})")
        keys = [str(p) for p in paths]
        conn.executemany("INSERT INTO f (k) VALUES (?)", [(k,) for k in keys])
        move = f"UPDATE f SET {', '.join(f'{c} = ?' for c in _F_COLS)} WHERE k = ?"
        tick = [0]

        def bare_six() -> None:
            tick[0] += 1
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT OR REPLACE INTO t VALUES (?, ?)", row)
            conn.executemany(move, [(*[tick[0]] * len(_F_COLS), k) for k in keys])
            conn.execute("COMMIT")

        out["sqlite6"] = _median_cpu_us(bare_six, calls, warmup)
    finally:
        conn.close()
    return out


# What a moved file row has set (`_MOVE_FILE`'s 7 columns).
_F_COLS = ("seq", "ts", "mark_ts", "mark_mtime", "seen_first", "seen_last", "seen_edited")


def _state(content: bytes, ts: int) -> FileState:
    return FileState(content, ts, 1, None, False)


def run(quick: bool = False) -> Section:
    m.pin_client()
    calls, warmup = (200, 20) if quick else (2000, 100)
    rounds = 1 if quick else 5
    with m.short_tmpdir() as tmp, contextlib.ExitStack() as stack:
        root = tmp / "proj"
        paths = make_project(root)

        def channel(address: str) -> grpc.Channel:
            return stack.enter_context(grpc.insecure_channel(address, options=m.GRPC_OPTIONS))

        floor_times = tmp / "floor-times.json"
        parts_times = tmp / "parts-times.json"

        def daemon(
            name: str, module: str = "postcompact", floor: str = "both", commit: str = ""
        ) -> pbg.PostcompactServiceStub:
            (tmp / name).mkdir(mode=0o700)
            env = {
                "BENCH_FLOOR": floor,
                "BENCH_FLOOR_COMMIT": commit,
                "BENCH_PARTS_TIMES": str(parts_times),
            }
            if name == "floor-both":
                env["BENCH_FLOOR_TIMES"] = str(floor_times)
            d = stack.enter_context(running_daemon(tmp / name, module=module, env_extra=env))
            return pbg.PostcompactServiceStub(channel(d.address))

        real, canned = daemon("daemon"), daemon("canned", "bench._canned_compact")
        timed = daemon("parts", "bench._parts_compact")
        floors = {
            part: daemon(f"floor-{part}", "bench._io_floor_compact", part)
            for part in ("both", "reads", "commit")
        }
        # The floor with the commit as the store writes it now: its own gain, beside the reference.
        floors["now"] = daemon("floor-now", "bench._io_floor_compact", "both", "store")
        req = _session(real, root, paths)
        first = real.Compact(req)
        restored = sum(1 for a in first.attachments if a.kind == pb.ATTACHMENT_KIND_FILE)
        size = first.ByteSize()
        canned_req = _session(canned, root, paths)
        floor_reqs = {part: _session(stub, root, paths) for part, stub in floors.items()}
        echo_addr, raw_addr = f"unix://{tmp}/echo.sock", f"unix://{tmp}/raw.sock"
        stack.enter_context(m.spawn(m.baseline_server("grpc-aio", echo_addr)))
        stack.enter_context(m.spawn(m.baseline_server("raw", raw_addr)))
        echo_ch = channel(echo_addr)
        # All servers are up; the competitors take turns, round after round, so that drift of
        # the machine spreads over all of them; each one's median run counts.
        competitors: dict[str, Callable[[], m.Stats]] = {
            "compact": _serial_compact(real, req, calls, warmup),
            "five": lambda: m.sync_serial(_five_reads(real, req.session_id, paths), calls, warmup),
            "canned": _serial_compact(canned, canned_req, calls, warmup),
            **{
                f"floor-{part}": _serial_compact(stub, floor_reqs[part], calls, warmup)
                for part, stub in floors.items()
            },
            "echo": lambda: m.sync_serial(_echo_call(echo_ch, 100 * 1024), calls, warmup),
            "echo_same": lambda: m.sync_serial(_echo_call(echo_ch, size), calls, warmup),
            "raw": lambda: m.raw_serial(raw_addr, 100 * 1024, calls, warmup),
            "inproc": lambda: _in_process(root, paths, calls, warmup),
            "inproc_db": lambda: _in_process(root, paths, calls, warmup, persist=True),
        }
        runs: dict[str, list[m.Stats]] = {name: [] for name in competitors}
        for r in range(rounds):
            # Each round in its own order (seeded: the same every run), so that no competitor
            # always follows the same one (the in-process ones leave the page cache dirty with
            # their commits, the five reads with theirs) nor always runs first.
            order = list(competitors)
            random.Random(f"b5-round-{r}").shuffle(order)
            for name in order:
                runs[name].append(competitors[name]())
        med = {name: m.median_run(r) for name, r in runs.items()}
        # The target's ratio, measured paired: Compact and the I/O floor in alternating blocks
        # of 100 calls, so that both see the same machine (separate runs seconds apart let its
        # own swings, ±15% here, decide a ratio of two numbers 20% apart).
        paired = m.paired_serial(
            lambda: real.Compact(req),
            lambda: floors["both"].Compact(floor_reqs["both"]),
            calls * rounds,
            warmup,
        )
        hot = _hot_floor(tmp, root, paths, calls, warmup)
        inside = json.loads(floor_times.read_text())
        _serial_compact(timed, _session(timed, root, paths), calls, warmup)()
        own = json.loads(parts_times.read_text())
    compact, five, canned_st, floor_st = (
        med["compact"],
        med["five"],
        med["canned"],
        med["floor-both"],
    )
    floor_reads, floor_commit, floor_now = med["floor-reads"], med["floor-commit"], med["floor-now"]
    echo, echo_same, raw = med["echo"], med["echo_same"], med["raw"]
    inproc, inproc_db = med["inproc"], med["inproc_db"]
    if restored != FILES:
        raise RuntimeError(f"Compact restored {restored} files, expected {FILES}")
    rows: list[Sequence[object]] = []
    for name, st in (
        ("Compact (1 RPC, 5 x 20 KB)", compact),
        ("5 x ReadFile RPCs", five),
        ("pipeline in-process", inproc),
        ("pipeline + write-through in-process", inproc_db),
        ("Compact answered with a canned response (the service path alone)", canned_st),
        ("canned Compact + re-reading the 5 files + the write-through commit", floor_st),
        ("canned Compact + re-reading the 5 files", floor_reads),
        ("canned Compact + the write-through commit", floor_commit),
        (
            "canned Compact + the re-reads + the commit as the store writes it now (the "
            "activity time once a second)",
            floor_now,
        ),
        ("bare aio echo, 100 KB", echo),
        (f"bare aio echo, {size / 1024:.0f} KB (the Compact response's size)", echo_same),
        ("raw socket, 100 KB", raw),
    ):
        rows.append([name, st.p50_us, st.p99_us, st.qps, st.p50_us / compact.p50_us])
    paired_compact, paired_floor = paired
    verdicts = [
        verdict(
            "Compact p50 / I/O floor Compact p50 (the pipeline's own work over the I/O every "
            f"Compact must do; measured paired, {paired_compact.calls} calls each in alternating "
            f"blocks: {paired_compact.p50_us:,.0f} against {paired_floor.p50_us:,.0f} µs)",
            paired_compact.p50_us / paired_floor.p50_us,
            1.25,
        ),
        f"the same from the table's rows (each the median of {rounds} separate runs): "
        f"{compact.p50_us / floor_st.p50_us:.2f}x (informational)",
        verdict(
            "5 RPCs p50 / Compact p50", five.p50_us / compact.p50_us, 3.0, lower_is_better=False
        ),
        f"Compact p50 / 100 KB echo p50: {compact.p50_us / echo.p50_us:.2f}x (informational: "
        "issue #3's 1.3x target, withdrawn)",
        f"Compact p50 / in-process pipeline p50 (the gRPC and persistence share): "
        f"{compact.p50_us / inproc.p50_us:.2f}x (informational)",
        f"canned Compact p50 / 100 KB echo p50: {canned_st.p50_us / echo.p50_us:.2f}x (the "
        "service path for this response before any work)",
        f"I/O floor Compact p50 / 100 KB echo p50: {floor_st.p50_us / echo.p50_us:.2f}x (the "
        "canned answer plus only the re-reads and the commit that every Compact must do: what "
        "a pipeline that took no time would reach); the 1.25x target leaves the pipeline "
        f"{0.25 * floor_st.p50_us:.0f} µs",
        f"I/O floor with only the re-reads / only the commit, p50 / 100 KB echo p50: "
        f"{floor_reads.p50_us / echo.p50_us:.2f}x / {floor_commit.p50_us / echo.p50_us:.2f}x "
        f"(over the canned row: +{floor_reads.p50_us - canned_st.p50_us:.0f} / "
        f"+{floor_commit.p50_us - canned_st.p50_us:.0f} µs)",
        f"I/O floor with the commit as the store writes it now / 100 KB echo p50: "
        f"{floor_now.p50_us / echo.p50_us:.2f}x (the floor's own gain, "
        f"{floor_st.p50_us - floor_now.p50_us:.0f} µs; "
        f"Compact p50 / this floor: {compact.p50_us / floor_now.p50_us:.2f}x, informational)",
        f"a Compact's write-through over the floor's commit (the five file rows the floor does "
        f"not store): +{own['write'] - inside['commit']:.0f} µs of CPU in the daemon, "
        f"+{hot['compact_write'] - hot['commit']:.0f} back to back, of which bare sqlite3's five "
        f"more rows +{hot['sqlite6'] - hot['sqlite']:.0f} (informational)",
        f"pipeline + write-through in-process p50 / 100 KB echo p50: "
        f"{inproc_db.p50_us / echo.p50_us:.2f}x",
        f"Compact p50 / bare echo of the same response size ({size / 1024:.0f} KB): "
        f"{compact.p50_us / echo_same.p50_us:.2f}x (informational)",
        f"Compact p50 / raw-socket 100 KB floor: {compact.p50_us / raw.p50_us:.1f}x "
        "(informational)",
    ]
    table = Table(
        "Unix socket, serial calls; server on CPU 0, client on CPU 1",
        ["what", "p50 µs", "p99 µs", "calls/s", "p50 / Compact p50"],
        rows,
    )
    parts = Table(
        "Where the I/O floor goes: CPU µs per Compact of the thread doing it (median)",
        ["what", "in-process, back to back", "inside the floor daemon's handler", "daemon / hot"],
        [
            [
                "re-reading the 5 files (`_core.read_whole`, page cache)",
                hot["reads"],
                inside["reads"],
                inside["reads"] / hot["reads"],
            ],
            [
                "the write-through commit (the agent's row, one SQLite transaction)",
                hot["commit"],
                inside["commit"],
                inside["commit"] / hot["commit"],
            ],
            [
                "one-row transaction in bare sqlite3 (WAL, synchronous=NORMAL)",
                hot["sqlite"],
                "",
                "",
            ],
            [
                "a Compact's write-through (the agent's row and the 5 file rows moved, one "
                "SQLite transaction; inside: the instrumented daemon's, below)",
                hot["compact_write"],
                own["write"],
                own["write"] / hot["compact_write"],
            ],
            [
                "the same six rows in bare sqlite3 (one row, and five updated in place)",
                hot["sqlite6"],
                "",
                "",
            ],
        ],
    )
    rest = own["handler"] - own["files"] - own["write"] - own["apply"]
    floor_io = inside["reads"] + inside["commit"]
    own_parts = Table(
        "Where a Compact's work goes: CPU µs per Compact of the event loop's thread (median), "
        "in a daemon instrumented for it (`bench/_parts_compact.py`), beside the I/O floor's",
        ["what", "CPU µs", "/ the floor's re-reads + commit"],
        [
            [name, us, us / floor_io]
            for name, us in (
                ("the whole Compact handler", own["handler"]),
                (
                    "the files step: selection, the core call, the budget, the decisions",
                    own["files"],
                ),
                (
                    "of which the core call (the 5 re-reads, and the rendering of files that "
                    "changed)",
                    own["core"],
                ),
                ("the write-through (the agent's row and the 5 file rows)", own["write"]),
                ("the result applied (the cache re-seeded)", own["apply"]),
                ("the rest (the other steps, the response, the servicer)", rest),
                ("the floor's re-reads + commit (its handler, above)", floor_io),
            )
        ],
    )
    section = Section(
        "B5 — restore pipeline end to end", __doc__ or "", [table, parts, own_parts], [], verdicts
    )
    section.plots.append(
        bar_chart(table, "b5_p50.png", title="B5 p50 latency (µs), lower is better", value_col=1)
    )
    return section


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv).markdown())
