"""B9: daemon start-up with N stored sessions, on SQLite and on PostgreSQL.

How long `postcompact serve` takes to answer, and how much memory it has taken by then, when
its database already holds N sessions: N = 1,000 and 100,000, and an empty database for the
floor (1,000,000 too with `BENCH_STARTUP_MILLION=1`: seeding it takes about a minute per
store; before issue 39, when start-up loaded every session, it needed ~12 GiB and over an
hour). The target (issue 39): flat in the stored sessions, under 1 s and under 100 MiB
whatever is stored.

The databases are seeded by SQL, not through the daemon: the daemon's own code first creates
the schema in an empty database (`persist.schema.open_checked`, `persist.postgres.open_checked`:
always the current schema version), then one transaction inserts the rows (SQLite: executemany;
PostgreSQL: COPY). Each session has its row (a neutral policy, the default profile), its main
agent's row and 4 file rows, each a whole read of one of 8 small real files (200 B-1.4 KB) of a
project directory the benchmark writes, with the content's SHA-256 and length: the files verify,
so a load does the real work (re-reading each file and hashing it). The seeded SQLite file is
cached in .cache/bench/startup/ (keyed by the schema version, N, the seed's format and the
project's path) and copied before each run, since the daemon may write to it; PostgreSQL's
seed is a template database, copied (`CREATE DATABASE ... TEMPLATE`) for each run, so every run
starts from the same state (kept between invocations on `BENCH_PG_URL`'s server; the throwaway
cluster is seeded once per invocation).

Each run spawns `postcompact serve` (pinned to CPU 0, the benchmark on CPU 1, as in the other
benchmarks; a config with `session_ttl_s = 0`, so that no seeded session expires at start-up,
and `max_state_bytes` raised out of the way, the rest default) pointed at the database
(`--state-url`), and times it from the spawn until its first SERVING health check over its
socket; the peak RSS is VmHWM of /proc/PID/status read at that moment (VmRSS beside it). The
sessions it holds in memory then are GetStats' `sessions_in_memory` (its `sessions` counts what
is stored): what start-up did. Then the first OpenSession of one stored session, by id alone (a
harness resuming it): where loading on first use pays. Three runs per point, the median shown
with the min-max.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from postcompact.persist import schema
from postcompact.persist.place import side_files
from postcompact.state import content_digest
from postcompact.v1 import postcompact_pb2 as pb
from postcompact.v1 import postcompact_pb2_grpc as pbg

from bench import _measure as m
from bench._pg import PgServer, PgUnavailable, pg_server
from bench.report import PLOTS, ROOT, Section, Table, _cell

SEED_FORMAT = 1  # raise when the seeded rows change: the cache is keyed by it
COUNTS = (1_000, 100_000)
MILLION = 1_000_000
MILLION_ENV = "BENCH_STARTUP_MILLION"
RUNS = 3
FILES_PER_SESSION = 4
PROJECT_FILES = 8
CACHE = ROOT / ".cache" / "bench" / "startup"
STORES = ("SQLite", "PostgreSQL")
TARGET_S = 1.0
TARGET_MIB = 100.0
PLOT = "b9_startup.png"
# A config for every run: no seeded session expires at start-up (they would be deleted, and
# that measured), and no database is over the size limit (SQLite's max_page_count).
CONFIG = """[limits]
session_ttl_s = 0
max_state_bytes = 1099511627776
"""
# gRPC's reconnect backoff would add up to a second to a start-up: the channel retries fast.
FAST_RECONNECT = [
    ("grpc.initial_reconnect_backoff_ms", 10),
    ("grpc.min_reconnect_backoff_ms", 10),
    ("grpc.max_reconnect_backoff_ms", 50),
]


def _log(msg: str) -> None:
    print(f"    b9: {msg}", file=sys.stderr, flush=True)


def counts() -> tuple[int, ...]:
    """The stored-session counts measured: 0 (the floor), COUNTS, and 1,000,000 when asked."""
    million = os.environ.get(MILLION_ENV, "") not in ("", "0")
    return (0, *COUNTS, *((MILLION,) if million else ()))


# --- the project and the rows ---------------------------------------------------------------------


@dataclass(frozen=True)
class ProjectFile:
    path: str
    digest: bytes
    size: int
    mtime_ms: int
    lines: int  # as ReadFile counts them (the last after the final newline included)


@dataclass(frozen=True)
class Project:
    root: Path
    files: tuple[ProjectFile, ...]

    @property
    def key(self) -> str:
        """What the seeded rows depend on besides N: the project's path and contents."""
        h = hashlib.sha256(str(self.root).encode())
        for f in self.files:
            h.update(f.path.encode() + f.digest)
        return h.hexdigest()[:10]


