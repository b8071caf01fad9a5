"""Fixtures: the real daemon as a subprocess on a short Unix socket, a sync client, a project dir.

One daemon is shared per test module (`daemon`); tests isolate themselves with their own session
ids (`session`). Tests that kill or misconfigure a daemon start their own with `start_daemon`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

import psycopg
import pytest
from postcompact.v1 import postcompact_pb2 as daemon_pb
from postcompact_client import Client, Session
from postcompact_client.types import Attachment, FileAttachment

from tests.pg_cluster import Cluster, ClusterError

START_TIMEOUT_S = 30.0


@dataclass
class RunningDaemon:
    dir: Path
    socket_path: Path
    proc: subprocess.Popen[bytes]
    client: Client
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()  # what it was started with (a restart passes them again)
    prefix: tuple[str, ...] = ()  # what the serve command ran under (e.g. a mount namespace)

    @property
    def address(self) -> str:
        return f"unix://{self.socket_path}"

    @property
    def server_json(self) -> Path:
        return self.dir / "server.json"

    def stderr(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise


def evict_from_page_cache(path: Path) -> None:
    """Drop `path`'s pages from the page cache (clean pages: written and synced first), so the
    next read must wait for the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def short_dir(prefix: str = "pc") -> Path:
    """A fresh 0700 directory directly under /tmp (Unix socket paths must stay short)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


# Kept from the test run's environment: POSTCOMPACT_SERVER_IMPLEMENTATION=native runs every
# daemon the tests start on pygrpc-native's server (issue 41; docs/benchmarks.md, "Serving").
KEPT_ENV = frozenset({"POSTCOMPACT_SERVER_IMPLEMENTATION"})


def daemon_env(base: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    for key in list(env):
        if key.startswith("POSTCOMPACT_") and key not in KEPT_ENV:
            del env[key]
    env["XDG_CONFIG_HOME"] = str(base / "config")  # no user config leaks into tests
    env["XDG_STATE_HOME"] = str(base / "state")
    env["XDG_RUNTIME_DIR"] = str(base / "run")
    env.update(extra or {})
    return env


def serve_command(socket: Path, args: Sequence[str] = ()) -> list[str]:
    return [sys.executable, "-m", "postcompact", "serve", "--socket", str(socket), *args]


def serve_once(base: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`serve` run in `base` with `args` until it exits (one that cannot start: its stderr)."""
    return subprocess.run(
        serve_command(base / "d.sock", args),
        env=daemon_env(base),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def start_daemon(
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    config_toml: str | None = None,
    runtime_dir: Path | None = None,
    prefix: Sequence[str] = (),
) -> RunningDaemon:
    base = runtime_dir or short_dir()
    socket = base / "d.sock"
    full_env = daemon_env(base, env)
    if config_toml is not None:
        cfg = base / "config" / "postcompact" / "config.toml"
        cfg.parent.mkdir(parents=True, exist_ok=True)
        cfg.write_text(config_toml)
    log = base / "daemon.stderr"
    with open(log, "wb") as err:
        proc = subprocess.Popen(
            [*prefix, *serve_command(socket, args)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=full_env,
        )
    client = Client(f"unix://{socket}", auto_start=False, timeout=30.0)
    try:
        client.wait_for_health(START_TIMEOUT_S)
    except Exception:
        client.close()
        proc.kill()
        proc.wait()
        raise AssertionError(f"daemon did not start:\n{log.read_text(errors='replace')}") from None
    return RunningDaemon(base, socket, proc, client, log, full_env, tuple(args), tuple(prefix))


@pytest.fixture(scope="module")
def daemon() -> Iterator[RunningDaemon]:
    d = start_daemon()
    yield d
    d.stop()
    shutil.rmtree(d.dir, ignore_errors=True)


# --- the two stores ------------------------------------------------------------------------------
#
# Tests of what both stores guarantee take the `state` fixture: its `args` start a daemon on the
# embedded SQLite database (in the daemon's XDG_STATE_HOME) or on a fresh database of the
# session's PostgreSQL cluster (tests/pg_cluster.py). The PostgreSQL cases are marked
# `postgresql`: the default run deselects them, `make test-postgres` (part of `make test`) runs
# them, and one fails, never skips, when the cluster cannot start.

STATE_TABLES = ("sessions", "agents", "catalogs", "files", "skills", "tasks")
STORES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgresql),
]


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    try:
        cluster = Cluster(fsync=False).start()
    except ClusterError as exc:
        pytest.fail(f"the PostgreSQL cluster for the tests did not start: {exc}", pytrace=False)
    yield cluster
    cluster.stop()


