"""B10: serving — the daemon on grpc.aio (today's server) against the same daemon on pygrpc-native
0.5.0's server (`--server-implementation native`; issue 41, part 2), A/B in one run.

Two daemons, one per implementation, each pinned to the server CPU as in B4, the benchmark's
client pinned to the other:

- B4's small RPC (EstimateTokens of 100 B) over the Unix socket and over loopback TCP (the
  daemon's TCP front, with the token), and B4's ReadFile of a 20 KB file that the daemon re-reads
  whole each time: p50 of serial calls. The two daemons are called in alternating blocks
  (`paired_serial`), in several rounds; a round's ratio is native's p50 over grpc.aio's, the
  median round's counts, and the spread is the range of the rounds' ratios.
- Server CPU per call, B4's way (`cpu_interleaved`: blocks of calls going round the sides,
  forwards then backwards, CPU read from the kernel's per-thread run time), for the small RPC and
  the ReadFile on each daemon; the ratio is over all cycles, the spread the range of single
  cycles' ratios.
- B5's Compact (five 20 KB files restored whole, hooks skipped), serial p50, paired as above.
- B7's agents (its Go driver, 1 to 128 agents, one daemon on one core): throughput and p99, each
  step run on both implementations one after the other, in rounds (A B, then B A); the median
  round's ratio counts, the spread is the range of the rounds' ratios.

The decision (adopt native only if it is faster by more than the run's spread AND every contract
holds under it) also needs the contract run, which is not a benchmark: the daemon's server and
client suites with POSTCOMPACT_SERVER_IMPLEMENTATION=native (tests/daemon/conftest.py keeps that
variable for every daemon the tests start) and the Go, Node and Rust clients' conformance
scenarios against a daemon whose default was switched. Its result is `CONTRACTS` below, written
down from that run (docs/benchmarks.md, "B10").
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc
from postcompact.v1 import postcompact_pb2 as pb
from postcompact.v1 import postcompact_pb2_grpc as pbg

from bench import _measure as m
from bench import b4_transport as b4
from bench import b5_restore as b5
from bench import b7_agents as b7
from bench._daemon import Daemon, running_daemon
from bench.report import Section, Table

IMPLEMENTATIONS = ("grpcio", "native")
AGENTS = (1, 8, 32, 128)
PLOT = "b10_serving.png"

# The contracts under `server_implementation = "native"`, from the contract run (see the module
# doc): (contract, holds, the failing tests and why).
CONTRACTS: tuple[tuple[str, bool, str], ...] = (
    ("Unix socket and TCP listeners (one server each; the TCP one behind the front)", True, ""),
    (
        "the token gate on every method over TCP",
        True,
        "natively served methods each behind auth.gate_method; reflection and unknown methods "
        "behind the TokenGate on the fallback",
    ),
    ("the TCP protections (front, loopback only, per-uid bounds; docs/security.md)", True, ""),
    ("health (Check, Watch, UNKNOWN_SERVICE)", True, "served natively"),
    ("reflection", True, "bidirectional: always served by pygrpc-native's grpc.aio fallback"),
    ("ErrorInfo trailers and reasons (errors, unknown methods, bad input, fuzz)", True, ""),
    ("deadlines and cancellation", True, "a call past its deadline: DEADLINE_EXCEEDED"),
    ("admission's OVERLOADED (max_calls_in_flight)", True, "test_overload, test_admission"),
    (
        "the answer budget (max_answer_bytes_in_flight)",
        False,
        "test_connections::test_stopped_readers_pin_at_most_the_answer_budget: a call is done "
        "(its done callbacks run, its reservation released) when the handler hands its answer "
        "to the Rust front, not when the client has read it; four stopped readers are all "
        "answered, none OVERLOADED, and their answers are held unbounded",
    ),
    (
        "keepalive: a stopped TCP reader's answer freed by the ping timeout",
        False,
        "test_connections::test_a_stopped_tcp_reader_is_dropped_by_the_ping_timeout: the same "
        "accounting (answers held never show in answer_bytes_in_flight)",
    ),
    (
        "hostile load: connections that never handshake closed after 5 s; idle ones after "
        "60 s (Unix) / 5 s (TCP)",
        False,
        "test_connections::test_idle_unix_connections_are_closed: 1,100 silent Unix "
        "connections at 1,024 descriptors lock the owner out (not SERVING after 30 s): the "
        "front ignores grpc.server_handshake_timeout_ms (its own is 120 s) and refuses "
        "grpc.max_connection_idle_ms, which has to be left out",
    ),
    (
        "graceful drain (SIGTERM: calls in flight answered within shutdown_grace_s)",
        False,
        "a ReadFile held in its worker at SIGTERM and released 0.5 s later is answered "
        "UNAVAILABLE (grpc.aio: delivered): stop() closes the front as soon as the handlers "
        "return, before their answers are written; test_lifecycle's SIGTERM tests pass",
    ),
    (
        "the four clients' conformance (Python, Go, Node, Rust)",
        True,
        "25 of 29 scenarios pass on both implementations; the same 4 (budgets-bind, "
        "design-chapter-eight-files, design-chapter-reread-restores-first, "
        "partial-compaction-tail-visibility) fail on grpc.aio too on this base (the learned "
        "ranking's order, issue 40): not the server's",
    ),
)


def _args(impl: str) -> list[str]:
    return ["--server-implementation", impl]


def _small(ch: grpc.Channel, metadata: b4.Metadata = ()) -> Callable[[], object]:
    stub = pbg.PostcompactServiceStub(ch)
    req = pb.EstimateTokensRequest(text=b"x" * 100)
    return lambda: stub.EstimateTokens(req, metadata=metadata)


def _rounds(
    calls: dict[str, tuple[Callable[[], object], Callable[[], object]]],
    rounds: int,
    n: int,
    warmup: int,
) -> dict[str, list[tuple[m.Stats, m.Stats]]]:
    """Each pair (grpc.aio's call, native's) in `paired_serial`, `rounds` times, the pairs taking
    turns within a round and the order of the two sides swapped every other round."""
    out: dict[str, list[tuple[m.Stats, m.Stats]]] = {k: [] for k in calls}
    for r in range(rounds):
        for name, (a, b) in calls.items():
            if r % 2 == 0:
                sa, sb = m.paired_serial(a, b, n, warmup)
            else:
                sb, sa = m.paired_serial(b, a, n, warmup)
            out[name].append((sa, sb))
    return out


def _ratio_row(what: str, pairs: Sequence[tuple[m.Stats, m.Stats]]) -> list[object]:
    ratios = sorted(b.p50_us / a.p50_us for a, b in pairs)
    mid = sorted(pairs, key=lambda p: p[1].p50_us / p[0].p50_us)[len(pairs) // 2]
    return [
        what,
        mid[0].p50_us,
        mid[1].p50_us,
        statistics.median(ratios),
        f"{ratios[0]:.2f}-{ratios[-1]:.2f}",
        _faster(ratios),
    ]


def _faster(ratios: Sequence[float]) -> str:
    """Whether native is faster by more than the spread: every round's ratio below 1."""
    if max(ratios) < 1.0:
        return "yes"
    if min(ratios) > 1.0:
        return "no: slower"
    return "no: within the spread"


