"""B7: many agents on one daemon, and whether the daemon should use more than one core.

1, 8, 32 and 128 agents against one daemon (a fresh one per step: default configuration, state
persisted, pinned to CPU 0 as in the other benchmarks). The driver is clients/go/cmd/fleet: every
agent is a goroutine of one Go process (GOMAXPROCS=1, pinned to CPU 1) with its own connection
and its own session, doing a coding agent's mix back to back with no think time: ReadFile of the
shared project's files (whole, 2-48 KB, or a 200-line range of a ~160 KB file), RecordRead of a
file it read itself, edits of its own files (CheckWrite, the write, RecordWrite; a ReadFile
first when the check asks for one), RecordSkill now and then, SetCatalog and PreviewCompact
rarely, and a Compact every 40th operation. Each step is measured over a fixed window after a
warm-up; a call counts when it completes inside the window. The daemon's CPU is its
utime+stime over the window (/proc/PID/stat, and per thread from /proc/PID/task: the event
loop is the main thread, the worker pool is the threads at the workers' nice level, the rest
are gRPC's own), its RSS is VmRSS sampled every 0.2 s; the driver reports its own CPU
(getrusage).

Then, for the multi-core decision: the 32-agent step again under py-spy (`record --native`,
100 Hz, pinned beside the driver) for where the loop thread's busy time goes — how much of it
is in Rust core calls that release the GIL (`py.detach`), in the SQLite library and in hashing,
which also release it, and how much holds the GIL (Python, protobuf, grpc.aio's Cython glue,
the core's own argument conversion) — and per RPC; then Amdahl's law over the GIL-free share.
And at 128 agents, alternating rounds of: the daemon on one core; on both cores; on both cores
with every file read, numbering and rendering of ReadFile and Compact moved to the worker pool
(bench/_b7_offload.py); and two daemons, one per core, the agents split between them (sessions
sharded by process). The driver stays on CPU 1 throughout.

Then on PostgreSQL: the 1, 8, 32 and 128-agent steps again with the daemon's state in a
PostgreSQL database (`--state-url`, a fresh database per step; the server is bench/_pg.py's, a
throwaway cluster with fsync=on pinned to CPU 1 beside the driver, or BENCH_PG_URL's), and the
lock experiment of issue 39 (bench/_b7_lock.py): 8 agents on PostgreSQL, three rounds each of a
run without and a run with another database session holding `LOCK TABLE files IN ACCESS
EXCLUSIVE MODE` for 5 s, 5 s into a 15 s window, while a GetServerInfo ping goes every 20 ms on
its own connection, open loop (each ping sent on schedule and timed from then, answered or not).
The pings' p99 over the lock window, against the same window of the run without the lock, is
the figure: the target is at most 1.2x.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from postcompact.v1 import postcompact_pb2 as pb
from postcompact.v1 import postcompact_pb2_grpc as pbg
from postcompact.workers import WORKER_NICE

from bench import _measure as m
from bench._b7_lock import (
    LOCK_AT,
    LOCK_MODE,
    LOCK_SECONDS,
    LOCK_TABLE,
    LOCK_WINDOW,
    PING_EVERY,
    LockWindow,
    TableLock,
)
from bench._daemon import running_daemon
from bench._pg import PgServer, PgUnavailable, pg_server
from bench.report import PLOTS, ROOT, Section, Table, verdict

AGENTS = (1, 8, 32, 128)
LOCK_AGENTS = 8  # the lock experiment's agents (on PostgreSQL)
LOCK_ROUNDS = 3
LOCK_TARGET = 1.2  # the pings' p99 over the lock window, over the same window without the lock
PROFILE_AGENTS = 32
EXPERIMENT_AGENTS = 128
RPCS = (
    "ReadFile",
    "RecordRead",
    "CheckWrite",
    "RecordWrite",
    "RecordSkill",
    "SetCatalog",
    "PreviewCompact",
    "Compact",
)
BIN = ROOT / "bench" / "out" / "bin"
PLOT_LOAD = "b7_agents.png"
PLOT_CPU = "b7_cpu.png"
GROUPS = ("loop", "gRPC", "workers")
ONE_CORE = str(m.SERVER_CPU)
TWO_CORES = f"{m.SERVER_CPU},{m.CLIENT_CPU}"
# (label, each daemon's CPUs, the daemon's module)
EXPERIMENTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("one daemon, one core (CPU 0)", (ONE_CORE,), "postcompact"),
    ("one daemon, two cores", (TWO_CORES,), "postcompact"),
    ("one daemon, two cores, reads on the pool", (TWO_CORES,), "bench._b7_offload"),
    ("two daemons, one per core (agents split)", (ONE_CORE, str(m.CLIENT_CPU)), "postcompact"),
)
# Rust core modules whose Python entry points run in `py.detach` (rust_core/src/py): a sample
# under one of them is GIL-free work on the loop thread.
_CORE_FREE = re.compile(r"^_core::(diskread|textops|fsutil|tokens)::")
_PY_FRAME = re.compile(r"\((\S+?\.py|<frozen [^>]+>):\d+\)$")
_RPC_FRAME = re.compile(r"^Servicer\.(\w+) \(postcompact/server\.py")
# py-spy's categories of a loop-thread sample, and whether that work holds the GIL.
CATEGORIES: dict[str, bool] = {
    "Rust core, GIL released (reads, numbering, realpath, token counts)": False,
    "SQLite sqlite3_step (write-through commits; GIL released)": False,
    "SHA-256 of contents (hashlib; GIL released)": False,
    "epoll_wait (the loop's poll; GIL released)": False,
    "Rust core, GIL held (cache, argument conversion)": True,
    "SQLite, GIL held (binding parameters)": True,
    "protobuf (upb)": True,
    "gRPC aio (Cython, C-core glue)": True,
    "asyncio scheduling": True,
    "postcompact Python (handlers, pipeline, rendering, store)": True,
}


# --- the driver ----------------------------------------------------------------------------------


def _go() -> str | None:
    return shutil.which("go") or next(
        (p for p in ("/usr/local/go/bin/go",) if os.access(p, os.X_OK)), None
    )


def build_fleet() -> tuple[Path | None, str]:
    """clients/go/cmd/fleet built into bench/out/bin, or None and why not."""
    go = _go()
    if go is None:
        return None, "no Go toolchain (go on PATH or /usr/local/go/bin/go)"
    exe = BIN / "fleet"
    try:
        p = subprocess.run(
            [go, "build", "-o", str(exe), "./cmd/fleet"],
            cwd=ROOT / "clients" / "go",
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"go build: {e}"
    if p.returncode != 0:
        return None, f"go build exited {p.returncode}: {(p.stdout + p.stderr)[-600:]}"
    return exe, ""


def _py_spy() -> str | None:
    found = shutil.which("py-spy")
    local = Path(sys.executable).parent / "py-spy"
    return found or (str(local) if local.exists() else None)


# --- the daemon's process, from /proc ------------------------------------------------------------


def thread_cpu(pid: int) -> dict[int, tuple[str, float]]:
    """Each thread of `pid`: its group (the event loop is the main thread, the workers run at
    WORKER_NICE, gRPC's own threads are the rest) and its CPU seconds so far."""
    out: dict[int, tuple[str, float]] = {}
    for name in os.listdir(f"/proc/{pid}/task"):
        tid = int(name)
        try:
            fields = m.proc_stat(f"/proc/{pid}/task/{tid}/stat")
        except OSError:  # exited meanwhile
            continue
        group = "loop" if tid == pid else "workers" if int(fields[16]) == WORKER_NICE else "gRPC"
        out[tid] = (group, m.stat_cpu_s(fields))
    return out


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Snapshot:
    """The daemons' CPU seconds so far, in all and per (pid, tid)."""

    wall: float
    cpu: float
    threads: dict[tuple[int, int], tuple[str, float]]

    @classmethod
    def take(cls, pids: Sequence[int]) -> Snapshot:
        threads = {
            (pid, tid): v for pid in pids for tid, v in thread_cpu(pid).items()
        }  # fmt: skip
        cpu = sum(m.process_cpu_s(pid) for pid in pids)
        return cls(time.perf_counter(), cpu, threads)


class RssSampler:
    """VmRSS of `pids` every `interval` seconds, from `start()` to `stop()`."""

    def __init__(self, pids: Sequence[int], interval: float = 0.2) -> None:
        self.pids, self.interval = list(pids), interval
        self.samples: list[float] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.samples.append(sum(rss_mib(pid) for pid in self.pids))

    def _run(self) -> None:
        while True:
            self._sample()
            if self._done.wait(self.interval):
                return

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join()
        self._sample()  # the end of the window

    def totals(self) -> list[float]:
        return self.samples


# --- one step ------------------------------------------------------------------------------------


@dataclass
class Rpc:
    calls: int
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int


@dataclass
class Step:
    label: str
    agents: int
    seconds: float
    rps: float
    rpcs: dict[str, Rpc]
    errors: dict[str, int]
    daemon_cpu: float  # core-seconds per second over the window
    group_cpu: dict[str, float]  # the same per thread group
    rss_start: float  # MiB, before the driver started
    rss_peak: float
    rss_end: float
    driver_cpu: float  # core-seconds per second
    project: str
    profile: Path | None = None
    spy_note: str = ""


def _daemon_pid(address: str) -> int:
    with grpc.insecure_channel(address) as ch:
        pid: int = pbg.PostcompactServiceStub(ch).GetServerInfo(pb.GetServerInfoRequest()).pid
        return pid


def run_step(
    exe: Path,
    agents: int,
    seconds: float,
    warmup: float,
    *,
    label: str = "",
    cpus: Sequence[str] = (ONE_CORE,),
    module: str = "postcompact",
    spy: Sequence[str] = (),
    spy_out: Path | None = None,
    state_url: str | None = None,
    during: Callable[[Sequence[str]], contextlib.AbstractContextManager[object]] | None = None,
    extra_args: Sequence[str] = (),
) -> Step:
    """`agents` agents for `seconds` after `warmup`, against one daemon per entry of `cpus` (its
    CPU list; with several, agent i uses daemon i mod N); with `spy`, py-spy's flags, the window
    of the first daemon recorded into `spy_out` (raw, collapsed stacks). With `state_url`, the
    (one) daemon keeps its state there (a PostgreSQL database) instead of its own SQLite file;
    with `during`, what it returns for the daemons' addresses is entered when the measured
    window opens and left when it closes; `extra_args`, more of `serve`'s flags (B10: the
    server implementation)."""
    extra = (*(("--state-url", state_url) if state_url else ()), *extra_args)
    with m.short_tmpdir() as tmp, contextlib.ExitStack() as stack:
        addresses, pids = [], []
        for i, cpu in enumerate(cpus):
            home = tmp / f"daemon{i}"
            home.mkdir(mode=0o700)
            d = stack.enter_context(running_daemon(home, module=module, cpus=cpu, extra_args=extra))
            addresses.append(d.address)
            pids.append(_daemon_pid(d.address))
        rss_start = sum(rss_mib(pid) for pid in pids)
        argv = [
            *("taskset", "-c", str(m.CLIENT_CPU), str(exe)),
            *("-address", ",".join(addresses), "-project", str(tmp / "project")),
            *("-agents", str(agents), "-seconds", str(seconds), "-warmup", str(warmup)),
        ]
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "GOMAXPROCS": "1"},
        )
        watchdog = threading.Timer(seconds + warmup + 300, proc.kill)
        watchdog.start()
        sampler = RssSampler(pids)
        spy_proc: subprocess.Popen[str] | None = None
        before = after = None
        out: dict[str, object] = {}
        note = ""
        window = stack.enter_context(contextlib.ExitStack())
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                msg = json.loads(line)
                if msg.get("event") == "start":
                    before = Snapshot.take(pids)
                    sampler.start()
                    spy_proc = _start_spy(pids[0], spy, spy_out, seconds)
                    if during is not None:
                        window.enter_context(during(addresses))
                elif msg.get("event") == "stop":
                    after = Snapshot.take(pids)
                    sampler.stop()
                    window.close()
                else:
                    out = msg
            err = proc.stderr.read() if proc.stderr else ""
            if proc.wait() != 0 or before is None or after is None or not out:
                raise RuntimeError(f"fleet -agents {agents} exited {proc.returncode}: {err[-600:]}")
            if spy_proc is not None:
                _, spy_err = spy_proc.communicate(timeout=seconds + 60)
                if spy_proc.returncode != 0:
                    raise RuntimeError(f"py-spy exited {spy_proc.returncode}: {spy_err[-400:]}")
                note = "; ".join(ln for ln in spy_err.splitlines() if "behind" in ln)[:200]
        finally:
            watchdog.cancel()
            if proc.poll() is None:
                proc.kill()
            if spy_proc is not None and spy_proc.poll() is None:
                spy_proc.kill()
    return _step(label or f"{agents} agents", agents, out, before, after, sampler, rss_start, note)