def _content(i: int) -> bytes:
    """Project file i: 200 B-1.4 KB of Python-like source, the same every time."""
    lines = [f'"""Module {i} of the start-up benchmark\'s project."""', ""]
    for j in range(2 + 3 * i):
        lines += [f"def f{i}_{j}(x: int) -> int:", f"    return x * {j + 1} + {i}", ""]
    return "\n".join(lines).encode()


def write_project(root: Path) -> Project:
    """The project's files under `root`, written only when missing or different (their mtimes
    stay those the cached seeds recorded)."""
    files = []
    for i in range(PROJECT_FILES):
        p = root / "src" / f"m{i}.py"
        data = _content(i)
        if not p.is_file() or p.read_bytes() != data:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        mtime_ms = p.stat().st_mtime_ns // 1_000_000
        files.append(
            ProjectFile(str(p), content_digest(data), len(data), mtime_ms, data.count(b"\n") + 1)
        )
    return Project(root, tuple(files))


def project() -> Project:
    return write_project(CACHE / f"project-f{SEED_FORMAT}")


def session_id(i: int) -> str:
    return f"bench-startup-{i:07d}"


# The columns seeded, in order, per table (the others take their defaults).
SEEDED: dict[str, tuple[str, ...]] = {
    "sessions": schema.COLUMNS["sessions"],
    "agents": schema.COLUMNS["agents"],
    "files": schema.COLUMNS["files"],
}


def table_rows(table: str, n: int, prj: Project, now: int) -> Iterator[tuple[Any, ...]]:
    """The rows of `table` for sessions 0..n-1, in SEEDED's column order, as the daemon writes
    them (persist/sqlstore.py) for a session opened with the project as its cwd whose main agent
    then read 4 of its files whole (ReadFile): session i was made at `now - n + i` ms."""
    root, home = str(prj.root), str(Path.home())
    plans = f"{home}/.claude/plans"
    slug = root.replace("/", "-")
    memory = json.dumps(
        [
            "/etc/claude-code/CLAUDE.md",
            f"{home}/.claude/CLAUDE.md",
            f"{home}/.claude/projects/{slug}/memory/MEMORY.md",
            f"{root}/CLAUDE.local.md",
            f"{root}/CLAUDE.md",
        ]
    )
    policy = pb.RestorePolicy().SerializeToString()
    roots = json.dumps([root])
    announced = '{"tools":[],"agent_types":[],"mcp":[],"sent_skills":[]}'
    per = 2 + FILES_PER_SESSION  # seq numbers per session: its row, its agent's, its files'
    for i in range(n):
        sid, seq, at = session_id(i), 1 + i * per, now - n + i
        if table == "sessions":
            yield (sid, seq, root, home, roots, memory, plans, policy,
                   pb.PROFILE_DEFAULT, at, at, b"", 1)  # fmt: skip
        elif table == "agents":
            yield (sid, "", seq + 1, None, pb.PERMISSION_MODE_DEFAULT, 0, "[]", announced, "",
                   "{}")  # fmt: skip
        else:
            for k in range(FILES_PER_SESSION):
                f = prj.files[(i + k * 3) % len(prj.files)]
                yield (sid, "", f.path, seq + 2 + k, at, 1, None, 0, f.digest, f.size, at,
                       f.mtime_ms, 1, f.lines, 0)  # fmt: skip


def _insert(table: str, placeholder: str = "?") -> str:
    cols = SEEDED[table]
    return (
        f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join(placeholder for _ in cols)})"
    )


