"""B6: the clients (Node, Go, Rust, Python) against the daemon, each beside its own bare echo.

B4 extended to the other clients. Each client has a small driver (clients/node/bench/pcbench.mjs,
clients/go/cmd/pcbench, clients/rust/examples/bench.rs, bench/_b6_python.py) that calls, on one
client stack in one process, both a bare echo (`/bench.Echo/Echo` on the grpc.aio echo server
of bench/_servers.py, bytes in and out through the language's generic unary call: grpc-js
`makeUnaryRequest` with identity (de)serializers, grpc-go `Invoke` with a raw codec, tonic
`Grpc::unary` with a bytes codec, grpc.aio `unary_unary`) and the daemon's real method:

- small: the echo of 100 B against `EstimateTokens` on 100 B;
- compact: the echo of 100 KB against `Compact` of a session that read five 20 KB files (B5's
  project, all five restored whole), one session per in-flight call.

Serially and with 16 calls in flight. Within a driver run the echo and the real series alternate
in rounds; the full mode repeats every run three times, going round the clients, and keeps the
run with the median p50 (its p99 and QPS with it). The ratios are the real method over the same
client's echo: they hold the client's (de)serialisation and wrapper costs plus the daemon's own
work, not the transport. The daemon and the echo server are pinned to CPU 0, every driver to
CPU 1, each on a single-threaded runtime (Node's event loop, GOMAXPROCS=1, tokio current_thread,
asyncio). ghz, the external load generator (grpc-go with dynamic messages from the proto file),
calls `EstimateTokens` and `Compact` (all its calls on one session) and is compared with the
clients on the same methods; the echo has no proto, so ghz has no echo row.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from bench import _measure as m
from bench._daemon import running_daemon
from bench.report import PLOTS, ROOT, Section, Table, verdict

CLIENTS = ("python", "node", "go", "rust")
MODES = ("small", "compact")
CONCURRENCY = (1, 16)
BIN = ROOT / "bench" / "out" / "bin"
GHZ_MODULE = "github.com/bojand/ghz/cmd/ghz"
# The proxy lists only v0.93.0 for this module, which cannot parse proto3 `optional`; the newer
# tag is served when asked for by name.
GHZ_VERSION = "v0.120.0"
PROTO = ROOT / "proto" / "postcompact" / "v1" / "postcompact.proto"
PLOT = "b6_clients.png"
REAL = {"small": "EstimateTokens 100 B", "compact": "Compact 5x20KB"}
ECHO = {"small": "echo 100 B", "compact": "echo 100 KB"}


@dataclass
class Row:
    client: str
    series: str
    mode: str
    concurrency: int
    p50_us: float
    p99_us: float
    qps: float
    calls: int


@dataclass
class Results:
    rows: list[Row] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    compact_bytes: int = 0

    def get(self, client: str, series: str, conc: int) -> Row | None:
        for r in self.rows:
            if (r.client, r.series, r.concurrency) == (client, series, conc):
                return r
        return None


def make_project(root: Path) -> None:
    """B5's project: five ~20 KB TypeScript-like files, src/module{0..4}.ts, each under the
    8,000-token per-file cap the drivers set, so each is restored whole. (B5 has the same
    generator; kept here so B6 stands alone.)"""
    for i in range(5):
        lines, n = [], 0
        while n < 20 * 1024 - 64:
            line = f"export function handler{i}_{n}(input: string): number {{ return {n}; }}"
            lines.append(line)
            n += len(line) + 1
        p = root / "src" / f"module{i}.ts"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(lines)[: 20 * 1024 - 1])


# --- building the drivers ------------------------------------------------------------------------


def _run(
    argv: Sequence[str], cwd: Path, timeout: float = 900, env: dict[str, str] | None = None
) -> str:
    """Run a build step; return '' when it succeeded, else the tail of its output."""
    try:
        p = subprocess.run(
            list(argv),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{' '.join(argv)}: {e}"
    if p.returncode != 0:
        return f"{' '.join(argv)} exited {p.returncode}: {(p.stdout + p.stderr)[-600:]}"
    return ""


def _newer(target: Path, sources: Sequence[Path]) -> bool:
    if not target.exists():
        return False
    t = target.stat().st_mtime
    return all(s.stat().st_mtime <= t for s in sources)


def build(client: str) -> tuple[list[str] | None, str]:
    """The driver's command (flags follow), or None and why it could not be built."""
    if client == "python":
        return [sys.executable, "-m", "bench._b6_python"], ""
    if client == "node":
        node_dir = ROOT / "clients" / "node"
        if not shutil.which("node") or not shutil.which("npm"):
            return None, "node/npm not on PATH"
        if not (node_dir / "node_modules" / "@grpc" / "grpc-js").exists():
            err = _run(["npm", "ci", "--no-audit", "--no-fund"], node_dir)
            if err:
                return None, err
        srcs = [*(node_dir / "src").glob("*.ts"), *(node_dir / "gen").rglob("*.ts")]
        if not _newer(node_dir / "dist" / "src" / "index.js", srcs):
            err = _run(["npm", "run", "--silent", "build"], node_dir)
            if err:
                return None, err
        return ["node", str(node_dir / "bench" / "pcbench.mjs")], ""
    if client == "go":
        if not shutil.which("go"):
            return None, "go not on PATH"
        exe = BIN / "pcbench"
        err = _run(["go", "build", "-o", str(exe), "./cmd/pcbench"], ROOT / "clients" / "go")
        return ([str(exe)], "") if not err else (None, err)
    if client == "rust":
        if not shutil.which("cargo"):
            return None, "cargo not on PATH"
        exe = ROOT / "target" / "release" / "examples" / "bench"
        rust_dir = ROOT / "clients" / "rust"
        srcs = [
            *rust_dir.rglob("*.rs"),
            rust_dir / "Cargo.toml",
            *(ROOT / "proto").rglob("*.proto"),
        ]
        if not _newer(exe, [*srcs, ROOT / "Cargo.lock"]):
            # Slow the first time on 2 cores (release, fat LTO).
            err = _run(
                ["cargo", "build", "--release", "-p", "postcompact-client", "--example", "bench"],
                ROOT,
                timeout=1800,
            )
            if err:
                if not exe.exists():
                    return None, err
                # The client is being edited: measure the driver built last, and say so.
                built = time.strftime("%H:%M", time.localtime(exe.stat().st_mtime))
                return [
                    str(exe)
                ], f"cargo build failed, measured the driver built at {built}: {err}"
        return [str(exe)], ""
    raise ValueError(client)


