"""`make soak` (`python -m bench.soak`): the soak run of docs/reliability.md.

One daemon on a Unix socket and loopback TCP in a fresh /tmp directory (its own state dir, its
log file, a session-start hook), 8 agent processes (SOAK_PYTHON_AGENTS Python ones,
bench/soak/agent.py, and SOAK_GO_AGENTS Go ones, clients/go/cmd/soak-agent) each running a mixed
workload on its own session. Two phases:

1. The hostile run (SOAK_HOSTILE=0, `make soak HOSTILE=0`, skips it): bench/soak/hostile.py
   sends every input of issue 11 and issue 37's transcripts (ImportTranscript, replay, eval) at
   full size while the agents work and a pinger calls GetServerInfo every 100 ms; it is bounded
   by SOAK_HOSTILE_SECONDS (default 420); SOAK_HOSTILE_ONLY=import,replay (names or prefixes of
   its attacks) runs only those, and the docs are not rewritten then.
2. SOAK_SECONDS (default 120) in which the daemon is killed with SIGKILL SOAK_KILLS times
   (default 5) at evenly spaced moments and restarted on the same socket and state dir; once the
   new daemon serves, the epoch file changes and every agent checks that nothing it was told is
   stored was lost. With the hostile run, transcripts are imported meanwhile (bench/soak/imports.py
   `beside`): each acknowledged one must be there at the end, no refused one.

The VmRSS of the daemon and its child processes (transcript parsers, hooks) is sampled every
0.5 s; the run fails past RSS_BOUND_MIB, a hostile run's worst ping past PING_BOUND_S, a lost
expectation or import, or a transcript parser left running after its daemon. Results:
docs/reliability.md (the sections between the markers; PostgreSQL's its own) and
docs/bench/soak.png; the raw numbers in bench/out/soak.json (soak-postgresql.json).

Everything is bounded: the agents stop by themselves after SOAK_SECONDS, the orchestrator kills
any that is still running SOAK_SECONDS + 60 s later, and the daemon is stopped at the end.
"""

from __future__ import annotations