def _progress(rows: Iterable[tuple[Any, ...]], what: str, total: int) -> Iterator[tuple[Any, ...]]:
    """`rows`, saying how far it got every 10 s."""
    last = time.monotonic()
    for k, row in enumerate(rows, 1):
        if time.monotonic() - last >= 10:
            _log(f"{what}: {k:,} of {total:,} rows")
            last = time.monotonic()
        yield row


def _rows_per_session(table: str) -> int:
    return FILES_PER_SESSION if table == "files" else 1


# --- SQLite --------------------------------------------------------------------------------------


def sqlite_seed(n: int, prj: Project, cache: Path = CACHE) -> Path:
    """The cached SQLite database with `n` sessions (seeded now when missing)."""
    path = cache / f"sqlite-v{schema.SCHEMA_VERSION}-f{SEED_FORMAT}-{prj.key}-n{n}.db"
    if path.is_file():
        return path
    t0 = time.monotonic()
    _log(f"seeding SQLite with {n:,} sessions into {path}")
    work = cache / f"seeding-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(mode=0o700, parents=True)
    try:
        db = work / "state.db"
        conn = schema.open_checked(db)  # the daemon's schema, migrated to SCHEMA_VERSION
        try:
            now = int(time.time() * 1000)
            conn.execute("BEGIN")
            for table in SEEDED:
                rows = table_rows(table, n, prj, now)
                conn.executemany(
                    _insert(table), _progress(rows, f"SQLite {table}", n * _rows_per_session(table))
                )
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        for side in side_files(db)[1:]:
            side.unlink(missing_ok=True)
        os.replace(db, path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _log(f"seeded SQLite with {n:,} sessions in {time.monotonic() - t0:.1f} s")
    return path


@contextlib.contextmanager
def sqlite_copy(seed: Path, tmp: Path) -> Iterator[str]:
    """A copy of the seeded file for one run; its state_url."""
    d = tmp / "db"
    d.mkdir(mode=0o700)
    db = d / "state.db"
    shutil.copyfile(seed, db)
    os.chmod(db, 0o600)
    try:
        yield f"sqlite://{db}"
    finally:
        shutil.rmtree(d, ignore_errors=True)


# --- PostgreSQL ----------------------------------------------------------------------------------


def pg_template(server: PgServer, n: int, prj: Project) -> str:
    """The template database with `n` sessions (seeded now when the server lacks it)."""
    import psycopg
    from postcompact.persist import postgres

    name = f"pcbench_startup_v{schema.SCHEMA_VERSION}_f{SEED_FORMAT}_{prj.key}_n{n}"
    done = f"seeded {n}"
    with server.admin() as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            (name,),
        ).fetchone()
        if row is not None and row[0] == done:
            return name
        if row is not None:  # half seeded by a run that stopped
            conn.execute(f'ALTER DATABASE "{name}" IS_TEMPLATE false')
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        conn.execute(f"CREATE DATABASE \"{name}\" ENCODING 'UTF8' TEMPLATE template0")
    t0 = time.monotonic()
    _log(f"seeding PostgreSQL with {n:,} sessions into database {name}")
    url = server.url(name)
    postgres.open_checked(url).close()  # the daemon's schema, migrated to SCHEMA_VERSION
    now = int(time.time() * 1000)
    with psycopg.connect(url) as conn:  # one transaction
        with conn.cursor() as cur:
            for table, cols in SEEDED.items():
                total = n * _rows_per_session(table)
                sql = f"COPY {table} ({', '.join(cols)}) FROM STDIN"
                with cur.copy(sql) as copy:
                    for row in _progress(
                        table_rows(table, n, prj, now), f"PostgreSQL {table}", total
                    ):
                        copy.write_row(row)
        conn.commit()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")  # as autovacuum leaves a database that grew slowly
    with server.admin() as conn:
        conn.execute(f"COMMENT ON DATABASE \"{name}\" IS '{done}'")
        conn.execute(f'ALTER DATABASE "{name}" IS_TEMPLATE true')
    _log(f"seeded PostgreSQL with {n:,} sessions in {time.monotonic() - t0:.1f} s")
    return name