def build_ghz() -> tuple[Path | None, str]:
    exe = BIN / "ghz"
    if exe.exists():
        return exe, ""
    if not shutil.which("go"):
        return None, "go not on PATH"
    BIN.mkdir(parents=True, exist_ok=True)
    err = _run(["go", "install", f"{GHZ_MODULE}@{GHZ_VERSION}"], ROOT, env={"GOBIN": str(BIN)})
    return (exe, "") if not err else (None, err)


# --- running -------------------------------------------------------------------------------------


def run_driver(
    cmd: list[str],
    daemon: str,
    echo: str,
    project: Path,
    mode: str,
    conc: int,
    calls: int,
    warmup: int,
    rounds: int,
) -> list[dict[str, object]]:
    argv = [
        "taskset",
        "-c",
        str(m.CLIENT_CPU),
        *cmd,
        "--daemon",
        daemon,
        "--echo",
        echo,
        "--mode",
        mode,
        "--c",
        str(conc),
        "--calls",
        str(calls),
        "--warmup",
        str(warmup),
        "--rounds",
        str(rounds),
        "--project",
        str(project),
    ]
    p = subprocess.run(
        argv,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "GOMAXPROCS": "1", "PYTHONHASHSEED": "0"},
        check=False,
    )
    if p.returncode != 0:
        lines = [ln for ln in p.stderr.splitlines() if any(c.isalnum() for c in ln)]
        raise RuntimeError(f"exit {p.returncode}: {lines[-1] if lines else '(no output)'}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]


def run_ghz(
    ghz: Path,
    address: str,
    method: str,
    data: dict[str, object],
    conc: int,
    calls: int,
    warmup: int,
) -> Row:
    argv = [
        "taskset",
        "-c",
        str(m.CLIENT_CPU),
        str(ghz),
        "--insecure",
        "--cpus",
        "1",
        "--proto",
        str(PROTO),
        "--call",
        f"postcompact.v1.PostcompactService/{method}",
        "-d",
        json.dumps(data),
        "-n",
        str(calls + warmup),
        "--skipFirst",
        str(warmup),
        "-c",
        str(conc),
        "--connections",
        "1",
        "-O",
        "json",
        address,
    ]
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"ghz exit {p.returncode}: {(p.stdout + p.stderr).strip()[-600:]}")
    out = json.loads(p.stdout)
    codes = out.get("statusCodeDistribution") or {}
    if set(codes) - {"OK"}:
        raise RuntimeError(f"ghz {method}: non-OK statuses {codes}")
    dist = {int(d["percentage"]): d["latency"] / 1e3 for d in out["latencyDistribution"]}
    # ghz's own rps divides the counted calls by a duration that includes the skipped warm-up:
    # count all calls instead.
    qps = (out["count"] + warmup) / (out["total"] / 1e9)
    series = REAL["small"] if method == "EstimateTokens" else REAL["compact"]
    return Row("ghz", series, "", conc, dist[50], dist[99], qps, int(out["count"]))


