"""A PostgreSQL server for the benchmarks (B7's PostgreSQL steps, B9).

`BENCH_PG_URL` names one to use (a libpq URL of a database whose role may CREATE DATABASE; its
host a Unix socket directory or 127.0.0.1, nothing else); without it a throwaway cluster is
started as the tests and the soak start theirs (tests/pg_cluster.py: `initdb` in a fresh /tmp
directory, a Unix socket only, trust authentication, as the unprivileged `postcompact-pg` when
run as root), with `fsync=on` (the server's default), its processes pinned to the client CPU so
that the daemon keeps its core to itself, and stopped at the end. `make bench` installs the
server first (`make postgres-server`).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from bench import _measure as m

ENV_URL = "BENCH_PG_URL"
_LOOPBACK = ("127.0.0.1",)


class PgUnavailable(RuntimeError):
    """No server to measure on: the message says why."""


def _check_local(url: str) -> None:
    """PgUnavailable unless `url` reaches a Unix socket or 127.0.0.1 only."""
    import psycopg

    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise PgUnavailable(f"{ENV_URL} is not a libpq URL: {exc}") from None
    hosts = [h for h in str(info.get("host") or "").split(",") if h]
    addrs = [h for h in str(info.get("hostaddr") or "").split(",") if h]
    if not hosts and not addrs:
        raise PgUnavailable(f"{ENV_URL} must name its host: a Unix socket directory or 127.0.0.1")
    bad = [h for h in hosts if not h.startswith("/") and h not in _LOOPBACK]
    bad += [h for h in addrs if h not in _LOOPBACK]
    if bad:
        raise PgUnavailable(
            f"{ENV_URL} names {', '.join(bad)}: the benchmarks reach a Unix socket or 127.0.0.1 "
            "only"
        )


class PgServer:
    """A running server: `url(db)` names one of its databases as a daemon's state_url."""

    _names = itertools.count(1)

    def __init__(self, given: str | None = None) -> None:
        self.given = given
        self.cluster: Any = None  # tests.pg_cluster.Cluster when the server is ours
        self.description = ""

    def start(self) -> PgServer:
        if self.given:
            _check_local(self.given)
            self.description = f"the server of {ENV_URL}"
            with self.admin():  # reachable, or PgUnavailable now
                pass
            return self
        from tests.pg_cluster import Cluster, ClusterError

        try:
            self.cluster = Cluster(fsync=True).start()
        except ClusterError as exc:
            raise PgUnavailable(str(exc)) from None
        version = self.cluster.bin.parent.name
        pinned = self._pin()
        self.description = (
            f"a throwaway PostgreSQL {version} cluster (tests/pg_cluster.py: a Unix socket only, "
            f"fsync=on{pinned})"
        )
        return self

    def _pin(self) -> str:
        """The cluster's processes (and the backends it forks later) on the client CPU."""
        try:
            pid = int((self.cluster.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return ""
        done = subprocess.run(
            ["taskset", "-a", "-c", "-p", str(m.CLIENT_CPU), str(pid)],
            capture_output=True,
            check=False,
        )
        return f", pinned to CPU {m.CLIENT_CPU}" if done.returncode == 0 else ""

    def url(self, db: str) -> str:
        if self.cluster is not None:
            return str(self.cluster.url(db))
        assert self.given is not None
        parts = urlsplit(self.given)
        query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k != "dbname"], safe="/")
        return f"{parts.scheme}://{parts.netloc}/{db}" + (f"?{query}" if query else "")

    def maintenance_url(self) -> str:
        return self.given if self.given else self.url("postgres")

    @contextlib.contextmanager
    def admin(self) -> Iterator[Any]:
        """An autocommit connection to the maintenance database (CREATE / DROP DATABASE)."""
        import psycopg

        try:
            conn = psycopg.connect(self.maintenance_url(), autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise PgUnavailable(f"cannot connect to the benchmark's server: {exc}") from None
        try:
            yield conn
        finally:
            conn.close()

    def new_database(self, tag: str, template: str | None = None) -> str:
        """A fresh database (empty, or a copy of `template`); its name."""
        name = f"pcbench_{tag}_{os.getpid()}_{next(self._names)}"
        with self.admin() as conn:
            if template is None:
                conn.execute(f"CREATE DATABASE \"{name}\" ENCODING 'UTF8' TEMPLATE template0")
            else:
                conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        return name

    def drop_database(self, name: str) -> None:
        import psycopg

        with self.admin() as conn, contextlib.suppress(psycopg.Error):
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None


@contextlib.contextmanager
def pg_server() -> Iterator[PgServer]:
    """The benchmarks' server (see the module docstring), stopped at the end when it is ours."""
    server = PgServer(os.environ.get(ENV_URL) or None).start()
    try:
        yield server
    finally:
        server.stop()