@contextlib.contextmanager
def pg_copy(server: PgServer, template: str) -> Iterator[str]:
    """A copy of the template database for one run; its state_url."""
    name = server.new_database("run", template=template)
    try:
        yield server.url(name)
    finally:
        server.drop_database(name)


# --- one start-up ------------------------------------------------------------------------------


@dataclass
class Startup:
    seconds: float  # spawn to the first SERVING health check
    hwm_mib: float  # VmHWM then
    rss_mib: float  # VmRSS then
    sessions: int  # GetStats' sessions_in_memory then: what start-up loaded
    logged: int | None  # GetStats' sessions then: what the store holds
    first_open_ms: float | None  # the first OpenSession of a stored session, by id alone
    verified: bool | None  # a ReadFile of one of its files then answered "unchanged"


def _status_mib(pid: int) -> tuple[float, float]:
    hwm = rss = float("nan")
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
            elif line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
    return hwm, rss


def start_once(
    state_url: str, tmp: Path, *, open_id: str | None, open_file: str = "", timeout: float
) -> Startup:
    """Spawn the daemon on `state_url` in `tmp`, measure its start-up, stop it. With `open_id`,
    then open that stored session by id and ReadFile `open_file`, which it read whole: a stored
    entry the load verified answers "unchanged"."""
    sock = tmp / "run" / "d.sock"
    (tmp / "run").mkdir(mode=0o700)
    cfg = tmp / "config" / "postcompact" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(CONFIG)
    env = {
        **os.environ,
        "XDG_RUNTIME_DIR": str(tmp / "run"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "XDG_STATE_HOME": str(tmp / "state"),
        "POSTCOMPACT_LOG_LEVEL": "info",
    }
    argv = [
        *("taskset", "-c", str(m.SERVER_CPU), sys.executable, "-m", "postcompact", "serve"),
        *("--socket", str(sock), "--state-url", state_url),
    ]
    log = tmp / "daemon.log"
    with open(log, "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=err)
    try:
        seconds = _wait_serving(proc, sock, t0, timeout, log)
        hwm, rss = _status_mib(proc.pid)
        with grpc.insecure_channel(f"unix://{sock}") as ch:
            stub = pbg.PostcompactServiceStub(ch)
            if stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=60).pid != proc.pid:
                raise RuntimeError("another daemon answered on the benchmark's socket")
            stats = stub.GetStats(pb.GetStatsRequest(), timeout=60)
            held, stored = stats.sessions_in_memory, stats.sessions
            first: float | None = None
            verified: bool | None = None
            if open_id is not None:
                t1 = time.perf_counter()
                r = stub.OpenSession(pb.OpenSessionRequest(session_id=open_id), timeout=timeout)
                first = (time.perf_counter() - t1) * 1e3
                if not r.resumed:
                    raise RuntimeError(f"OpenSession of stored session {open_id} did not resume")
                if open_file:
                    req = pb.ReadFileRequest(session_id=open_id, path=open_file)
                    verified = stub.ReadFile(req, timeout=timeout).unchanged
    finally:
        _stop(proc)
    return Startup(seconds, hwm, rss, held, stored, first, verified)


def _wait_serving(
    proc: subprocess.Popen[bytes], sock: Path, t0: float, timeout: float, log: Path
) -> float:
    """Seconds from `t0` until the daemon on `sock` answers SERVING."""

    def exited() -> RuntimeError:
        tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
        return RuntimeError(f"the daemon exited with {proc.returncode}: {tail}")

    deadline = t0 + timeout
    while not sock.exists():  # its listener is made once it has loaded
        if proc.poll() is not None:
            raise exited()
        if time.perf_counter() > deadline:
            raise RuntimeError(f"the daemon made no socket within {timeout:.0f} s")
        time.sleep(0.002)
    with grpc.insecure_channel(f"unix://{sock}", options=FAST_RECONNECT) as ch:
        health = health_pb2_grpc.HealthStub(ch)
        while True:
            try:
                r = health.Check(health_pb2.HealthCheckRequest(), timeout=5, wait_for_ready=True)
                if r.status == health_pb2.HealthCheckResponse.SERVING:
                    return time.perf_counter() - t0
            except grpc.RpcError:
                pass
            if proc.poll() is not None:
                raise exited()
            if time.perf_counter() > deadline:
                raise RuntimeError(f"the daemon did not serve within {timeout:.0f} s")
            time.sleep(0.002)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _timeout(n: int) -> float:
    """How long a start-up with `n` sessions may take (today's ~0.5 ms per session, loaded)."""
    return 60 + n * 0.005


# --- measuring ---------------------------------------------------------------------------------


@dataclass
class Point:
    store: str
    n: int
    runs: list[Startup] = field(default_factory=list)

    def median(self, attr: str) -> float:
        values = [getattr(r, attr) for r in self.runs if getattr(r, attr) is not None]
        return statistics.median(values) if values else float("nan")

    def spread(self, attr: str) -> str:
        values = [getattr(r, attr) for r in self.runs if getattr(r, attr) is not None]
        if len(values) < 2:
            return "—"
        return f"{_cell(float(min(values)))}-{_cell(float(max(values)))}"


@dataclass
class Results:
    points: list[Point] = field(default_factory=list)
    seeding: dict[tuple[str, int], float] = field(default_factory=dict)  # seconds, when seeded
    server: str = ""
    problems: list[str] = field(default_factory=list)
    load: list[float] = field(default_factory=list)  # 1-minute load average, first and last


def measure_sqlite(
    n: int, prj: Project, runs: int, cache: Path = CACHE, res: Results | None = None
) -> Point:
    t0 = time.monotonic()
    seed = sqlite_seed(n, prj, cache)
    if res is not None and time.monotonic() - t0 > 1:
        res.seeding[("SQLite", n)] = time.monotonic() - t0
    point = Point("SQLite", n)
    for r in range(runs):
        with m.short_tmpdir() as tmp, sqlite_copy(seed, tmp) as url:
            point.runs.append(_start(url, tmp, n, prj))
        _report_run(point, r, runs)
    return point


def measure_pg(
    server: PgServer, n: int, prj: Project, runs: int, res: Results | None = None
) -> Point:
    t0 = time.monotonic()
    template = pg_template(server, n, prj)
    if res is not None and time.monotonic() - t0 > 1:
        res.seeding[("PostgreSQL", n)] = time.monotonic() - t0
    point = Point("PostgreSQL", n)
    for r in range(runs):
        with m.short_tmpdir() as tmp, pg_copy(server, template) as url:
            point.runs.append(_start(url, tmp, n, prj))
        _report_run(point, r, runs)
    return point


def _start(url: str, tmp: Path, n: int, prj: Project) -> Startup:
    """One start-up on `url` (`n` stored sessions), then session n/2 opened and one of its
    files read."""
    if not n:
        return start_once(url, tmp, open_id=None, timeout=_timeout(n))
    i = n // 2
    path = prj.files[i % len(prj.files)].path  # table_rows' first file of session i
    return start_once(url, tmp, open_id=session_id(i), open_file=path, timeout=_timeout(n))


def _report_run(point: Point, r: int, runs: int) -> None:
    s = point.runs[-1]
    _log(
        f"{point.store}, {point.n:,} sessions, run {r + 1}/{runs}: {s.seconds:.2f} s, "
        f"VmHWM {s.hwm_mib:.0f} MiB, {s.sessions:,} sessions held"
    )


def measure(quick: bool) -> Results:
    res = Results()
    ns = (0, COUNTS[0]) if quick else counts()
    runs = 1 if quick else RUNS
    prj = project()
    res.load.append(os.getloadavg()[0])
    for n in ns:
        try:
            res.points.append(measure_sqlite(n, prj, runs, res=res))
        except (RuntimeError, OSError, sqlite3.Error, grpc.RpcError) as e:
            res.problems.append(f"SQLite, {n:,} sessions: {e}")
    try:
        with pg_server() as server:
            res.server = server.description
            for n in ns:
                try:
                    res.points.append(measure_pg(server, n, prj, runs, res=res))
                except (RuntimeError, OSError, grpc.RpcError) as e:
                    res.problems.append(f"PostgreSQL, {n:,} sessions: {e}")
    except PgUnavailable as e:
        res.problems.append(f"PostgreSQL not measured: {e}")
    res.load.append(os.getloadavg()[0])
    return res


# --- reporting ---------------------------------------------------------------------------------


def _table(res: Results) -> Table:
    rows: list[Sequence[object]] = []
    for p in res.points:
        logged = {r.logged for r in p.runs}
        rows.append(
            [
                p.store,
                p.n,
                p.median("seconds"),
                p.spread("seconds"),
                p.median("hwm_mib"),
                p.spread("hwm_mib"),
                p.median("rss_mib"),
                f"{int(p.median('sessions')):,}",
                ", ".join("—" if v is None else f"{v:,}" for v in sorted(logged, key=str)),
                p.median("first_open_ms") if p.n else "—",
                _verified(p),
                len(p.runs),
            ]
        )
    return Table(
        "Start-up with N stored sessions: spawn to the first SERVING health check, memory then "
        "(median of the runs, min-max beside), what start-up loaded, and the first OpenSession "
        "of a stored session",
        [
            "store",
            "stored sessions",
            "start-up s",
            "min-max s",
            "peak RSS (VmHWM) MiB",
            "min-max MiB",
            "VmRSS MiB",
            "sessions in memory (GetStats)",
            "sessions stored (GetStats)",
            "first OpenSession ms",
            "its file verified",
            "runs",
        ],
        rows,
    )


def _verified(p: Point) -> str:
    """Whether the stored file read after the first OpenSession answered "unchanged" in every
    run (the load had verified it against the disk)."""
    seen = [r.verified for r in p.runs if r.verified is not None]
    if not seen:
        return "—"
    return "yes" if all(seen) else f"{sum(seen)} of {len(seen)} runs"


def _plot(res: Results) -> list[str]:
    if not res.points:
        return []
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    PLOTS.mkdir(parents=True, exist_ok=True)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    colors = {"SQLite": "#3182bd", "PostgreSQL": "#e6550d"}
    for store in STORES:
        pts = [p for p in res.points if p.store == store and p.runs]
        stored = [p for p in pts if p.n > 0]
        empty = next((p for p in pts if p.n == 0), None)
        for ax, attr in ((ax1, "seconds"), (ax2, "hwm_mib")):
            if stored:
                xs = [p.n for p in stored]
                mid = [p.median(attr) for p in stored]
                lo = [mid[i] - min(getattr(r, attr) for r in p.runs) for i, p in enumerate(stored)]
                hi = [max(getattr(r, attr) for r in p.runs) - mid[i] for i, p in enumerate(stored)]
                ax.errorbar(
                    xs, mid, yerr=[lo, hi], fmt="o-", color=colors[store], capsize=3, label=store
                )
            if empty is not None:
                ax.axhline(
                    empty.median(attr), color=colors[store], ls=":", lw=1,
                    label=f"{store}, empty database",
                )  # fmt: skip
    ax1.axhline(TARGET_S, color="grey", ls="--", lw=1, label=f"target: {TARGET_S:g} s")
    ax2.axhline(TARGET_MIB, color="grey", ls="--", lw=1, label=f"target: {TARGET_MIB:g} MiB")
    for ax, label, title in (
        (ax1, "start-up, s (log)", "spawn to SERVING"),
        (ax2, "peak RSS (VmHWM) at SERVING, MiB (log)", "memory"),
    ):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("stored sessions (log)")
        ax.set_ylabel(label)
        ax.set_title(title)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.suptitle("B9: daemon start-up vs stored sessions (median of the runs, min-max bars)")
    fig.tight_layout()
    fig.savefig(PLOTS / PLOT, dpi=110)
    plt.close(fig)
    return [PLOT]


def _verdicts(res: Results) -> list[str]:
    out = []
    for store in STORES:
        pts = [p for p in res.points if p.store == store and p.runs and p.n > 0]
        if not pts:
            continue
        worst_s = max(pts, key=lambda p: p.median("seconds"))
        worst_m = max(pts, key=lambda p: p.median("hwm_mib"))
        ok_s = worst_s.median("seconds") < TARGET_S
        ok_m = worst_m.median("hwm_mib") < TARGET_MIB
        out.append(
            f"{store}: start-up under {TARGET_S:g} s whatever is stored — worst "
            f"{worst_s.median('seconds'):.2f} s at {worst_s.n:,} sessions — "
            f"{'met' if ok_s else 'NOT met'}"
        )
        out.append(
            f"{store}: peak RSS under {TARGET_MIB:g} MiB whatever is stored — worst "
            f"{worst_m.median('hwm_mib'):.0f} MiB at {worst_m.n:,} sessions — "
            f"{'met' if ok_m else 'NOT met'}"
        )
    return out


def _findings(res: Results) -> str:
    parts = []
    for store in STORES:
        pts = {p.n: p for p in res.points if p.store == store and p.runs}
        if not pts:
            continue
        ns = sorted(pts)
        top, floor = pts[ns[-1]], pts.get(0)
        line = (
            f"**{store}.** "
            + "; ".join(
                f"{n:,} sessions: {pts[n].median('seconds'):.2f} s and "
                f"{pts[n].median('hwm_mib'):.0f} MiB, {int(pts[n].median('sessions')):,} in memory"
                for n in ns
            )
            + "."
        )
        if floor is not None and top.n > 0:
            extra_s = top.median("seconds") - floor.median("seconds")
            extra_mib = top.median("hwm_mib") - floor.median("hwm_mib")
            flat = extra_s < max(0.2, 0.2 * floor.median("seconds")) and extra_mib < max(
                10.0, 0.2 * floor.median("hwm_mib")
            )
            line += (
                f" At {top.n:,} sessions start-up takes {extra_s:+.2f} s and {extra_mib:+.0f} MiB "
                f"over the empty database's ({extra_s / top.n * 1e6:.0f} µs and "
                f"{extra_mib / top.n * 1024:.1f} KiB per stored session): "
                + ("flat in what is stored" if flat else "it grows with what is stored")
                + (
                    f"; start-up loaded all {top.n:,} (GetStats)."
                    if int(top.median("sessions")) == top.n
                    else f"; start-up loaded {int(top.median('sessions')):,} of them (GetStats)."
                )
            )
        parts.append(line)
    loads_all = [
        p for p in res.points if p.n and p.runs and int(p.median("sessions")) == p.n
    ]  # fmt: skip
    missed = [v for v in _verdicts(res) if v.endswith("NOT met")]
    if loads_all and missed:
        worst = max(loads_all, key=lambda p: p.median("seconds"))
        parts.append(
            "**The daemon measured here does not meet the target.** It loads every stored "
            "session at start-up (verifying each stored file against the disk), so its start-up "
            f"time and memory grow with what is stored: {worst.median('seconds'):.1f} s and "
            f"{worst.median('hwm_mib'):,.0f} MiB with {worst.n:,} sessions on {worst.store}. "
            "Loading sessions on first use, with the store off the event loop (issue 39), is "
            "the change that lands separately; this benchmark runs unchanged against it."
        )
    return "\n\n".join(parts)


def run(quick: bool = False) -> Section:
    m.pin_client()
    res = measure(quick)
    intro = (__doc__ or "").strip()
    if res.server:
        intro += f"\n\nPostgreSQL: {res.server}."
    if res.load:
        intro += (
            "\n\nThe machine's load average (1 min) when the runs began and when they ended: "
            + " and ".join(f"{x:.1f}" for x in res.load)
            + f" on its {os.cpu_count()} cores, shared with other work: the runs' min-max shows "
            "how much that moved them."
        )
    if res.seeding:
        intro += "\n\nSeeded in this run: " + "; ".join(
            f"{store} {n:,} sessions in {s:.0f} s" for (store, n), s in res.seeding.items()
        ) + "."  # fmt: skip
    findings = _findings(res)
    if findings:
        intro += "\n\n" + findings
    if res.problems:
        intro += "\n\nProblems:\n\n" + "\n".join(f"- {p}" for p in res.problems)
    tables = [_table(res)] if res.points else []
    return Section(
        "B9 — start-up with stored sessions", intro, tables, _plot(res), verdicts=_verdicts(res)
    )


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv).markdown())
