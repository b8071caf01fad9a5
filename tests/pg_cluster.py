"""A throwaway PostgreSQL cluster for the tests and the soak (docs/fleet.md, "Testing").

Debian's server binaries (`make test-postgres` installs the `postgresql` package when they are
missing), a cluster made by `initdb` in a fresh /tmp directory, listening only on a Unix socket
in that directory (no TCP), trust authentication for local connections. PostgreSQL refuses to
run as root, and CI runs as root: then the cluster runs as the unprivileged system user
`postcompact-pg`, created here when missing. Nothing is skipped: a cluster that cannot start
raises `ClusterError` with the reason (and the server's log).
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

USER = "postcompact-pg"
SUPERUSER = "postgres"  # the cluster's superuser (initdb -U), whoever runs it
_START_TIMEOUT_S = 60


class ClusterError(RuntimeError):
    """The cluster could not be made or started; the message says why."""


def server_bin() -> Path:
    """The directory of the newest installed server's binaries."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=_major)
    if not found:
        raise ClusterError(
            "PostgreSQL's server is not installed (no /usr/lib/postgresql/*/bin/postgres): "
            "`make test-postgres` installs Debian's `postgresql` package"
        )
    return Path(found[-1]).parent


def _major(path: str) -> int:
    try:
        return int(Path(path).parts[4])
    except (IndexError, ValueError):
        return 0


def _ensure_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        pass
    done = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 9):  # 9: created meanwhile by another run
        raise ClusterError(f"cannot create the user {USER}: {done.stderr.strip()}")
    return pwd.getpwnam(USER)


class Cluster:
    """One running cluster; `url(db)` names a database of it as the daemon's state_url."""

    _names = itertools.count(1)

    def __init__(self, *, fsync: bool = True) -> None:
        self.bin = server_bin()
        self.root = Path(tempfile.mkdtemp(prefix="pcpg", dir="/tmp"))
        self.data = self.root / "data"
        self.socket_dir = self.root  # .s.PGSQL.5432 lives here
        self.log = self.root / "server.log"
        self._as: list[str] = []
        if os.geteuid() == 0:
            user = _ensure_user()
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", USER, "--"]
        self.fsync = fsync
        self.started = False

    def _run(self, *cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self._as, *cmd],
            capture_output=True,
            text=True,
            check=False,
            timeout=_START_TIMEOUT_S,
            cwd="/",  # runuser's user may not enter the caller's directory
        )

    def start(self) -> Cluster:
        init = self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        if init.returncode != 0:
            raise ClusterError(f"initdb failed: {init.stderr.strip() or init.stdout.strip()}")
        options = (
            f"-c listen_addresses='' -c unix_socket_directories='{self.socket_dir}' "
            f"-c fsync={'on' if self.fsync else 'off'} -c max_connections=100"
        )
        start = self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-o",
            options,
            "-w",
            "-t",
            str(_START_TIMEOUT_S),
            "start",
        )
        if start.returncode != 0:
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            raise ClusterError(
                f"the PostgreSQL server did not start: {start.stderr.strip()}\n{log}"
            )
        self.started = True
        return self

    def url(self, db: str = "postgres") -> str:
        return f"postgresql:///{db}?host={self.socket_dir}&user={SUPERUSER}"

    def psql(self, sql: str, db: str = "postgres") -> str:
        """Run `sql` as the superuser; its output (unaligned, tuples only). Raises on error."""
        done = subprocess.run(
            [
                str(self.bin / "psql"),
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                str(self.socket_dir),
                "-U",
                SUPERUSER,
                "-d",
                db,
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if done.returncode != 0:
            raise ClusterError(f"psql {sql!r}: {done.stderr.strip()}")
        return done.stdout.strip()

    def new_database(self, tag: str = "t") -> str:
        """A fresh empty database; returns its state_url."""
        name = f"pc_{tag}_{os.getpid()}_{next(self._names)}"
        self.psql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.started:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
            self.started = False
        with contextlib.suppress(OSError):
            shutil.rmtree(self.root)


def database_of(url: str) -> str:
    """The database name of a `url()`."""
    return url.split("///", 1)[1].split("?", 1)[0]