def _latency(tmp: Path, quick: bool) -> tuple[Table, Table, list[list[str]]]:
    n, warmup, rounds = (300, 50, 2) if quick else (2000, 200, 5)
    cpu_calls, cpu_block = (600, 100) if quick else (6000, 300)
    verdicts: list[list[str]] = []
    with contextlib.ExitStack() as stack:
        ds: dict[str, Daemon] = {}
        for impl in IMPLEMENTATIONS:
            home = tmp / f"lat-{impl}"
            home.mkdir(mode=0o700)
            ds[impl] = stack.enter_context(running_daemon(home, tcp=True, extra_args=_args(impl)))
        uds = {i: stack.enter_context(grpc.insecure_channel(d.address)) for i, d in ds.items()}
        tcp = {
            i: stack.enter_context(grpc.insecure_channel(str(d.tcp_address))) for i, d in ds.items()
        }
        small = {i: _small(uds[i]) for i in IMPLEMENTATIONS}
        small_tcp = {i: _small(tcp[i], ds[i].metadata) for i in IMPLEMENTATIONS}
        reads: dict[str, Callable[[], object]] = {}
        compacts: dict[str, Callable[[], object]] = {}
        for impl in IMPLEMENTATIONS:
            root = tmp / f"proj-{impl}"
            root.mkdir()
            reads[impl], _ = b4._read_call(uds[impl], root)
            croot = tmp / f"b5-{impl}"
            paths = b5.make_project(croot)
            stub = pbg.PostcompactServiceStub(uds[impl])
            req = b5._session(stub, croot, paths)
            compacts[impl] = partial_compact(stub, req)
        pairs = {
            "small": (small["grpcio"], small["native"]),
            "small_tcp": (small_tcp["grpcio"], small_tcp["native"]),
            "read": (reads["grpcio"], reads["native"]),
            "compact": (compacts["grpcio"], compacts["native"]),
        }
        got = _rounds(pairs, rounds, n, warmup)
        cycles = m.cpu_interleaved(
            {
                "small_grpcio": (ds["grpcio"].pid, small["grpcio"]),
                "small_native": (ds["native"].pid, small["native"]),
                "read_grpcio": (ds["grpcio"].pid, reads["grpcio"]),
                "read_native": (ds["native"].pid, reads["native"]),
            },
            cpu_calls,
            warmup,
            cpu_block,
        )
    lat = Table(
        f"p50 of serial calls, µs: grpc.aio against pygrpc-native, {rounds} rounds of {n} calls "
        "each side (alternating blocks); the median round's figures, the ratio native / "
        "grpc.aio (median of the rounds) and its range over the rounds",
        ["call", "grpc.aio p50", "native p50", "native / grpc.aio", "range", "faster beyond it"],
        [
            _ratio_row("EstimateTokens 100 B, Unix socket (B4's small RPC)", got["small"]),
            _ratio_row("EstimateTokens 100 B, loopback TCP (front + token)", got["small_tcp"]),
            _ratio_row("ReadFile 20 KB, re-read whole (B4)", got["read"]),
            _ratio_row("Compact, five 20 KB files restored (B5)", got["compact"]),
        ],
    )
    cpu_rows: list[Sequence[object]] = []
    for what, key in (
        ("EstimateTokens 100 B (B4's small RPC)", "small"),
        ("ReadFile 20 KB (B4)", "read"),
    ):
        a, b = cycles[f"{key}_grpcio"], cycles[f"{key}_native"]
        single = sorted(y / x for x, y in zip(a, b, strict=True))
        ratio = m.per_call(b) / m.per_call(a)
        cpu_rows.append(
            [
                what,
                m.per_call(a),
                m.per_call(b),
                ratio,
                f"{single[0]:.2f}-{single[-1]:.2f}",
                _faster(single),
            ]
        )
    cpu = Table(
        f"Server CPU per call, µs (every thread of the daemon; {cpu_calls} calls per side in "
        f"blocks of {cpu_block} going round the sides): ratio over all cycles, range of single "
        "cycles",
        ["call", "grpc.aio", "native", "native / grpc.aio", "range", "faster beyond it"],
        cpu_rows,
    )
    return lat, cpu, verdicts