def _ghz_session(address: str, project: Path) -> tuple[str, int]:
    """A session for ghz's Compact, opened and the five files read through the daemon's stubs;
    and the size of one Compact response on the wire."""
    from postcompact.v1 import postcompact_pb2 as pb
    from postcompact.v1 import postcompact_pb2_grpc as pbg

    with grpc.insecure_channel(address, options=m.GRPC_OPTIONS) as ch:
        stub = pbg.PostcompactServiceStub(ch)
        sid: str = stub.OpenSession(
            pb.OpenSessionRequest(
                cwd=str(project),
                policy=pb.RestorePolicy(
                    max_files=5,
                    file_token_budget=50_000,
                    max_tokens_per_file=8_000,
                    match_budget=pb.HARNESS_RULE_NONE,
                ),
            )
        ).session_id
        for f in range(5):
            stub.ReadFile(
                pb.ReadFileRequest(session_id=sid, path=str(project / f"src/module{f}.ts"))
            )
        size = stub.Compact(pb.CompactRequest(session_id=sid, skip_hooks=True)).ByteSize()
        return sid, size


def measure(quick: bool) -> Results:
    counts = {
        # (calls, warm-up) per series; rounds alternate echo and real
        "small": (2000, 100) if quick else (5000, 200),
        "compact": (300, 32) if quick else (2000, 64),
    }
    rounds = 2 if quick else 4
    repeats = 1 if quick else 3
    res = Results()
    runs: dict[tuple[str, str, int], list[Row]] = {}
    commands: dict[str, list[str]] = {}
    for client in CLIENTS:
        t0 = time.perf_counter()
        cmd, err = build(client)
        print(
            f"    b6: {client} driver {'ready' if cmd else 'FAILED'}"
            f" ({time.perf_counter() - t0:.0f}s)",
            file=sys.stderr,
            flush=True,
        )
        if err:
            res.problems.append(f"{client}: {'driver not built — ' if cmd is None else ''}{err}")
        if cmd is not None:
            commands[client] = cmd
    ghz, ghz_err = build_ghz()
    if ghz is None:
        res.problems.append(f"ghz: not installed from the Go module proxy — {ghz_err}")
    with m.short_tmpdir() as tmp:
        project = tmp / "proj"
        make_project(project)
        echo = f"unix://{tmp}/echo.sock"
        (tmp / "daemon").mkdir(mode=0o700)
        with running_daemon(tmp / "daemon") as d, m.spawn(m.baseline_server("grpc-aio", echo)):
            jobs: list[tuple[str, dict[str, object], tuple[int, int]]] = []
            if ghz is not None:
                try:
                    sid, res.compact_bytes = _ghz_session(d.address, project)
                except grpc.RpcError as e:
                    res.problems.append(
                        f"ghz Compact: cannot prepare its session — {e.code()}: {e.details()}"
                    )
                    sid = ""
                text = base64.b64encode(b"x" * 100).decode()
                jobs.append(("EstimateTokens", {"text": text}, counts["small"]))
                if sid:
                    jobs.append(
                        ("Compact", {"session_id": sid, "skip_hooks": True}, counts["compact"])
                    )
            # Repeats go round every client in turn (A B C D A B C D ...): a burst of load from
            # elsewhere on the VM lands on one run, and the median run is kept.
            for rep in range(repeats):
                for client, cmd in commands.items():
                    for mode in MODES:
                        calls, warmup = counts[mode]
                        for conc in CONCURRENCY:
                            try:
                                out = run_driver(
                                    cmd, d.address, echo, project, mode, conc, calls, warmup, rounds
                                )
                            except (RuntimeError, subprocess.TimeoutExpired) as e:
                                res.problems.append(f"{client} {mode} x{conc}, run {rep + 1}: {e}")
                                continue
                            for o in out:
                                runs.setdefault((client, str(o["series"]), conc), []).append(
                                    Row(
                                        client,
                                        str(o["series"]),
                                        mode,
                                        conc,
                                        float(o["p50_us"]),  # type: ignore[arg-type]
                                        float(o["p99_us"]),  # type: ignore[arg-type]
                                        float(o["qps"]),  # type: ignore[arg-type]
                                        int(o["calls"]),  # type: ignore[call-overload]
                                    )
                                )
                for method, data, (calls, warmup) in jobs:
                    assert ghz is not None  # jobs only when it is installed
                    for conc in CONCURRENCY:
                        try:
                            r = run_ghz(ghz, d.address, method, data, conc, calls, warmup)
                        except (RuntimeError, subprocess.TimeoutExpired, KeyError, ValueError) as e:
                            res.problems.append(f"ghz {method} x{conc}, run {rep + 1}: {e}")
                            continue
                        runs.setdefault(("ghz", r.series, conc), []).append(r)
                print(f"    b6: run {rep + 1}/{repeats} done", file=sys.stderr, flush=True)
    for group in runs.values():
        group.sort(key=lambda r: r.p50_us)
        res.rows.append(group[len(group) // 2])
    res.problems = list(dict.fromkeys(res.problems))
    return res


# --- reporting -----------------------------------------------------------------------------------


def _client_table(res: Results, client: str) -> Table:
    rows: list[Sequence[object]] = []
    for mode in MODES:
        for conc in CONCURRENCY:
            echo = res.get(client, ECHO[mode], conc)
            real = res.get(client, REAL[mode], conc)
            for r in (echo, real):
                if r is None:
                    continue
                ratio_p50 = f"{r.p50_us / echo.p50_us:.2f}x" if echo and r is real else ""
                ratio_qps = f"{echo.qps / r.qps:.2f}x" if echo and r is real else ""
                rows.append([r.series, conc, r.p50_us, r.p99_us, r.qps, ratio_p50, ratio_qps])
    return Table(
        f"{client}: p50/p99 latency (µs) and QPS, Unix socket; real / own echo",
        [
            "series",
            "in flight",
            "p50 µs",
            "p99 µs",
            "QPS",
            "real p50 ÷ echo p50",
            "echo QPS ÷ real QPS",
        ],
        rows,
    )


def _summary_table(res: Results) -> Table:
    rows: list[Sequence[object]] = []
    for client in CLIENTS:
        row: list[object] = [client]
        for mode in MODES:
            for conc in CONCURRENCY:
                echo = res.get(client, ECHO[mode], conc)
                real = res.get(client, REAL[mode], conc)
                row.append(f"{real.p50_us / echo.p50_us:.2f}x" if echo and real else "—")
        rows.append(row)
    return Table(
        "p50 of the real method ÷ p50 of the same client's bare echo (100 B / 100 KB)",
        [
            "client",
            "EstimateTokens, serial",
            "EstimateTokens, 16",
            "Compact, serial",
            "Compact, 16",
        ],
        rows,
    )


def _ghz_table(res: Results) -> Table:
    rows: list[Sequence[object]] = []
    for mode in MODES:
        for conc in CONCURRENCY:
            ghz = res.get("ghz", REAL[mode], conc)
            for client in ("ghz", *CLIENTS):
                r = res.get(client, REAL[mode], conc)
                if r is None:
                    continue
                vs = f"{r.p50_us / ghz.p50_us:.2f}x" if ghz else "—"
                rows.append([REAL[mode], conc, client, r.p50_us, r.p99_us, r.qps, vs])
    return Table(
        "The same methods from ghz (external load generator, grpc-go with dynamic messages) and "
        "from each client",
        ["method", "in flight", "caller", "p50 µs", "p99 µs", "QPS", "p50 ÷ ghz p50"],
        rows,
    )


def _plot(res: Results) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    clients = [c for c in ("ghz", *CLIENTS) if any(r.client == c for r in res.rows)]
    if not clients:
        return False
    series = [ECHO["small"], REAL["small"], ECHO["compact"], REAL["compact"]]
    colors = ["#9ecae1", "#3182bd", "#fdae6b", "#e6550d"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    width = 0.8 / len(series)
    for ax, conc in zip(axes, CONCURRENCY, strict=True):
        for i, (s, color) in enumerate(zip(series, colors, strict=True)):
            xs, ys = [], []
            for j, c in enumerate(clients):
                r = res.get(c, s, conc)
                if r is not None:
                    xs.append(j + (i - (len(series) - 1) / 2) * width)
                    ys.append(r.p50_us)
            ax.bar(xs, ys, width, label=s, color=color)
        ax.set_xticks(range(len(clients)), clients)
        ax.set_yscale("log")
        ax.set_title("serial" if conc == 1 else f"{conc} in flight")
        ax.grid(axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("p50 latency, µs (log)")
    axes[1].legend(loc="upper left", fontsize=8)
    fig.suptitle("B6: each client, bare echo beside the real method (Unix socket)")
    fig.tight_layout()
    PLOTS.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOTS / PLOT, dpi=110)
    plt.close(fig)
    return True


def run(quick: bool = False) -> Section:
    m.pin_client()
    res = measure(quick)
    verdicts = []
    for client in CLIENTS:
        for mode in ("small", "compact"):
            echo = res.get(client, ECHO[mode], 1)
            real = res.get(client, REAL[mode], 1)
            if not (echo and real):
                continue
            what = f"{client}: {REAL[mode]} p50 / {ECHO[mode]} p50, serial"
            if mode == "small":
                verdicts.append(verdict(what, real.p50_us / echo.p50_us, 1.2))
            else:  # Compact is judged against its I/O floor, in B5
                verdicts.append(
                    f"{what}: {real.p50_us / echo.p50_us:.2f}x (informational: issue #3's 1.3x "
                    "target is withdrawn, the I/O floor alone is above it; B5 judges Compact "
                    "against that floor)"
                )
    tables = [_summary_table(res), *(_client_table(res, c) for c in CLIENTS), _ghz_table(res)]
    intro = (__doc__ or "").strip()
    if res.compact_bytes:
        intro += (
            f"\n\nOne Compact response is {res.compact_bytes / 1024:.0f} KB of protobuf against "
            "the echo's 100 KB: each file's text crosses the socket once, in its attachment's "
            "`blocks` (the raw content comes only with `include_content`, and the clients "
            "join the blocks themselves)."
        )
    if res.problems:
        intro += (
            "\n\nProblems (a series with other good runs is still reported from them):\n\n"
            + "\n".join(f"- {p}" for p in res.problems)
        )
    plots = [PLOT] if _plot(res) else []
    return Section("B6 — clients: Node, Go, Rust, Python and ghz", intro, tables, plots, verdicts)


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv).markdown())