@dataclass
class State:
    """Where a test's daemons keep their state: `kind` "sqlite" or "postgresql"."""

    kind: str
    url: str = ""  # postgresql: the database's state_url
    cluster: Cluster | None = None

    @property
    def args(self) -> tuple[str, ...]:
        return ("--state-url", self.url) if self.url else ()

    @contextlib.contextmanager
    def writes_fail(self, d: RunningDaemon) -> Iterator[None]:
        """Every write of `d` to its state database fails while inside, for real: SQLite's
        writes to its files fail with EFBIG (the daemon's RLIMIT_FSIZE is 0; Python ignores the
        SIGXFSZ), PostgreSQL's server refuses every write to the state's tables with an I/O
        error (a trigger of the test's)."""
        if self.kind == "sqlite":
            soft, hard = resource.prlimit(d.proc.pid, resource.RLIMIT_FSIZE)
            resource.prlimit(d.proc.pid, resource.RLIMIT_FSIZE, (0, hard))
            try:
                yield
            finally:
                resource.prlimit(d.proc.pid, resource.RLIMIT_FSIZE, (soft, hard))
            return
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(
                "CREATE OR REPLACE FUNCTION pc_test_refuse() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'the test refuses writes' USING ERRCODE = 'io_error'; "
                "END $$"
            )
            for table in STATE_TABLES:
                conn.execute(
                    f"CREATE TRIGGER pc_test_refuse BEFORE INSERT OR UPDATE OR DELETE ON {table} "
                    "FOR EACH STATEMENT EXECUTE FUNCTION pc_test_refuse()"
                )
            try:
                yield
            finally:
                for table in STATE_TABLES:
                    conn.execute(f"DROP TRIGGER pc_test_refuse ON {table}")

    @contextlib.contextmanager
    def table_locked(self, d: RunningDaemon, table: str) -> Iterator[None]:
        """Another connection holds the lock the daemon's write of `table` needs, until the
        end: PostgreSQL's `LOCK TABLE ... IN ACCESS EXCLUSIVE MODE`, SQLite's `BEGIN EXCLUSIVE`
        (the whole file)."""
        if self.kind == "postgresql":
            with psycopg.connect(self.url, autocommit=True) as pg:
                pg.execute("BEGIN")
                pg.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
                try:
                    yield
                finally:
                    pg.execute("ROLLBACK")
            return
        (db,) = (d.dir / "state" / "postcompact").glob("state*.db")
        lite = sqlite3.connect(db, isolation_level=None)
        try:
            lite.execute("BEGIN EXCLUSIVE")
            try:
                yield
            finally:
                lite.execute("ROLLBACK")
        finally:
            lite.close()

    def sql(self, d: RunningDaemon, query: str) -> list[tuple[Any, ...]]:
        """Run `query` against the daemon's state database (as it is on disk now)."""
        if self.kind == "postgresql":
            with psycopg.connect(self.url, autocommit=True) as pg:
                return [tuple(r) for r in pg.execute(query)]
        (db,) = (d.dir / "state" / "postcompact").glob("state*.db")
        lite = sqlite3.connect(db)
        try:
            return list(lite.execute(query))
        finally:
            lite.close()


@pytest.fixture(params=STORES)
def state(request: pytest.FixtureRequest) -> State:
    if request.param == "sqlite":
        return State("sqlite")
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    return State("postgresql", cluster.new_database(), cluster)


@pytest.fixture
def pg_state(pg_cluster: Cluster) -> State:
    """A fresh database of the PostgreSQL cluster (for tests of PostgreSQL alone)."""
    return State("postgresql", pg_cluster.new_database(), pg_cluster)


PROJECT_FILES = {
    "src/a.py": "alpha = 1\nbeta = 2\ngamma = 3\n",
    "src/b.py": "print('b')\n",
    "README.md": "# demo\n\nhello\n",
    "docs/notes.txt": "one\ntwo\nthree\nfour\nfive",
}


@pytest.fixture
def base() -> Iterator[Path]:
    """A scratch directory (a daemon's runtime dir, projects) removed after the test."""
    d = short_dir("pcs")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def write_project(root: Path) -> Path:
    """PROJECT_FILES under `root`; returns `root`."""
    for rel, text in PROJECT_FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@pytest.fixture