import contextlib
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
HOSTILE_BEGIN, HOSTILE_END = "<!-- hostile:begin -->", "<!-- hostile:end -->"
# The session-start hook every Compact runs (the hostile run's 300 previews run it too).
HOOK = '[[hooks.session_start]]\ncommand = "true"\ntimeout_s = 10\n'
# Extra `serve` arguments, e.g. SOAK_DAEMON_ARGS=--no-persist for a negative control (then state
# is lost at every kill, and the run must say so; the docs are not rewritten).
EXTRA = os.environ.get("SOAK_DAEMON_ARGS", "").split()
# A partial hostile run (SOAK_HOSTILE_ONLY) rewrites no docs either.
NO_DOCS = bool(EXTRA) or bool(os.environ.get("SOAK_HOSTILE_ONLY"))
# SOAK_STORE=postgresql (`make soak STORE=postgresql`): the daemon's state in a throwaway
# PostgreSQL cluster (tests/pg_cluster.py, with fsync on) instead of its SQLite file; the docs are
# not rewritten, the numbers go to bench/out/soak-postgresql.json.
STORE = os.environ.get("SOAK_STORE", "") or "sqlite"
RAW_POSTGRES = REPO / "bench" / "out" / "soak-postgresql.json"
PG_BEGIN, PG_END = "<!-- soak-postgresql:begin -->", "<!-- soak-postgresql:end -->"
# What docs/reliability.md promises, checked (the run fails past either): the peak RSS of the
# daemon and its child processes (the transcript parsers, hooks) over the whole run, and the
# worst ping of the hostile run.
RSS_BOUND_MIB = 1024
PING_BOUND_S = 1.0
TRANSCRIPT_ATTACKS = ("ImportTranscript", "replay")


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
            "POSTCOMPACT_LOG_LEVEL": "info",
        }
        (base / "run").mkdir(mode=0o700, exist_ok=True)
        cfg = base / "config" / "postcompact" / "config.toml"
        cfg.parent.mkdir(parents=True, exist_ok=True)
        cfg.write_text(HOOK)
        # As `postcompact start` does: the log in the state directory, rotated.
        self.log_file = base / "state" / "postcompact" / "daemon.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = open(base / "daemon.log", "ab")  # noqa: SIM115 (closed in stop)

    def start(self) -> float:
        """Start and wait for SERVING; returns the seconds it took."""
        t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [*self.serve_argv(), *EXTRA],
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

    def serve_argv(self) -> list[str]:
        socket, log_file = str(self.socket), str(self.log_file)
        return [sys.executable, "-m", "postcompact", "serve", "--socket", socket,
                "--tcp-port", "0", "--log-file", log_file]  # fmt: skip

    @property
    def server(self) -> dict[str, Any]:
        return dict(json.loads((self.socket.parent / "server.json").read_text()))

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(30)

    def rss_kib(self) -> tuple[int, int] | None:
        """(the daemon's VmRSS, its child processes' summed: the transcript parsers, hooks) in
        KiB; None when it is not running."""
        if self.proc is None or self.proc.poll() is not None:
            return None
        own = _vmrss_kib(self.proc.pid)
        if own is None:
            return None
        # A child not yet past its exec (a hook or parser being started) shares the daemon's
        # pages and reports its RSS: counted once, as the daemon's.
        mine = _cmdline(self.proc.pid)
        children = sum(_vmrss_kib(c) or 0 for c in _children(self.proc.pid) if _cmdline(c) != mine)
        return own, children


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _vmrss_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _children(pid: int) -> list[int]:
    """The child processes of `pid` (of any of its threads)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            out.extend(int(c) for c in task.read_text().split())
    return out


def parsers_of(base: Path) -> list[int]:
    """Transcript parser processes still running that a daemon of this run started (its
    environment names the run's directory): a killed daemon's must end by themselves."""
    out = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if b"parser_process" not in (proc / "cmdline").read_bytes():
                continue
            if str(base).encode() in (proc / "environ").read_bytes():
                out.append(int(proc.name))
    return out


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


class Pinger:
    """GetServerInfo every 100 ms on a channel of its own: the latency another client sees."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.samples: list[tuple[float, float, bool]] = []  # (t, seconds, answered)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from postcompact_client.v1 import postcompact_pb2 as pb
        from postcompact_client.v1 import postcompact_pb2_grpc as pb_grpc

        with grpc.insecure_channel(self.address) as ch:
            stub = pb_grpc.PostcompactServiceStub(ch)
            while not self.stop.wait(0.1):
                t0 = time.monotonic()
                try:
                    stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=30)
                    ok = True
                except grpc.RpcError:
                    ok = False
                self.samples.append((t0, time.monotonic() - t0, ok))

    def worst(self, start: float, end: float) -> tuple[float, int, int]:
        """(worst latency s, pings, failed) between monotonic times `start` and `end`."""
        window = [x for x in self.samples if start <= x[0] < end]
        return (
            max((lat for _, lat, _ in window), default=0.0),
            len(window),
            sum(1 for *_, ok in window if not ok),
        )


def run_hostile(daemon: Daemon, base: Path, budget: int) -> list[dict[str, Any]]:
    out = base / "hostile.json"
    server = daemon.server
    argv = [
        sys.executable, "-m", "bench.soak.hostile",
        "--address", daemon.address,
        "--tcp-port", str(server.get("tcp_port") or 0),
        "--token-file", server.get("token_file") or "",
        "--dir", str(base / "hostile"),
        "--log", str(daemon.log_file),
        "--out", str(out),
    ]  # fmt: skip
    with open(base / "hostile.log", "wb") as log:
        proc = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        try:
            proc.wait(budget)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    sys.stdout.write((base / "hostile.log").read_text(errors="replace")[-4000:])
    if not out.exists():
        return [{"attack": "the hostile run", "ok": False, "outcome": "left no result"}]
    results: list[dict[str, Any]] = json.loads(out.read_text())
    return results