def partial_compact(
    stub: pbg.PostcompactServiceStub, req: pb.CompactRequest
) -> Callable[[], object]:
    return lambda: stub.Compact(req)


def _agents(quick: bool) -> tuple[Table | None, list[str], dict[str, list[list[b7.Step]]]]:
    problems: list[str] = []
    steps: dict[str, list[list[b7.Step]]] = {i: [] for i in IMPLEMENTATIONS}
    exe, err = b7.build_fleet()
    if exe is None:
        return None, [f"B7's driver not built — {err}"], steps
    seconds, warmup, rounds = (4.0, 1.0, 1) if quick else (8.0, 2.0, 3)
    for r in range(rounds):
        order = IMPLEMENTATIONS if r % 2 == 0 else IMPLEMENTATIONS[::-1]
        got: dict[str, list[b7.Step]] = {i: [] for i in IMPLEMENTATIONS}
        for n in AGENTS:
            for impl in order:
                try:
                    got[impl].append(b7.run_step(exe, n, seconds, warmup, extra_args=_args(impl)))
                except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                    problems.append(f"{impl}, {n} agents, round {r + 1}: {e}")
        for impl in IMPLEMENTATIONS:
            steps[impl].append(got[impl])
    rows: list[Sequence[object]] = []
    for i, n in enumerate(AGENTS):
        per_round = [
            (a[i], b[i])
            for a, b in zip(steps["grpcio"], steps["native"], strict=True)
            if len(a) > i and len(b) > i
        ]
        if not per_round:
            continue
        rps = sorted(b.rps / a.rps for a, b in per_round)
        p99 = sorted(_p99(b) / _p99(a) for a, b in per_round)
        mid = sorted(per_round, key=lambda p: p[1].rps / p[0].rps)[len(per_round) // 2]
        rows.append(
            [
                n,
                mid[0].rps,
                mid[1].rps,
                statistics.median(rps),
                f"{rps[0]:.2f}-{rps[-1]:.2f}",
                f"{_p99(mid[0]):.1f} / {_p99(mid[1]):.1f}",
                statistics.median(p99),
                f"{p99[0]:.2f}-{p99[-1]:.2f}",
                f"{mid[0].daemon_cpu:.2f} / {mid[1].daemon_cpu:.2f}",
                f"{sum(mid[0].errors.values())} / {sum(mid[1].errors.values())}",
            ]
        )
    table = Table(
        f"B7's agents, one daemon on one core, {seconds:.0f} s per step, {rounds} rounds (the "
        "two implementations back to back, order swapped each round): the median round's "
        "throughput and ReadFile p99 (as the driver sees it), ratios native / grpc.aio (median "
        "and range over the rounds)",
        [
            "agents",
            "grpc.aio RPC/s",
            "native RPC/s",
            "RPC/s native / grpc.aio",
            "range",
            "ReadFile p99 ms grpc.aio / native",
            "p99 native / grpc.aio",
            "range",
            "daemon CPU grpc.aio / native",
            "errors grpc.aio / native",
        ],
        rows,
    )
    return table, problems, steps


def _p99(step: b7.Step) -> float:
    r = step.rpcs.get("ReadFile")
    return r.p99_ms if r else float("nan")


def _plot(steps: dict[str, list[list[b7.Step]]]) -> str | None:
    if not all(steps[i] and steps[i][0] for i in IMPLEMENTATIONS):
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bench.report import PLOTS

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    for impl, label in (("grpcio", "grpc.aio"), ("native", "pygrpc-native 0.5.0")):
        rounds = steps[impl]
        xs = [s.agents for s in rounds[0]]
        rps = [statistics.median(r[i].rps for r in rounds if len(r) > i) for i in range(len(xs))]
        p99 = [statistics.median(_p99(r[i]) for r in rounds if len(r) > i) for i in range(len(xs))]
        left.plot(xs, rps, marker="o", label=label)
        right.plot(xs, p99, marker="o", label=label)
    for ax, what in ((left, "RPC/s"), (right, "ReadFile p99, ms")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("agents")
        ax.set_ylabel(what)
        ax.legend(fontsize=7)
    fig.suptitle("B10: the daemon on grpc.aio and on pygrpc-native (B7's agents, medians)")
    fig.tight_layout()
    PLOTS.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOTS / PLOT, dpi=110)
    plt.close(fig)
    return PLOT


def _decision(lat: Table, cpu: Table, agents: Table | None) -> list[str]:
    faster = [str(r[0]) for t in (lat, cpu) for r in t.rows if r[-1] == "yes"]
    not_faster = [f"{r[0]} ({r[-1]})" for t in (lat, cpu) for r in t.rows if r[-1] != "yes"]
    if agents is not None:
        for r in agents.rows:
            lo = float(str(r[4]).split("-")[0])
            (faster if lo > 1.0 else not_faster).append(f"B7 throughput at {r[0]} agents")
    failing = [c for c, holds, _ in CONTRACTS if not holds]
    adopt = not not_faster and not failing and bool(CONTRACTS)
    lines = [
        f"Faster beyond the spread: {', '.join(faster) or 'none'}.",
        f"Not faster beyond the spread: {', '.join(not_faster) or 'none'}.",
        "Contracts failing under native: "
        + (", ".join(failing) if failing else "none" if CONTRACTS else "not run")
        + ".",
        "Decision: "
        + (
            "adopt pygrpc-native (grpc.aio stays a supported fallback)"
            if adopt
            else "do not adopt: grpc.aio stays the daemon's server; "
            '`server_implementation = "native"` stays an option, for measurement'
        )
        + ".",
    ]
    return lines


def run(quick: bool = False) -> Section:
    m.pin_client()
    load = [os.getloadavg()[0]]
    with m.short_tmpdir() as tmp:
        lat, cpu, _ = _latency(tmp, quick)
    agents, problems, steps = _agents(quick)
    load.append(os.getloadavg()[0])
    tables = [lat, cpu]
    if agents is not None:
        tables.append(agents)
    if CONTRACTS:
        tables.append(
            Table(
                "Contracts under native (POSTCOMPACT_SERVER_IMPLEMENTATION=native; see the text)",
                ["contract", "holds", "failing tests, and why"],
                [[c, "yes" if h else "**no**", why] for c, h, why in CONTRACTS],
            )
        )
    plot = _plot(steps)
    intro = (__doc__ or "").split("\n\n", 1)[1]
    intro += (
        f"\n\n1-minute load average at the start and the end: {load[0]:.2f}, {load[1]:.2f}."
        + ("".join(f"\n\nProblem: {p}" for p in problems))
        + "\n\n"
        + "\n".join(f"- {line}" for line in _decision(lat, cpu, agents))
    )
    return Section(
        "B10 — serving: grpc.aio against pygrpc-native (issue 41)",
        intro,
        tables=tables,
        plots=[plot] if plot else [],
    )