def project() -> Iterator[Path]:
    root = write_project(short_dir("pcp"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


# The default profile's file rule before `postcompact eval` chose today's (docs/eval.md): five
# files, whole or cut to a head within 5,000 tokens, 50,000 in all, the range last read, the
# malware reminder. Tests of those mechanisms pin it; the `session` fixture does.
V1_POLICY: dict[str, Any] = {
    "max_files": 5,
    "file_token_budget": 50_000,
    "max_tokens_per_file": 5_000,
    "oversize": "truncate_head",
    "malware_reminder": True,
    "carry_read_state": False,
    "restore_seen": False,
    "match_budget": "none",
    "ranking": "recency",
}


def v1_policy(**changes: Any) -> daemon_pb.RestorePolicy:
    """`V1_POLICY` as the daemon's message (with `changes`), for in-process tests."""
    fields = {
        **V1_POLICY,
        "oversize": daemon_pb.OVERSIZE_POLICY_TRUNCATE_HEAD,
        "match_budget": daemon_pb.HARNESS_RULE_NONE,
        "ranking": daemon_pb.FILE_RANKING_RECENCY,
        **changes,
    }
    return daemon_pb.RestorePolicy(**fields)


_ids = itertools.count(1)


def new_session_id(tag: str = "t") -> str:
    return f"{tag}-{os.getpid()}-{next(_ids)}"


@pytest.fixture
def session(daemon: RunningDaemon, project: Path, request: pytest.FixtureRequest) -> Session:
    return daemon.client.open_session(
        str(project), session_id=new_session_id(request.node.name), policy=V1_POLICY
    )


def set_mtime(path: Path, mtime_ms: int) -> None:
    os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))


class _HasBlocks(Protocol):
    @property
    def blocks(self) -> Sequence[str]: ...


def text_of(att: _HasBlocks) -> str:
    """An attachment's text as one string: its blocks joined by "\n" (what the clients'
    `rendered_text` joins for it)."""
    return "\n".join(att.blocks)


P = TypeVar("P")


def payload_of(att: Attachment, kind: type[P]) -> P:
    """The attachment's payload (the member of its oneof that is set), checked to be a `kind`."""
    payload = att.payload
    assert isinstance(payload, kind), (att.payload_case, att.kind)
    return payload


def file_of(att: Attachment) -> FileAttachment:
    """The restored file of a file attachment (fails on an attachment of another kind)."""
    return payload_of(att, FileAttachment)


class Hold:
    """A failpoint held in the daemon (daemon/postcompact/failpoints.py): the worker that reaches
    it waits until `release()`. `kind` "gil": it waits holding its process's GIL, as one long C
    call does."""

    def __init__(self, base: Path, name: str, kind: str = "hold") -> None:
        self.name = name
        self.kind = kind
        self.path = base / f"hold-{name}"

    @property
    def env(self) -> str:
        return f"{self.name}={self.kind}:{self.path}"

    def _marks(self) -> list[str]:
        marker = Path(f"{self.path}.reached")
        return marker.read_text().splitlines() if marker.exists() else []

    def reached(self) -> int:
        """How many workers have reached the failpoint."""
        return len(self._marks())

    def pids(self) -> set[int]:
        """The processes whose workers reached the failpoint."""
        return {int(line.split()[0]) for line in self._marks()}

    def wait_reached(self, count: int = 1, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while self.reached() < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{count} worker(s) did not reach the failpoint {self.name}")
            time.sleep(0.01)

    def release(self) -> None:
        self.path.touch()
        fifo = f"{self.path}.fifo"
        if self.kind == "gil" and os.path.exists(fifo):
            # A holder has it open for reading: this never blocks, and its read returns (none
            # has: ENXIO, nothing to release).
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                return
            try:
                os.write(fd, b"r")
            finally:
                os.close(fd)


def held_daemon(
    *names: str, config_toml: str | None = None, kind: str = "hold"
) -> tuple[RunningDaemon, list[Hold]]:
    """A daemon started with the failpoints `names` held (`kind`: Hold's)."""
    base = short_dir("pch")
    holds = [Hold(base, n, kind) for n in names]
    env = {"POSTCOMPACT_FAILPOINTS": ";".join(h.env for h in holds)}
    return start_daemon(env=env, config_toml=config_toml, runtime_dir=base), holds
