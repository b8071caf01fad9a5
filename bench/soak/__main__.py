"""`make soak` (`python -m bench.soak`): the soak run of docs/reliability.md.

One daemon on a Unix socket in a fresh /tmp directory (its own state dir), 8 agent processes
(SOAK_PYTHON_AGENTS Python ones, bench/soak/agent.py, and SOAK_GO_AGENTS Go ones,
clients/go/cmd/soak-agent) each running a mixed workload on its own session for SOAK_SECONDS
(default 120). Meanwhile the daemon is killed with SIGKILL SOAK_KILLS times (default 5) at evenly
spaced moments and restarted on the same socket and state dir; once the new daemon serves, the
epoch file changes and every agent checks that nothing it was told is stored was lost. The
daemon's VmRSS is sampled every 0.5 s. Results: docs/reliability.md (the section between the
markers) and docs/bench/soak.png; the raw numbers in bench/out/soak.json.

Everything is bounded: the agents stop by themselves after SOAK_SECONDS, the orchestrator kills
any that is still running SOAK_SECONDS + 60 s later, and the daemon is stopped at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "reliability.md"
PLOT = REPO / "docs" / "bench" / "soak.png"
RAW = REPO / "bench" / "out" / "soak.json"
BEGIN, END = "<!-- soak:begin -->", "<!-- soak:end -->"
# Extra `serve` arguments, e.g. SOAK_DAEMON_ARGS=--no-persist for a negative control (then state
# is lost at every kill, and the run must say so; the docs are not rewritten).
EXTRA = os.environ.get("SOAK_DAEMON_ARGS", "").split()


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


class Daemon:
    """The daemon process, restartable on the same socket and state dir."""

    def __init__(self, base: Path):
        self.base = base
        self.socket = base / "d.sock"
        self.address = f"unix://{self.socket}"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("POSTCOMPACT_")},
            "XDG_RUNTIME_DIR": str(base / "run"),
            "XDG_CONFIG_HOME": str(base / "config"),
            "XDG_STATE_HOME": str(base / "state"),
            "POSTCOMPACT_LOG_LEVEL": "warning",
        }
        (base / "run").mkdir(mode=0o700, exist_ok=True)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = open(base / "daemon.log", "ab")  # noqa: SIM115 (closed in stop)

    def start(self) -> float:
        """Start and wait for SERVING; returns the seconds it took."""
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "postcompact", "serve", "--socket", str(self.socket), *EXTRA],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            env=self.env,
        )
        with grpc.insecure_channel(self.address) as ch:
            health = health_pb2_grpc.HealthStub(ch)
            while time.monotonic() - t0 < 60:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the daemon exited: see {self.base / 'daemon.log'}")
                try:
                    r = health.Check(health_pb2.HealthCheckRequest(), timeout=1.0)
                    if r.status == health_pb2.HealthCheckResponse.SERVING:
                        return time.monotonic() - t0
                except grpc.RpcError:
                    pass
                time.sleep(0.02)
        raise RuntimeError("the daemon did not serve within 60 s")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(30)

    def rss_kib(self) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return None
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            return None
        return None


def build_go_agent(out: Path) -> list[str]:
    go = os.environ.get("GO") or shutil.which("go") or "/usr/local/go/bin/go"
    subprocess.run(
        [go, "build", "-o", str(out), "./cmd/soak-agent"],
        cwd=REPO / "clients" / "go",
        check=True,
        timeout=600,
    )
    return [str(out)]


def percentile(values: list[int], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    i = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return float(values[i])


def main() -> int:
    seconds = _env_int("SOAK_SECONDS", 120)
    kills = _env_int("SOAK_KILLS", 5)
    n_py = _env_int("SOAK_PYTHON_AGENTS", 4)
    n_go = _env_int("SOAK_GO_AGENTS", 4)
    base = Path(tempfile.mkdtemp(prefix="pcsoak-", dir="/tmp"))
    epoch_file = base / "epoch"
    epoch_file.write_text("0")
    daemon = Daemon(base)
    go_cmd = build_go_agent(base / "soak-agent") if n_go else []
    startup = daemon.start()
    print(f"soak: daemon up in {startup:.2f}s at {daemon.address}; {seconds}s, {kills} kills")

    rss: list[tuple[float, int]] = []
    events: list[dict[str, Any]] = []
    stop_sampling = threading.Event()
    t_start = time.monotonic()

    def sample() -> None:
        while not stop_sampling.wait(0.5):
            v = daemon.rss_kib()
            if v is not None:
                rss.append((time.monotonic() - t_start, v))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()

    agents: list[tuple[str, subprocess.Popen[bytes], Path]] = []
    for i in range(n_py + n_go):
        lang = "python" if i < n_py else "go"
        name = f"{lang[:2]}{i}"
        out = base / f"{name}.json"
        common = [
            "--address", daemon.address,
            "--name", name,
            "--dir", str(base / "projects" / name),
            "--seconds", str(seconds),
            "--epoch-file", str(epoch_file),
            "--out", str(out),
            "--seed", str(1000 + i),
        ]  # fmt: skip
        argv = [sys.executable, "-m", "bench.soak.agent", *common] if lang == "python" else go_cmd
        if lang == "go":
            flags = [a.replace("--", "-", 1) if a.startswith("--") else a for a in common]
            argv = [*go_cmd, *flags]
        log = open(base / f"{name}.log", "wb")  # noqa: SIM115 (the child keeps it)
        proc = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        agents.append((name, proc, out))

    # Kill -9 at evenly spaced moments (not in the first or last tenth), restart at once.
    for k in range(1, kills + 1):
        at = seconds * (0.1 + 0.8 * k / (kills + 1))
        time.sleep(max(0.0, at - (time.monotonic() - t_start)))
        t_kill = time.monotonic() - t_start
        daemon.kill(signal.SIGKILL)
        took = daemon.start()
        (base / "epoch.tmp").write_text(str(k))
        os.replace(base / "epoch.tmp", epoch_file)  # atomic: agents never read a partial epoch
        events.append({"kill": k, "at_s": round(t_kill, 2), "down_s": round(took, 3)})
        print(f"soak: kill -9 #{k} at {t_kill:.1f}s, serving again after {took:.2f}s")

    hard_deadline = time.monotonic() + seconds + 60
    results = []
    for name, proc, out in agents:
        try:
            proc.wait(max(1.0, hard_deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if out.exists():
            results.append(json.loads(out.read_text()))
        else:
            results.append({"agent": name, "failed": True, "exit": proc.returncode})
            print(f"soak: agent {name} left no result (exit {proc.returncode})", file=sys.stderr)
    wall = time.monotonic() - t_start
    stop_sampling.set()
    sampler.join()
    final_rss = daemon.rss_kib()
    daemon.kill(signal.SIGTERM)
    daemon.log.close()

    summary = summarise(results, rss, events, wall, seconds, kills, startup, final_rss)
    if not EXTRA:
        RAW.parent.mkdir(parents=True, exist_ok=True)
        RAW.write_text(json.dumps({**summary, "rss": rss}, indent=1))
        plot(rss, events, summary)
        write_doc(summary)
    print(json.dumps({k: v for k, v in summary.items() if k != "per_agent"}, indent=1))
    shutil.rmtree(base, ignore_errors=True)
    return 0 if summary["state_lost"] == 0 and not summary["agents_failed"] else 1


def summarise(
    results: list[dict[str, Any]],
    rss: list[tuple[float, int]],
    events: list[dict[str, Any]],
    wall: float,
    seconds: int,
    kills: int,
    startup: float,
    final_rss: int | None,
) -> dict[str, Any]:
    ok = [r for r in results if not r.get("failed")]
    ops: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    lat_all: dict[str, list[int]] = {"python": [], "go": []}
    lat_by_method: dict[str, list[int]] = {}
    for r in ok:
        ops.update(r["ops"])
        errors.update(r["errors"])
        for method, values in r["lat_us"].items():
            lat_all[r["lang"]].extend(values)
            lat_by_method.setdefault(method, []).extend(values)
    everything = lat_all["python"] + lat_all["go"]
    rss_values = [v for _, v in rss]
    return {
        "seconds": seconds,
        "wall_s": round(wall, 1),
        "kills": kills,
        "agents": len(results),
        "agents_failed": [r["agent"] for r in results if r.get("failed")],
        "operations": sum(ops.values()),
        "ops_per_s": round(sum(ops.values()) / wall, 1),
        "ops": dict(sorted(ops.items())),
        "p50_ms": round(percentile(everything, 0.5) / 1000, 2),
        "p99_ms": round(percentile(everything, 0.99) / 1000, 2),
        "max_ms": round(max(everything, default=0) / 1000, 1),
        "by_lang": {
            lang: {
                "ops": len(v),
                "p50_ms": round(percentile(v, 0.5) / 1000, 2),
                "p99_ms": round(percentile(v, 0.99) / 1000, 2),
            }
            for lang, v in lat_all.items()
            if v
        },
        "by_method": {
            m: {
                "ops": len(v),
                "p50_ms": round(percentile(v, 0.5) / 1000, 2),
                "p99_ms": round(percentile(v, 0.99) / 1000, 2),
            }
            for m, v in sorted(lat_by_method.items())
        },
        "errors": dict(sorted(errors.items())),
        "checks": sum(r["checks"] for r in ok),
        "restarts_seen": sum(r["restarts_seen"] for r in ok),
        "state_lost": sum(r["lost"] for r in ok),
        "lost_detail": [d for r in ok for d in r["lost_detail"] or ()][:20],
        "events": events,
        "startup_s": round(startup, 2),
        "rss_mib_first": round(rss_values[0] / 1024, 1) if rss_values else None,
        "rss_mib_max": round(max(rss_values) / 1024, 1) if rss_values else None,
        "rss_mib_last": round((final_rss or rss_values[-1]) / 1024, 1) if rss_values else None,
        "per_agent": [
            {k: r.get(k) for k in ("agent", "lang", "checks", "restarts_seen", "lost")}
            | {"ops": sum(r.get("ops", {}).values()), "errors": sum(r.get("errors", {}).values())}
            for r in results
        ],
    }


def plot(rss: list[tuple[float, int]], events: list[dict[str, Any]], s: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    if rss:
        ax.plot([t for t, _ in rss], [v / 1024 for _, v in rss], ".", ms=3, label="daemon VmRSS")
    for i, e in enumerate(events):
        ax.axvline(e["at_s"], color="red", ls="--", lw=0.8, label="kill -9" if i == 0 else None)
    ax.set_xlabel("seconds into the run")
    ax.set_ylabel("MiB")
    ax.set_ylim(bottom=0)
    ax.set_title(
        f"soak: {s['agents']} agents, {s['operations']} ops, {s['kills']} kill -9 restarts, "
        f"state lost {s['state_lost']}"
    )
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOT, dpi=110)
    plt.close(fig)


def write_doc(s: dict[str, Any]) -> None:
    calls = ", ".join(f"{v['ops']} timed calls in {k}" for k, v in s["by_lang"].items())
    lines = [
        BEGIN,
        f"Last run: {time.strftime('%Y-%m-%d %H:%M', time.localtime())}, "
        f"{os.cpu_count()} CPUs; {s['agents']} agents "
        f"({calls}), "
        f"{s['seconds']} s, {s['kills']} kills (-9).",
        "",
        "| | |",
        "|---|---|",
        f"| operations completed | **{s['operations']}** ({s['ops_per_s']}/s) |",
        f"| latency p50 / p99 / max (all calls, retries included) | {s['p50_ms']} ms / "
        f"{s['p99_ms']} ms / {s['max_ms']} ms |",
        *(
            f"| {lang} agents p50 / p99 | {v['p50_ms']} ms / {v['p99_ms']} ms |"
            for lang, v in s["by_lang"].items()
        ),
        f"| state checks (after each restart and at the end, per agent) | {s['checks']} |",
        f"| **state lost** | **{s['state_lost']}** |",
        f"| errors | {sum(s['errors'].values())} |",
        f"| daemon restart (kill -9 → SERVING) | "
        f"{', '.join(str(e['down_s']) for e in s['events'])} s |",
        f"| daemon VmRSS first / max / last | {s['rss_mib_first']} / {s['rss_mib_max']} / "
        f"{s['rss_mib_last']} MiB |",
        "",
        "Errors by kind (RPC, code, reason or client classification):",
        "",
        "| error | count |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in s["errors"].items()),
        *(["| (none) | 0 |"] if not s["errors"] else []),
        "",
        "Per RPC:",
        "",
        "| RPC | calls | p50 ms | p99 ms |",
        "|---|---|---|---|",
        *(
            f"| {m} | {v['ops']} | {v['p50_ms']} | {v['p99_ms']} |"
            for m, v in s["by_method"].items()
        ),
        "",
        "![daemon RSS over the soak run](bench/soak.png)",
        END,
    ]
    block = "\n".join(lines)
    text = DOC.read_text() if DOC.exists() else f"# Reliability\n\n{BEGIN}\n{END}\n"
    if BEGIN not in text:
        text += f"\n{BEGIN}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(head + block + tail)


if __name__ == "__main__":
    sys.exit(main())