def _start_spy(
    pid: int, flags: Sequence[str], out: Path | None, seconds: float
) -> subprocess.Popen[str] | None:
    if not flags or out is None:
        return None
    spy = _py_spy()
    if spy is None:
        raise RuntimeError("py-spy is not installed (requirements/bench.txt)")
    argv = [
        *("taskset", "-c", str(m.CLIENT_CPU), spy, "record", "--pid", str(pid)),
        *("--duration", str(max(1, int(seconds) - 1)), "--format", "raw", "-o", str(out)),
        *("--threads", *flags),
    ]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _step(
    label: str,
    agents: int,
    out: dict[str, object],
    before: Snapshot,
    after: Snapshot,
    sampler: RssSampler,
    rss_start: float,
    spy_note: str,
) -> Step:
    wall = after.wall - before.wall
    groups = dict.fromkeys(GROUPS, 0.0)
    for tid, (group, cpu) in after.threads.items():
        groups[group] += cpu - before.threads.get(tid, (group, 0.0))[1]
    rpcs = {name: _rpc(r) for name, r in _dict(out["rpcs"]).items()}
    secs = _num(out["seconds"])
    rss = sampler.totals() or [float("nan")]
    files, size = out.get("project_files"), out.get("project_bytes")
    return Step(
        label=label,
        agents=agents,
        seconds=secs,
        rps=_num(out["rps"]),
        rpcs=rpcs,
        errors={str(k): int(_num(v)) for k, v in _dict(out.get("errors") or {}).items()},
        daemon_cpu=(after.cpu - before.cpu) / wall,
        group_cpu={g: v / wall for g, v in groups.items()},
        rss_start=rss_start,
        rss_peak=max(rss),
        rss_end=rss[-1],
        driver_cpu=(_num(out["cpu_user_s"]) + _num(out["cpu_sys_s"])) / secs,
        project=f"{files} files, {_num(size) / 2**20:.1f} MiB" if files and size else "",
        spy_note=spy_note,
    )