def main() -> int:
    seconds = _env_int("SOAK_SECONDS", 120)
    kills = _env_int("SOAK_KILLS", 5)
    n_py = _env_int("SOAK_PYTHON_AGENTS", 4)
    n_go = _env_int("SOAK_GO_AGENTS", 4)
    hostile_budget = _env_int("SOAK_HOSTILE_SECONDS", 420) if _env_int("SOAK_HOSTILE", 1) else 0
    if STORE not in ("sqlite", "postgresql"):
        print(f"soak: SOAK_STORE must be sqlite or postgresql, not {STORE!r}", file=sys.stderr)
        return 2
    cluster = None
    if STORE == "postgresql":
        from tests.pg_cluster import Cluster

        cluster = Cluster(fsync=True).start()
        EXTRA.extend(["--state-url", cluster.new_database("soak")])
        print(f"soak: state in PostgreSQL ({cluster.url('...')})")
    try:
        return _run(seconds, kills, n_py, n_go, hostile_budget)
    finally:
        if cluster is not None:
            cluster.stop()


def _run(seconds: int, kills: int, n_py: int, n_go: int, hostile_budget: int) -> int:
    base = Path(tempfile.mkdtemp(prefix="pcsoak-", dir="/tmp"))
    epoch_file = base / "epoch"
    epoch_file.write_text("0")
    daemon = Daemon(base)
    go_cmd = build_go_agent(base / "soak-agent") if n_go else []
    startup = daemon.start()
    print(f"soak: daemon up in {startup:.2f}s at {daemon.address}; {seconds}s, {kills} kills")

    rss: list[tuple[float, int]] = []  # the daemon's and its child processes'
    rss_daemon: list[int] = []  # the daemon's alone
    events: list[dict[str, Any]] = []
    stop_sampling = threading.Event()
    t_start = time.monotonic()

    def sample() -> None:
        while not stop_sampling.wait(0.5):
            v = daemon.rss_kib()
            if v is not None:
                rss.append((time.monotonic() - t_start, v[0] + v[1]))
                rss_daemon.append(v[0])

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    pinger = Pinger(daemon.address)
    pinger.thread.start()

    agents: list[tuple[str, subprocess.Popen[bytes], Path]] = []
    agent_seconds = seconds + hostile_budget
    for i in range(n_py + n_go):
        lang = "python" if i < n_py else "go"
        name = f"{lang[:2]}{i}"
        out = base / f"{name}.json"
        common = [
            "--address", daemon.address,
            "--name", name,
            "--dir", str(base / "projects" / name),
            "--seconds", str(agent_seconds),
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

    # Phase 1: the hostile run, no kills.
    hostile: list[dict[str, Any]] = []
    hostile_window = (t_start, t_start)
    if hostile_budget:
        h0 = time.monotonic()
        print(f"soak: hostile run (at most {hostile_budget}s)")
        hostile = run_hostile(daemon, base, hostile_budget)
        hostile_window = (h0, time.monotonic())
    # Phase 2: kill -9 at evenly spaced moments of the remaining SOAK_SECONDS, restart at once;
    # with the hostile run, transcripts imported meanwhile (bench/soak/imports.py, `beside`).
    p2 = time.monotonic() - t_start
    remaining = max(10.0, agent_seconds - p2)
    beside = None
    if hostile_budget:
        (base / "imports").mkdir()
        beside = subprocess.Popen(
            [sys.executable, "-m", "bench.soak.imports", "--beside", daemon.address,
             "--seconds", str(max(5.0, remaining - 10)), "--cwd", str(base / "imports"),
             "--out", str(base / "imports.json")],
            cwd=REPO, stdin=subprocess.DEVNULL,
            stdout=open(base / "imports.log", "wb"), stderr=subprocess.STDOUT,  # noqa: SIM115
        )  # fmt: skip
    kill_windows = []
    for k in range(1, kills + 1):
        at = p2 + remaining * (0.1 + 0.8 * k / (kills + 1))
        time.sleep(max(0.0, at - (time.monotonic() - t_start)))
        t_kill = time.monotonic() - t_start
        k0 = time.monotonic()
        daemon.kill(signal.SIGKILL)
        took = daemon.start()
        kill_windows.append((k0, time.monotonic()))
        (base / "epoch.tmp").write_text(str(k))
        os.replace(base / "epoch.tmp", epoch_file)  # atomic: agents never read a partial epoch
        events.append({"kill": k, "at_s": round(t_kill, 2), "down_s": round(took, 3)})
        print(f"soak: kill -9 #{k} at {t_kill:.1f}s, serving again after {took:.2f}s")

    hard_deadline = time.monotonic() + agent_seconds + 60
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
    imported = check_imports(daemon, base, beside)
    wall = time.monotonic() - t_start
    stop_sampling.set()
    sampler.join()
    pinger.stop.set()
    pinger.thread.join()
    last = daemon.rss_kib()
    final_rss = None if last is None else sum(last)
    daemon.kill(signal.SIGTERM)
    daemon.log.close()
    deadline = time.monotonic() + 30
    while parsers_of(base) and time.monotonic() < deadline:
        time.sleep(0.2)
    parsers_left = parsers_of(base)
    for pid in parsers_left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)

    summary = summarise(results, rss, events, wall, seconds, kills, startup, final_rss)
    summary["rss_mib_max_daemon"] = round(max(rss_daemon, default=0) / 1024, 1)
    summary["rss_bound_mib"] = RSS_BOUND_MIB
    summary["rss_ok"] = (summary["rss_mib_max"] or 0) <= RSS_BOUND_MIB
    summary["imports"] = imported
    summary["parsers_left"] = len(parsers_left)
    for r in hostile:
        if "t0" in r:
            r["worst_ping_s"] = round(pinger.worst(r.pop("t0"), r.pop("t1"))[0], 3)
    worst, pings, failed = pinger.worst(*hostile_window)
    h_rss = [v for t, v in rss if hostile_window[0] - t_start <= t < hostile_window[1] - t_start]
    # Issue 37's inputs (the transcripts through ImportTranscript, replay and eval).
    transcripts = [r["worst_ping_s"] for r in hostile if r["attack"].startswith(TRANSCRIPT_ATTACKS)]
    worst_transcripts = max(transcripts, default=0.0)
    # On PostgreSQL the store's round trips run on the event loop (docs/fleet.md): past the
    # bound there, only the transcripts' part is held to it (the rest is reported).
    held = worst_transcripts if STORE == "postgresql" else worst
    summary["hostile"] = {
        "results": hostile,
        "seconds": round(hostile_window[1] - hostile_window[0], 1),
        "worst_ping_s": round(worst, 3),
        "transcripts_worst_ping_s": round(worst_transcripts, 3),
        "ping_ok": held <= PING_BOUND_S,
        "pings": pings,
        "pings_failed": failed,
        "rss_mib_max": round(max(h_rss, default=0) / 1024, 1),
        "rss_bound_mib": RSS_BOUND_MIB,
        "all_ok": all(r["ok"] for r in hostile),
    }
    outside_kills = [x for x in pinger.samples if not any(a <= x[0] < b for a, b in kill_windows)]
    summary["worst_ping_s"] = round(max((x[1] for x in outside_kills), default=0.0), 3)
    summary["store"] = STORE
    if STORE == "postgresql":
        RAW_POSTGRES.parent.mkdir(parents=True, exist_ok=True)
        RAW_POSTGRES.write_text(json.dumps({**summary, "rss": rss}, indent=1))
        if not NO_DOCS:
            write_postgres_doc(summary)
    elif not NO_DOCS:
        RAW.parent.mkdir(parents=True, exist_ok=True)
        RAW.write_text(json.dumps({**summary, "rss": rss}, indent=1))
        plot(rss, events, summary)
        write_doc(summary)
        if hostile:
            write_hostile_doc(summary["hostile"])
    print(json.dumps({k: v for k, v in summary.items() if k != "per_agent"}, indent=1))
    shutil.rmtree(base, ignore_errors=True)
    failures = verdict(summary, bool(hostile))
    for f in failures:
        print(f"soak: FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


def verdict(s: dict[str, Any], hostile: bool) -> list[str]:
    """What the run broke of docs/reliability.md's promises (nothing: it passed)."""
    out = []
    if s["state_lost"]:
        out.append(f"{s['state_lost']} expectations of the agents lost")
    if s["agents_failed"]:
        out.append(f"agents without a result: {s['agents_failed']}")
    if not s["rss_ok"]:
        out.append(f"peak RSS {s['rss_mib_max']} MiB, over the bound of {RSS_BOUND_MIB} MiB")
    if s["parsers_left"]:
        out.append(f"{s['parsers_left']} transcript parser processes outlived their daemon")
    imported = s["imports"]
    if imported.get("lost") or imported.get("kept_refused") or imported.get("unexpected"):
        out.append(f"imports beside the kills: {imported}")
    if hostile:
        h = s["hostile"]
        if not h["all_ok"]:
            out.append("the hostile run: an answer not as documented")
        if not h["ping_ok"]:
            worst = (
                h["transcripts_worst_ping_s"] if s["store"] == "postgresql" else h["worst_ping_s"]
            )
            out.append(f"the hostile run: worst ping {worst} s, over {PING_BOUND_S} s")
    return out


def check_imports(
    daemon: Daemon, base: Path, beside: subprocess.Popen[bytes] | None
) -> dict[str, Any]:
    """The imports made beside the kills (bench/soak/imports.py `beside`), against the daemon
    as it serves now: each acknowledged session is there, none of a refused import is."""
    if beside is None:
        return {}
    try:
        beside.wait(120)
    except subprocess.TimeoutExpired:
        beside.kill()
        beside.wait()
    out = base / "imports.json"
    if not out.exists():
        return {"unexpected": ["the importer left no result (see imports.log)"]}
    done = json.loads(out.read_text())
    from postcompact_client import Client

    client = Client(daemon.address, auto_start=False, timeout=60)
    try:
        listed = {s.session_id for s in client.list_sessions()}
    finally:
        client.close()
    return {
        "acknowledged": len(done["acknowledged"]),
        "refused": len(done["refused"]),
        "failed": done["failed"],
        "unexpected": done["unexpected"],
        "lost": sorted(set(done["acknowledged"]) - listed),
        "kept_refused": sorted(set(done["refused"]) & listed),
    }


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
    h = s.get("hostile") or {}
    if h.get("seconds"):
        ax.axvspan(0, h["seconds"], color="orange", alpha=0.12, label="hostile run")
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


def _replace_block(begin: str, end: str, block: str) -> None:
    text = DOC.read_text() if DOC.exists() else f"# Reliability\n\n{begin}\n{end}\n"
    if begin not in text:
        text += f"\n{begin}\n{end}\n"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    DOC.write_text(head + block + tail)


def write_hostile_doc(h: dict[str, Any]) -> None:
    _replace_block(
        HOSTILE_BEGIN, HOSTILE_END, "\n".join(hostile_lines(h, HOSTILE_BEGIN, HOSTILE_END))
    )


def hostile_lines(h: dict[str, Any], begin: str, end: str) -> list[str]:
    return [
        begin,
        f"Last run: {time.strftime('%Y-%m-%d %H:%M', time.localtime())}, {os.cpu_count()} CPUs, "
        f"{h['seconds']} s, as {'root' if os.geteuid() == 0 else 'a user'}, while the 8 agents "
        "worked.",
        "",
        "| | |",
        "|---|---|",
        f"| **worst ping** (GetServerInfo every 100 ms on its own channel; at most "
        f"{PING_BOUND_S:g} s) | **{h['worst_ping_s']} s** over {h['pings']} pings, "
        f"{h['pings_failed']} failed |",
        f"| **peak RSS**, the daemon's and its child processes' (at most {h['rss_bound_mib']} "
        f"MiB) | **{h['rss_mib_max']} MiB** |",
        f"| every answer as documented | {'yes' if h['all_ok'] else '**no**'} |",
        "",
        "| input | as documented | what the daemon answered | s | worst ping s |",
        "|---|---|---|---|---|",
        *(
            f"| {r['attack']} | {'yes' if r['ok'] else '**no**'} | "
            f"{str(r['outcome']).replace('|', '/')} | {r.get('seconds', '')} | "
            f"{r.get('worst_ping_s', '')} |"
            for r in h["results"]
        ),
        end,
    ]


def summary_lines(s: dict[str, Any]) -> list[str]:
    """The table rows of RSS, imports and the worst ping (both stores' sections)."""
    imported = s.get("imports") or {}
    rows = [
        f"| VmRSS, the daemon's and its child processes', first / max / last (**at most "
        f"{s['rss_bound_mib']} MiB**) | {s['rss_mib_first']} / **{s['rss_mib_max']}** / "
        f"{s['rss_mib_last']} MiB (the daemon alone at most {s['rss_mib_max_daemon']} MiB) |",
        f"| worst ping outside the kills (GetServerInfo every 100 ms) | {s['worst_ping_s']} s |",
    ]
    if imported:
        failed = sum(imported["failed"].values())
        rows.append(
            f"| transcripts imported beside the kills | {imported['acknowledged']} acknowledged, "
            f"**{len(imported['lost'])} lost**; {imported['refused']} refused "
            f"(TRANSCRIPT_TOO_LARGE), {len(imported['kept_refused'])} kept; {failed} caught by "
            f"a kill (not acknowledged) |"
        )
    rows.append(f"| transcript parsers left running after the daemons | {s['parsers_left']} |")
    return rows


def write_postgres_doc(s: dict[str, Any]) -> None:
    """docs/reliability.md's section of the PostgreSQL run (`make soak STORE=postgresql`)."""
    h = s.get("hostile") or {}
    errors = ", ".join(f"{k} {v}" for k, v in s["errors"].items())
    lines = [
        PG_BEGIN,
        f"Last run: {time.strftime('%Y-%m-%d %H:%M', time.localtime())}, "
        f"{os.cpu_count()} CPUs; the state in a throwaway PostgreSQL cluster (`fsync=on`); "
        f"{s['agents']} agents, {s['seconds']} s, {s['kills']} kills (-9)"
        + (f", after the hostile run ({h['seconds']} s)." if h else "."),
        "",
        "| | |",
        "|---|---|",
        f"| operations completed | **{s['operations']}** ({s['ops_per_s']}/s) |",
        f"| latency p50 / p99 / max (all calls, retries included) | {s['p50_ms']} ms / "
        f"{s['p99_ms']} ms / {s['max_ms']} ms |",
        f"| state checks / **state lost** | {s['checks']} / **{s['state_lost']}** |",
        f"| errors | {sum(s['errors'].values())} ({errors or 'none'}) |",
        f"| daemon restart (kill -9 → SERVING) | "
        f"{', '.join(str(e['down_s']) for e in s['events'])} s |",
        *summary_lines(s),
    ]
    if h:
        lines += [
            f"| hostile run: worst ping | {h['worst_ping_s']} s over {h['pings']} pings, "
            f"{h['pings_failed']} failed |",
            f"| hostile run: worst ping during issue 37's transcripts (at most {PING_BOUND_S:g} s) "
            f"| **{h['transcripts_worst_ping_s']} s** |",
            f"| hostile run: peak RSS | {h['rss_mib_max']} MiB |",
            f"| hostile run: every answer as documented | {'yes' if h['all_ok'] else '**no**'} |",
            "",
            "| input | as documented | what the daemon answered | s | worst ping s |",
            "|---|---|---|---|---|",
            *(
                f"| {r['attack']} | {'yes' if r['ok'] else '**no**'} | "
                f"{str(r['outcome']).replace('|', '/')} | {r.get('seconds', '')} | "
                f"{r.get('worst_ping_s', '')} |"
                for r in h["results"]
            ),
        ]
    lines.append(PG_END)
    _replace_block(PG_BEGIN, PG_END, "\n".join(lines))


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
        *summary_lines(s),
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
    _replace_block(BEGIN, END, "\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