def _dict(v: object) -> dict[str, object]:
    assert isinstance(v, dict)
    return v


def _num(v: object) -> float:
    assert isinstance(v, int | float)
    return float(v)


def _rpc(v: object) -> Rpc:
    r = _dict(v)
    return Rpc(
        int(_num(r["calls"])),
        _num(r["rps"]),
        _num(r["p50_us"]) / 1e3,
        _num(r["p99_us"]) / 1e3,
        int(_num(r["errors"])),
    )


# --- the profiles --------------------------------------------------------------------------------


def raw_stacks(path: Path) -> Iterator[tuple[list[str], int]]:
    """py-spy's raw output: one `frame;frame;... count` line per distinct stack, root first
    (with --threads, the first frame names the thread)."""
    with open(path) as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if stack and count.isdigit():
                yield stack.split(";"), int(count)


def _main_thread(frames: Sequence[str]) -> bool:
    return bool(frames) and frames[0].endswith("MainThread")


def category(frames: Sequence[str]) -> str:
    """What a loop-thread sample (root first) was doing, as one of CATEGORIES."""
    core = [f for f in frames if "(postcompact/_core.abi3.so)" in f]
    if any(_CORE_FREE.match(f) for f in core):
        return "Rust core, GIL released (reads, numbering, realpath, token counts)"
    if any(f.startswith("stmt_step ") for f in frames):  # CPython's sqlite3_step, GIL released
        return "SQLite sqlite3_step (write-through commits; GIL released)"
    if any("(libcrypto" in f for f in frames):
        return "SHA-256 of contents (hashlib; GIL released)"
    if core:  # also the core's own code inlined into a binding: counted as holding the GIL
        return "Rust core, GIL held (cache, argument conversion)"
    if any("(libsqlite3" in f for f in frames):
        return "SQLite, GIL held (binding parameters)"
    if any("_message.abi3.so" in f or "_upb" in f for f in frames):
        return "protobuf (upb)"
    py = [i for i, f in enumerate(frames) if _PY_FRAME.search(f)]
    last = py[-1] if py else -1
    if any("cygrpc" in f for f in frames[last + 1 :]):
        return "gRPC aio (Cython, C-core glue)"
    # Below the loop's own frames: every stack has postcompact's `serve` under the loop.
    turn = next((i for i, f in enumerate(frames) if f.startswith("BaseEventLoop._run_once")), -1)
    if any("(postcompact/" in f for f in frames[turn + 1 :]):
        return "postcompact Python (handlers, pipeline, rendering, store)"
    if any(f.startswith("select_epoll_poll_impl") for f in frames):
        return "epoll_wait (the loop's poll; GIL released)"
    return "asyncio scheduling"


def rpc_of(frames: Sequence[str]) -> str:
    """The RPC a sample was serving ('' outside the handlers)."""
    for f in frames:
        match = _RPC_FRAME.match(f)
        if match:
            return match.group(1)
    return ""


@dataclass
class Profile:
    samples: int = 0  # loop-thread samples
    by_category: Counter[str] = field(default_factory=Counter)
    by_rpc: Counter[str] = field(default_factory=Counter)
    free_by_rpc: Counter[str] = field(default_factory=Counter)

    @classmethod
    def read(cls, path: Path) -> Profile:
        p = cls()
        for frames, n in raw_stacks(path):
            if not _main_thread(frames):
                continue  # the workers wait on a lock py-spy counts as busy: /proc has their CPU
            p.samples += n
            cat = category(frames)
            rpc = rpc_of(frames)
            p.by_category[cat] += n
            p.by_rpc[rpc] += n
            if not CATEGORIES[cat]:
                p.free_by_rpc[rpc] += n
        return p

    def share(self, counter: Counter[str], key: str) -> float:
        return counter[key] / self.samples if self.samples else float("nan")

    @property
    def free(self) -> float:
        """The GIL-free share of the loop thread's busy time."""
        return sum(self.share(self.by_category, c) for c, held in CATEGORIES.items() if not held)


def amdahl(p: float, cores: int) -> float:
    return 1 / ((1 - p) + p / cores)


# --- measuring -----------------------------------------------------------------------------------


@dataclass
class Results:
    steps: list[Step] = field(default_factory=list)
    profile: Profile | None = None
    profile_step: Step | None = None
    experiments: dict[str, list[Step]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    pg_steps: list[Step] = field(default_factory=list)  # AGENTS again, the state in PostgreSQL
    locks: list[LockRun] = field(default_factory=list)  # the lock experiment's runs, in order
    pg_server: str = ""
    load: list[float] = field(default_factory=list)  # 1-minute load average, first and last


@dataclass
class LockRun:
    """One run of the lock experiment: LOCK_AGENTS agents on PostgreSQL, with the lock or not."""

    round: int
    window: LockWindow
    step: Step


def _log(msg: str) -> None:
    print(f"    b7: {msg}", file=sys.stderr, flush=True)


def measure(quick: bool) -> Results:
    res = Results(load=[os.getloadavg()[0]])
    exe, err = build_fleet()
    if exe is None:
        res.problems.append(f"driver not built — {err}")
        return res
    seconds, warmup = (5.0, 1.0) if quick else (15.0, 2.0)
    for n in AGENTS:
        try:
            res.steps.append(run_step(exe, n, seconds, warmup))
            _log(f"{n} agents: {res.steps[-1].rps:,.0f} RPC/s")
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            res.problems.append(f"{n} agents: {e}")
    with m.short_tmpdir() as tmp:
        if _py_spy() is None:
            res.problems.append("py-spy not installed: no profile (requirements/bench.txt)")
        else:
            try:
                native = tmp / "native.txt"
                res.profile_step = run_step(
                    exe,
                    PROFILE_AGENTS,
                    seconds,
                    warmup,
                    label=f"{PROFILE_AGENTS} agents under py-spy --native",
                    spy=("--native", "--rate", "100"),
                    spy_out=native,
                )
                res.profile = Profile.read(native)
                _log(f"profile: {res.profile.samples} loop samples")
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                res.problems.append(f"profile: {e}")
    rounds, exp_seconds = (1, 4.0) if quick else (5, 8.0)
    for r in range(rounds):
        # Alternating (A B C A B C ...): a burst of load from elsewhere on the VM lands on one
        # round, and each configuration's median round is kept.
        for label, cpus, module in EXPERIMENTS:
            try:
                st = run_step(
                    exe,
                    EXPERIMENT_AGENTS,
                    exp_seconds,
                    warmup,
                    label=label,
                    cpus=cpus,
                    module=module,
                )
                res.experiments.setdefault(label, []).append(st)
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                res.problems.append(f"{label}, round {r + 1}: {e}")
        _log(f"experiment round {r + 1}/{rounds} done")
    measure_postgres(exe, res, quick, seconds, warmup)
    res.load.append(os.getloadavg()[0])
    return res


def measure_postgres(exe: Path, res: Results, quick: bool, seconds: float, warmup: float) -> None:
    """The steps again with the daemon's state in PostgreSQL (a fresh database each), then the
    lock experiment: LOCK_AGENTS agents, alternating runs without and with a table locked
    (LOCK_ROUNDS rounds)."""
    try:
        with pg_server() as server:
            res.pg_server = server.description
            for n in AGENTS:
                try:
                    with _pg_database(server) as url:
                        res.pg_steps.append(run_step(exe, n, seconds, warmup, state_url=url))
                    _log(f"PostgreSQL, {n} agents: {res.pg_steps[-1].rps:,.0f} RPC/s")
                except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                    res.problems.append(f"PostgreSQL, {n} agents: {e}")
            for r in range(1 if quick else LOCK_ROUNDS):
                for locked in (False, True):
                    try:
                        res.locks.append(_lock_run(exe, server, r + 1, locked, warmup))
                    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
                        what = "with" if locked else "without"
                        res.problems.append(f"lock experiment, round {r + 1}, {what} the lock: {e}")
                _log(f"lock experiment round {r + 1} done")
    except PgUnavailable as e:
        res.problems.append(f"PostgreSQL not measured: {e}")


@contextlib.contextmanager
def _pg_database(server: PgServer) -> Iterator[str]:
    name = server.new_database("b7")
    try:
        yield server.url(name)
    finally:
        server.drop_database(name)


def _lock_run(exe: Path, server: PgServer, rnd: int, locked: bool, warmup: float) -> LockRun:
    with _pg_database(server) as url:
        window = LockWindow(locked, TableLock(url if locked else None))
        step = run_step(
            exe,
            LOCK_AGENTS,
            LOCK_WINDOW,
            warmup,
            label=f"{LOCK_AGENTS} agents, PostgreSQL, {'with' if locked else 'without'} the lock",
            state_url=url,
            during=window.during,
        )
    if window.lock.error:
        raise RuntimeError(window.lock.error)
    run = LockRun(rnd, window, step)
    p = window.pings()
    _log(
        f"lock experiment round {rnd}, {'with' if locked else 'without'} the lock: pings p99 "
        f"{p.p99_ms:.1f} ms, max {p.max_ms:.0f} ms; {sum(step.errors.values())} agent calls failed"
    )
    return run


def _median(steps: Sequence[Step]) -> Step:
    return sorted(steps, key=lambda s: s.rps)[len(steps) // 2]


# --- reporting -----------------------------------------------------------------------------------


def _steps_table(res: Results) -> Table:
    rows: list[Sequence[object]] = []
    for s in res.steps:
        rows.append(
            [
                s.agents,
                s.rps,
                s.daemon_cpu,
                s.group_cpu["loop"],
                s.group_cpu["gRPC"],
                s.group_cpu["workers"],
                f"{s.rss_start:.0f} / {s.rss_peak:.0f} / {s.rss_end:.0f}",
                s.driver_cpu,
                s.driver_cpu / s.rps * 1e6 if s.rps else float("nan"),
                sum(s.errors.values()),
            ]
        )
    return Table(
        "Per step: throughput, the daemon's CPU (core-seconds per second, by thread) and RSS, "
        "the driver's CPU",
        [
            "agents",
            "RPC/s",
            "daemon CPU",
            "event loop",
            "gRPC threads",
            "workers",
            "daemon RSS MiB start / peak / end",
            "driver CPU",
            "driver µs per RPC",
            "errors",
        ],
        rows,
    )


def _rpc_tables(res: Results) -> list[Table]:
    head = ["RPC", *(f"{s.agents} agents" for s in res.steps)]
    rps: list[Sequence[object]] = []
    lat: list[Sequence[object]] = []
    for name in RPCS:
        got = [s.rpcs.get(name) for s in res.steps]
        rps.append([name, *(r.rps if r else "—" for r in got)])
        lat.append([name, *(f"{r.p50_ms:.2f} / {r.p99_ms:.1f}" if r else "—" for r in got)])
    rps.append(["**all**", *(s.rps for s in res.steps)])
    return [
        Table("RPC/s per RPC", head, rps),
        Table("Latency per RPC, ms: p50 / p99 (as the driver sees it)", head, lat),
    ]


def _reference(res: Results) -> Step | None:
    """The unprofiled step with the profile's number of agents."""
    return next((s for s in res.steps if s.agents == PROFILE_AGENTS), None)


def _profile_tables(res: Results) -> list[Table]:
    p, ref = res.profile, _reference(res)
    if p is None or ref is None:
        return []
    cats = Table(
        f"Where the event loop's busy time goes ({PROFILE_AGENTS} agents, py-spy --native: "
        f"{p.samples:,} samples of the loop thread)",
        ["work", "share of loop samples", "holds the GIL"],
        [
            [c, f"{p.share(p.by_category, c):.1%}", "yes" if held else "no"]
            for c, held in sorted(CATEGORIES.items(), key=lambda kv: -p.by_category[kv[0]])
        ],
    )
    # The shares come from the profiled run (py-spy pauses the daemon to unwind, so it runs
    # slower); the CPU and the call rates from the unprofiled step of the same size.
    loop = ref.group_cpu["loop"]
    rows: list[Sequence[object]] = []
    for name in (*RPCS, ""):
        share = p.share(p.by_rpc, name)
        r = ref.rpcs.get(name)
        calls = (r.rps if r else 0.0) if name else ref.rps
        free = p.free_by_rpc[name] / p.by_rpc[name] if p.by_rpc[name] else float("nan")
        rows.append(
            [
                name
                or "outside the Servicer methods (gRPC aio, asyncio, request parsing, "
                "the wrappers), per call of any RPC",
                calls,
                f"{share:.1%}",
                share * loop / calls * 1e6 if calls else float("nan"),
                f"{free:.0%}",
            ]
        )
    per_rpc = Table(
        "Per RPC: its handlers' share of the loop's samples, the loop time per call (share x "
        f"the loop's CPU ÷ calls/s, of the unprofiled {PROFILE_AGENTS}-agent step) and the "
        "GIL-free part of it",
        ["RPC", "calls/s", "share of loop samples", "loop µs per call", "GIL-free"],
        rows,
    )
    return [cats, per_rpc]


@dataclass
class Decision:
    p: float  # the GIL-free share of the daemon's CPU (an upper bound)
    rows: list[Sequence[object]]


def _decision(res: Results) -> Decision | None:
    prof, ref = res.profile, _reference(res)
    if prof is None or ref is None or not ref.daemon_cpu:
        return None
    total, loop = ref.daemon_cpu, ref.group_cpu["loop"]
    others = total - loop
    # Everything off the loop thread counts as GIL-free: gRPC's C-core threads are, its
    # poller and the workers mostly are. An upper bound, so the gains below are too.
    p = min(1.0, (loop * prof.free + others) / total)
    rows: list[Sequence[object]] = [
        [f"daemon CPU, {PROFILE_AGENTS} agents (core-s/s)", total],
        ["of it the event-loop thread", loop],
        ["of it the other threads (gRPC's, the workers)", others],
        ["GIL-free share of the loop thread's busy time (profile)", f"{prof.free:.0%}"],
        ["GIL-free share of the daemon's CPU, p (other threads all counted)", f"{p:.0%}"],
        ["Amdahl, threads in one process, 2 cores: 1 / ((1 - p) + p/2)", f"{amdahl(p, 2):.2f}x"],
        ["Amdahl, threads in one process, 16 cores", f"{amdahl(p, 16):.2f}x"],
        ["any number of threads: 1 / (1 - p)", f"{1 / (1 - p):.2f}x" if p < 1 else "∞"],
    ]
    return Decision(p, rows)


def _experiment_table(res: Results) -> Table | None:
    if not res.experiments:
        return None
    base_steps = res.experiments.get(EXPERIMENTS[0][0])
    base = _median(base_steps) if base_steps else None
    rows: list[Sequence[object]] = []
    for label, _, _ in EXPERIMENTS:
        steps = res.experiments.get(label)
        if not steps:
            continue
        s = _median(steps)

        def lat(name: str, s: Step = s) -> str:
            r = s.rpcs.get(name)
            return f"{r.p50_ms:.1f} / {r.p99_ms:.0f}" if r else "—"

        rows.append(
            [
                label,
                s.rps,
                f"{s.rps / base.rps:.2f}x" if base else "—",
                " / ".join(f"{x.rps:,.0f}" for x in steps),
                s.daemon_cpu,
                s.group_cpu["loop"],
                s.group_cpu["workers"],
                lat("ReadFile"),
                lat("Compact"),
                lat("CheckWrite"),
            ]
        )
    return Table(
        f"{EXPERIMENT_AGENTS} agents, alternating rounds (median round; every round's RPC/s "
        "listed): one daemon on one core, on both, on both with its reads on the worker pool; "
        "two daemons, one per core",
        [
            "daemon",
            "RPC/s",
            "÷ one core",
            "rounds' RPC/s",
            "daemon CPU",
            "event loop",
            "workers",
            "ReadFile p50 / p99 ms",
            "Compact p50 / p99 ms",
            "CheckWrite p50 / p99 ms",
        ],
        rows,
    )


def _plots(res: Results) -> list[str]:
    if not res.steps:
        return []
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    PLOTS.mkdir(parents=True, exist_ok=True)
    xs = [s.agents for s in res.steps]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax1.plot(xs, [s.rps for s in res.steps], "o-", color="#3182bd", label="all RPCs")
    pg = res.pg_steps
    if pg:
        ax1.plot(
            [s.agents for s in pg], [s.rps for s in pg], "s-", color="#756bb1",
            label="all RPCs, PostgreSQL",
        )  # fmt: skip
    for name, color in (("ReadFile", "#31a354"), ("CheckWrite", "#fd8d3c"), ("Compact", "#e6550d")):
        ax1.plot(
            xs, [s.rpcs[name].rps if name in s.rpcs else float("nan") for s in res.steps], ".--",
            color=color, label=name,
        )  # fmt: skip
    ax1.set_xscale("log", base=2)
    ax1.set_xticks(xs, [str(x) for x in xs])
    ax1.set_xlabel("agents")
    ax1.set_ylabel("RPC/s")
    ax1.set_ylim(bottom=0)
    ax1.set_title("throughput")
    ax1.legend(fontsize=8)
    ax1.grid(alpha=0.3)
    for name, color in (("CheckWrite", "#fd8d3c"), ("ReadFile", "#31a354"), ("Compact", "#e6550d")):
        ax2.plot(
            xs, [s.rpcs[name].p99_ms if name in s.rpcs else float("nan") for s in res.steps],
            "o-", color=color, label=f"{name} p99",
        )  # fmt: skip
        ax2.plot(
            xs, [s.rpcs[name].p50_ms if name in s.rpcs else float("nan") for s in res.steps],
            ".:", color=color, label=f"{name} p50",
        )  # fmt: skip
    if pg:
        ax2.plot(
            [s.agents for s in pg],
            [s.rpcs["ReadFile"].p99_ms if "ReadFile" in s.rpcs else float("nan") for s in pg],
            "s--", color="#756bb1", label="ReadFile p99, PostgreSQL",
        )  # fmt: skip
    ax2.set_xscale("log", base=2)
    ax2.set_yscale("log")
    ax2.set_xticks(xs, [str(x) for x in xs])
    ax2.set_xlabel("agents")
    ax2.set_ylabel("latency, ms (log)")
    ax2.set_title("latency")
    ax2.legend(fontsize=7, ncol=2)
    ax2.grid(alpha=0.3, which="both")
    fig.suptitle("B7: agents on one daemon (pinned to one core); SQLite unless marked PostgreSQL")
    fig.tight_layout()
    fig.savefig(PLOTS / PLOT_LOAD, dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4))
    pos = list(range(len(res.steps)))
    bottom = [0.0] * len(pos)
    colors = {"loop": "#3182bd", "gRPC": "#9ecae1", "workers": "#c6dbef"}
    names = {
        "loop": "daemon: event loop",
        "gRPC": "daemon: gRPC threads",
        "workers": "daemon: workers",
    }
    for g in GROUPS:
        vals = [s.group_cpu[g] for s in res.steps]
        ax.bar(pos, vals, 0.55, bottom=bottom, color=colors[g], label=names[g])
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.plot(
        pos, [s.driver_cpu for s in res.steps], "o-", color="#e6550d", label="driver (all agents)"
    )
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_ylim(0, 1.4)
    ax.set_xticks(pos, [str(s.agents) for s in res.steps])
    ax.set_xlabel("agents")
    ax.set_ylabel("CPU, core-seconds per second")
    ax.set_title("B7: the daemon's CPU (one core) and the driver's, per step")
    ax.legend(fontsize=8, loc="upper center", ncol=2)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(PLOTS / PLOT_CPU, dpi=110)
    plt.close(fig)
    return [PLOT_LOAD, PLOT_CPU]


def threads_would_pay(two: float | None, pool: float | None) -> bool:
    """Whether the threaded change (`pool`: the RPC/s of the daemon with its reads on the
    worker pool, over one core's) gains 1.2x on the daemon as it ships on the same two cores
    (`two`, over one core's). The unchanged daemon's own gain from the second core is no
    reason to change it."""
    return bool(pool and two and pool / two >= 1.2)


def _conclusion(res: Results, dec: Decision | None) -> str:
    """The multi-core decision, in this run's numbers."""
    parts: list[str] = []
    if res.steps:
        top = max(res.steps, key=lambda s: s.rps)
        busy = min(s.agents for s in res.steps if s.daemon_cpu >= 0.85 * top.daemon_cpu)
        since = (
            "Already with one agent (it sends its next call as soon as the last is answered)"
            if busy == 1
            else f"From {busy} agents on"
        )
        parts.append(
            f"**Saturation.** {since}, the daemon is at "
            f"{min(s.daemon_cpu for s in res.steps if s.agents >= busy):.2f}-"
            f"{max(s.daemon_cpu for s in res.steps):.2f} core-s/s of its one core, "
            f"{min(s.group_cpu['loop'] / s.daemon_cpu for s in res.steps):.0%}-"
            f"{max(s.group_cpu['loop'] / s.daemon_cpu for s in res.steps):.0%} of it on the "
            "event-loop thread: throughput is flat "
            f"({', '.join(f'{s.rps:,.0f}' for s in res.steps)} RPC/s for "
            f"{', '.join(str(s.agents) for s in res.steps)} agents) and latency grows with the "
            "queue, every RPC alike, since they all wait for the one loop. The loop is the "
            "bound. The driver stays light: at most "
            f"{max(s.driver_cpu for s in res.steps):.2f} core-s/s for all its agents."
        )
    if dec is not None:
        parts.append(
            f"**What threads could buy.** At most {dec.p:.0%} of the daemon's CPU runs without "
            "the GIL (the Rust core's `py.detach` calls, SQLite, hashing — and, counted whole, "
            "every thread other than the loop). The rest — the handlers and the pipeline in "
            "Python, protobuf, grpc.aio's Cython glue, asyncio — holds it, and on CPython 3.11 "
            "that part runs on one core at a time however many threads or event loops the "
            "process has (grpc.aio serves a server from one loop in any case). Amdahl's law "
            f"over that share: at most {amdahl(dec.p, 2):.2f}x on 2 cores and "
            f"{amdahl(dec.p, 16):.2f}x on 16 ({1 / (1 - dec.p):.2f}x with any number), before "
            "the cost of the thread hops."
        )
    med = {label: _median(steps) for label, steps in res.experiments.items() if steps}
    base = med.get(EXPERIMENTS[0][0])
    gains = {
        label: med[label].rps / base.rps for label, _, _ in EXPERIMENTS[1:] if base and label in med
    }
    two, pool, shards = (gains.get(label) for label, _, _ in EXPERIMENTS[1:])
    # The daemon ships unpinned: on two cores it already runs gRPC's threads and its worker pool
    # beside the loop (`two`). A change to more threads pays when it beats that, on the same
    # two cores: the pool row against it.
    threaded = pool / two if pool and two else None

    def ratio(g: float | None) -> str:
        return f"{g:.2f}x" if g is not None else "not measured"

    if base is not None:
        line = (
            f"**Measured on this 2-core machine** ({EXPERIMENT_AGENTS} agents, the driver on "
            f"the second core): letting the daemon use both cores gives {ratio(two)} the RPC/s "
            "of one core; moving every read, numbering and rendering of ReadFile and Compact to "
            f"the worker pool as well, {ratio(pool)}; two daemon processes, one per core, the "
            f"agents split between them, {ratio(shards)}"
        )
        sharded = med.get(EXPERIMENTS[3][0])
        if sharded is not None and shards is not None:
            line += (
                f", their CPU {sharded.daemon_cpu:.2f} core-s/s against "
                f"{base.daemon_cpu:.2f}: throughput follows the CPU the processes get"
            )
        line += (
            ". The pool against the daemon as it ships (not pinned) on the same two cores: "
            f"{ratio(threaded)}."
        )
        parts.append(line)
    # Threads pay when they do on this machine: the measured gain of the threaded change over
    # the daemon as it ships. On paper their bound (Amdahl over the GIL-free share, an upper
    # bound) is compared with processes, which scale with the cores whatever that share is.
    threads_pay = threads_would_pay(two, pool)
    bound = (
        f" (here at most {amdahl(dec.p, 2):.2f}x on 2 cores and {amdahl(dec.p, 16):.2f}x on 16)"
        if dec is not None
        else ""
    )
    if threads_pay:
        parts.append(
            "**Decision: open.** This run's numbers say more threads would pay: the pool row "
            f"gives {ratio(threaded)} the RPC/s of the daemon as it ships on the same two "
            "cores; measure again before changing the daemon."
        )
    else:
        parts.append(
            "**Decision: one event loop, one core; the daemon's production behaviour is "
            f"unchanged.** Threads cannot buy more than the GIL-free share allows{bound}. "
            "Not pinned, as it ships, the daemon already runs gRPC's threads and its pool on "
            f"the second core ({ratio(two)} the RPC/s of one core here); moving more work to "
            f"threads gave {ratio(threaded)} of that on the same two cores: the thread hops and "
            "GIL hand-offs cost what the parallel part saves. What "
            "scales is processes, each with its own loop and GIL: the two-daemon row. For the "
            "daemon that would mean sessions sharded by id over N processes, each with its own "
            "SQLite file (every RPC names one session and none spans two), the routing done in "
            "the clients (session id -> socket: a routing front in Python would be one "
            "GIL-bound loop again). On paper, with throughput following the CPU as it does "
            "here, 16 cores give up to about 16 times one loop, less what the clients "
            "themselves take of the same cores. Not worth its cost now: every client, "
            "OpenSession, ListSessions and the state directory would change, while one core "
            "already serves the throughput above to agents that never pause — a real agent "
            "calls once per tool use, seconds apart while its model thinks. The loop's "
            "per-call cost (the tables above) is the lever at any core count; part 2 of issue 16 "
            "works on it."
        )
    return "\n\n".join(parts)


# --- PostgreSQL beside SQLite, and the lock experiment ------------------------------------------

PG_RPCS = ("ReadFile", "RecordRead", "RecordWrite", "CheckWrite", "Compact")


def _stores_table(res: Results) -> Table | None:
    if not res.pg_steps:
        return None
    sqlite = {s.agents: s for s in res.steps}
    rows: list[Sequence[object]] = []
    for n in AGENTS:
        base = sqlite.get(n)
        for store, st in (("SQLite", base), ("PostgreSQL", _pg_step(res, n))):
            if st is None:
                continue
            ratio = f"{st.rps / base.rps:.2f}x" if base and base.rps and st is not base else ""
            rows.append(
                [
                    n,
                    store,
                    st.rps,
                    ratio,
                    st.daemon_cpu,
                    st.group_cpu["loop"],
                    *(st.rpcs[name].p99_ms if name in st.rpcs else "—" for name in PG_RPCS),
                    sum(st.errors.values()),
                ]
            )
    return Table(
        "The same steps with the daemon's state in PostgreSQL (a fresh database per step) beside "
        "SQLite's (the rows above): throughput, the daemon's CPU (core-s/s) and p99 latency, ms",
        [
            "agents",
            "store",
            "RPC/s",
            "÷ SQLite",
            "daemon CPU",
            "event loop",
            *(f"{name} p99" for name in PG_RPCS),
            "errors",
        ],
        rows,
    )


def _pg_step(res: Results, agents: int) -> Step | None:
    return next((s for s in res.pg_steps if s.agents == agents), None)


def _lock_ratios(res: Results) -> list[float]:
    """Each round's pings p99 over the lock window, over the same window without the lock."""
    out = []
    for r in sorted({run.round for run in res.locks}):
        runs = {run.window.locked: run for run in res.locks if run.round == r}
        if True in runs and False in runs:
            base = runs[False].window.pings().p99_ms
            out.append(runs[True].window.pings().p99_ms / base if base else float("nan"))
    return out


def _lock_table(res: Results) -> Table | None:
    if not res.locks:
        return None
    rows: list[Sequence[object]] = []
    base: dict[int, float] = {}
    for run in res.locks:
        p, lock, st = run.window.pings(), run.window.lock, run.step
        if not run.window.locked:
            base[run.round] = p.p99_ms
        b = base.get(run.round)
        rows.append(
            [
                run.round,
                f"{LOCK_MODE} on {LOCK_TABLE}" if run.window.locked else "none (same window)",
                lock.held_to - lock.held_from,
                (lock.held_from - lock.asked) * 1e3 if run.window.locked else "—",
                p.pings,
                p.failed,
                p.p50_ms,
                p.p99_ms,
                p.max_ms,
                f"{p.p99_ms / b:.1f}x" if run.window.locked and b else "—",
                st.rps,
                _errors_text(st.errors),
            ]
        )
    return Table(
        f"The lock experiment: {LOCK_AGENTS} agents on PostgreSQL, a GetServerInfo ping every "
        f"{PING_EVERY * 1e3:.0f} ms (open loop, its own connection); {LOCK_AT:g} s into each "
        f"{LOCK_WINDOW:g} s window a database session of its own takes `LOCK TABLE "
        f"{LOCK_TABLE} IN {LOCK_MODE} MODE` and holds it {LOCK_SECONDS:g} s. The pings sent "
        "while it was held, against the pings of the same window of the run without it",
        [
            "round",
            "lock",
            "window s",
            "waited for the lock ms",
            "pings",
            "failed",
            "ping p50 ms",
            "ping p99 ms",
            "ping max ms",
            "p99 ÷ without",
            "agents' RPC/s (whole run)",
            "agent calls failed (whole run)",
        ],
        rows,
    )


def _errors_text(errors: dict[str, int]) -> str:
    total = sum(errors.values())
    if not total:
        return "0"
    top = ", ".join(f"{k} x{v}" for k, v in Counter(errors).most_common(3))
    return f"{total}: {top}"


def _lock_verdict(res: Results) -> list[str]:
    ratios = _lock_ratios(res)
    if not ratios:
        return []
    mid = sorted(ratios)[len(ratios) // 2]
    return [
        verdict(
            f"health-ping p99 while another session holds a {LOCK_SECONDS:g} s lock on "
            f"`{LOCK_TABLE}` ({LOCK_AGENTS} agents on PostgreSQL), over the same window without "
            f"it (median of {len(ratios)} round{'s' if len(ratios) > 1 else ''}: "
            + ", ".join(f"{r:.1f}x" for r in ratios)
            + ")",
            mid,
            LOCK_TARGET,
        )
    ]


def _postgres_text(res: Results) -> str:
    from postcompact.persist.postgres import TIMEOUTS

    parts: list[str] = []
    if res.pg_steps:
        pairs = [(n, {s.agents: s for s in res.steps}.get(n), _pg_step(res, n)) for n in AGENTS]
        shown = [
            f"{n}: {pg.rps:,.0f} against {sq.rps:,.0f} ({pg.rps / sq.rps:.2f}x)"
            for n, sq, pg in pairs
            if sq is not None and pg is not None and sq.rps
        ]
        parts.append(
            "**On PostgreSQL** (the steps again, each against a fresh database of "
            f"{res.pg_server or 'the server'}): "
            + (
                f"RPC/s per agent count, PostgreSQL against SQLite, {'; '.join(shown)}. "
                if shown
                else ""
            )
            + "The store's calls run off the event loop, on the daemon's pool of connections "
            "(`state_pool_size`), a session's calls in order; each call still waits for its "
            "statements' round trips and its commit's flush, which bounds one session's rate, "
            "not the others'."
        )
    ratios = _lock_ratios(res)
    locked = [run for run in res.locks if run.window.locked]
    if ratios and locked:
        worst = max(run.window.pings().max_ms for run in locked)
        failed = sum(sum(run.step.errors.values()) for run in locked)
        unlocked = sum(sum(run.step.errors.values()) for run in res.locks if not run.window.locked)
        mid = sorted(ratios)[len(ratios) // 2]
        parts.append(
            f"**The lock experiment** (the table below): while another database session holds "
            f"`{LOCK_TABLE}` locked for {LOCK_SECONDS:g} s, the daemon's pings' p99 is "
            f"{mid:.2f}x the same window's without the lock (target at most {LOCK_TARGET}x: "
            f"{'met' if mid <= LOCK_TARGET else 'NOT met'}), the worst ping {worst:.0f} ms. "
            "The calls that write a file row wait for the lock in the store, on its connections' "
            "threads; the event loop, and the pings with it, go on (faster than without the "
            "lock: the writing calls are parked meanwhile); "
            f"{failed} agent calls failed in the runs with the lock ({unlocked} without; the "
            f"daemon's own lock_timeout is {TIMEOUTS['lock_timeout']}, so a statement waiting "
            f"on a {LOCK_SECONDS:g} s lock may be granted it just in time, and the clients retry "
            "STATE_BUSY). "
            "The experiment measures the daemon from outside (pings on their own connection, the "
            "lock from psycopg)."
        )
    return "\n\n".join(parts)


def run(quick: bool = False) -> Section:
    m.pin_client()
    res = measure(quick)
    dec = _decision(res)
    tables: list[Table] = []
    if res.steps:
        tables += [_steps_table(res), *_rpc_tables(res)]
    tables += _profile_tables(res)
    if dec is not None:
        tables.append(
            Table("The GIL, and Amdahl's law for threads", ["quantity", "value"], dec.rows)
        )
    exp = _experiment_table(res)
    if exp is not None:
        tables.append(exp)
    tables += [t for t in (_stores_table(res), _lock_table(res)) if t is not None]
    intro = (__doc__ or "").strip()
    if res.steps:
        intro += (
            f"\n\nThe project: {res.steps[0].project} (shared lib/ plus each agent's own files)."
        )
    if len(res.load) > 1:
        intro += (
            "\n\nThe machine's load average (1 min) when the runs began and when they ended: "
            + " and ".join(f"{x:.1f}" for x in res.load)
            + f" on its {os.cpu_count()} cores, shared with other work."
        )
    intro += "\n\n" + _conclusion(res, dec)
    pg_text = _postgres_text(res)
    if pg_text:
        intro += "\n\n" + pg_text
    notes = [res.profile_step.spy_note] if res.profile_step and res.profile_step.spy_note else []
    problems = res.problems + [f"py-spy: {n}" for n in notes]
    for what, steps in (("", res.steps), (" on PostgreSQL", res.pg_steps)):
        errors = Counter[str]()
        for st in steps:
            errors.update(st.errors)
        if errors:
            problems.append(
                f"errors answered to the agents{what}: "
                + ", ".join(f"{k} x{v}" for k, v in errors.most_common(8))
            )
    if problems:
        intro += "\n\nProblems:\n\n" + "\n".join(f"- {p}" for p in problems)
    return Section(
        "B7 — many agents on one daemon", intro, tables, _plots(res), verdicts=_lock_verdict(res)
    )


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv).markdown())
