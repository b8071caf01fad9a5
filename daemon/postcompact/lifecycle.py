"""Runtime paths, the single-instance lock, server.json and the TCP token file
(docs/architecture.md §5).

Layout of the runtime directory (default `$XDG_RUNTIME_DIR/postcompact/`, fallback
`/tmp/postcompact-<uid>/`; with `--socket PATH` it is the socket's directory):

    daemon.sock   the gRPC Unix socket (0600)
    daemon.lock   flock'ed by the serving daemon for its whole life (grpc would otherwise silently
                  take over a live socket)
    server.json   pid, version, api_version, socket, address, tcp_port, tcp_address, token_file,
                  started_at_ms
                  (written atomically once serving; removed on shutdown) — see docs/clients.md
    token         the bearer token TCP clients must send (0600), only with --tcp-port
    tcp.sock      the gRPC server the TCP front forwards to (0600), only with --tcp-port
                  (tcpfront.py: the daemon itself accepts on the TCP port)

The directory must be owned by the current user with no group/other permissions; an existing
directory that is not is refused, never "fixed".
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import ipaddress
import json
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SOCKET_NAME = "daemon.sock"
LOCK_NAME = "daemon.lock"
SERVER_JSON = "server.json"
TOKEN_NAME = "token"
TCP_SOCKET_NAME = "tcp.sock"
# sockaddr_un.sun_path is 108 bytes including the terminating NUL.
MAX_SOCKET_PATH_BYTES = 107


class LifecycleError(Exception):
    """A start-up problem reported to the user as one clear line (exit code 1)."""


class AlreadyRunning(LifecycleError):
    """Another daemon holds the instance lock (exit code 4: a starter that raced another one
    waits for that daemon rather than reporting a failure)."""


def default_runtime_dir(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    xdg = env.get("XDG_RUNTIME_DIR", "")
    if xdg:  # docs/clients.md: set and non-empty (every client computes the same path)
        return Path(xdg) / "postcompact"
    return Path(f"/tmp/postcompact-{os.getuid()}")


def default_socket_path(env: dict[str, str] | None = None) -> Path:
    return default_runtime_dir(env) / SOCKET_NAME


@dataclass(frozen=True, slots=True)
class RuntimePaths:
    dir: Path
    socket: Path
    lock: Path
    server_json: Path
    token: Path
    tcp_socket: Path

    @classmethod
    def for_socket(cls, socket: Path) -> RuntimePaths:
        socket = Path(os.path.abspath(socket))
        d = socket.parent
        return cls(d, socket, d / LOCK_NAME, d / SERVER_JSON, d / TOKEN_NAME, d / TCP_SOCKET_NAME)


def check_socket_path(socket: Path) -> None:
    n = len(os.fsencode(str(socket)))
    if n > MAX_SOCKET_PATH_BYTES:
        raise LifecycleError(
            f"socket path is {n} bytes, over the {MAX_SOCKET_PATH_BYTES}-byte limit of Unix "
            f"sockets: {socket} (choose a shorter --socket or XDG_RUNTIME_DIR)"
        )


def make_private_dirs(d: Path) -> None:
    """`d` and every missing parent created 0700 (`mkdir(parents=True)` would give the parents
    the umask's mode, 0777 under umask 000); existing directories are left as they are."""
    missing = []
    p = d
    while not p.exists():
        missing.append(p)
        p = p.parent
    for q in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another process made it meanwhile
            q.mkdir(mode=0o700)


def socket_dir_advice(socket: Path, env: dict[str, str] | None = None) -> str:
    """What to do when the directory of a socket named with --socket (or `socket` in
    config.toml) is not private: put the socket in a private directory. Never to change that
    directory: it may be /tmp, or anything else other users or programs rely on."""
    private = socket.parent / f"postcompact-{os.getuid()}"
    return (
        f"put the socket in a private directory: `mkdir -m 700 {private}` and "
        f"--socket {private / socket.name}, or leave --socket out for the default, "
        f"{default_socket_path(env)}, whose directory postcompact makes private itself"
    )


def ensure_private_dir(d: Path, what: str = "runtime directory", advice: str | None = None) -> None:
    """Create `d` with mode 0700, or check that the existing one is ours and private (the
    runtime directory, and the state directory: another user's, or a shared one, could swap or
    read what the daemon keeps there). `advice` replaces the default fix (`chmod 700 d`, for a
    directory that is postcompact's own) in the error."""
    try:
        d.mkdir(mode=0o700, parents=False)
    except FileNotFoundError:
        make_private_dirs(d)
    except FileExistsError:
        pass
    st = os.lstat(d)
    if not stat.S_ISDIR(st.st_mode):
        raise LifecycleError(f"{what} {d} exists and is not a directory")
    if st.st_uid != os.getuid():
        raise LifecycleError(
            f"{what} {d} is owned by uid {st.st_uid}, not by you (uid {os.getuid()}); "
            "refusing to use it" + (f": {advice}" if advice else "")
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        fix = f"; {advice}" if advice else f". Fix it with: chmod 700 {d}"
        raise LifecycleError(f"{what} {d} has mode {mode:04o}; it must be private (0700){fix}")


def ensure_socket_dir(socket: Path) -> None:
    """The socket's directory, created or checked private. The default runtime directory is
    postcompact's own (`chmod 700` is the fix); a socket named elsewhere lives in a directory
    that may be anyone's, /tmp included: the fix is another directory."""
    d = socket.parent
    if os.path.abspath(d) == os.path.abspath(default_runtime_dir()):
        ensure_private_dir(d)
    else:
        ensure_private_dir(d, "the socket's directory", socket_dir_advice(socket))


def held_elsewhere(lock: Path) -> bool:
    """True when another process holds a flock on `lock` (this one does not take it)."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


class FileLock:
    """An exclusive, non-blocking flock on `path`, held until `release`. The lock file stays:
    unlinking it would let a racing process lock a different inode."""

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def busy(self) -> Exception:
        """The error `acquire` raises when another process holds the lock."""
        return LifecycleError(f"{self.path} is locked by another process")

    def taken(self, fd: int) -> None:
        """Called with the locked descriptor once the lock is held."""

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise self.busy() from None
            raise
        self.taken(fd)
        self._fd = fd

    def held_elsewhere(self) -> bool:
        """True when another process holds the lock (this one does not take it)."""
        return held_elsewhere(self.path)

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


class InstanceLock(FileLock):
    """The daemon's single-instance lock, held for its lifetime; the file holds its pid."""

    def busy(self) -> Exception:
        owner = read_server_json(self.path.parent / SERVER_JSON)
        pid = f" (pid {owner['pid']})" if owner and "pid" in owner else ""
        return AlreadyRunning(
            f"another postcompact daemon is already running{pid}: "
            f"{self.path} is locked; use `postcompact status` or `postcompact stop`"
        )

    def taken(self, fd: int) -> None:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())

    def holder(self) -> int | None:
        """The pid of the daemon holding the lock (it writes its pid into the file), or None
        when nobody holds it: a pid from a stale server.json may belong to anything by now."""
        if not held_elsewhere(self.path):
            return None
        try:
            text = self.path.read_text().strip()
        except OSError:
            return None
        return int(text) if text.isdigit() else None


def atomic_write(path: Path, data: bytes, mode: int = 0o600) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        os.write(fd, data)
        os.fsync(fd)
        os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_server_json(path: Path, info: dict[str, Any]) -> None:
    atomic_write(path, (json.dumps(info, indent=2, sort_keys=True) + "\n").encode())


def read_server_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def remove_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def remove_socket(path: Path) -> None:
    """Remove the Unix socket at `path`, if any; LifecycleError if something else is there (a
    mistyped --socket must not delete a user's file)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise LifecycleError(
            f"{path} exists and is not a socket; refusing to replace it (choose another --socket)"
        )
    remove_quietly(path)


def create_token(path: Path) -> str:
    """A fresh random bearer token, written to a 0600 file (a new one each start)."""
    token = secrets.token_urlsafe(32)
    atomic_write(path, (token + "\n").encode(), 0o600)
    return token


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


DEFAULT_TCP_HOST = "127.0.0.1"


def loopback_host(value: str) -> str:
    """The address to bind the TCP listener to: `value` when it is a loopback address
    (127.0.0.0/8 or ::1; "localhost" means 127.0.0.1), else a LifecycleError. TCP is a
    convenience for harnesses that cannot use Unix sockets, never a network service: anything
    reachable from another host is refused, never "fixed"."""
    host = str(value).strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host.lower() == "localhost":
        return DEFAULT_TCP_HOST
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        addr = None
    if addr is None or not addr.is_loopback:
        raise LifecycleError(
            f"tcp_host {value!r} is not a loopback address: the TCP listener only binds "
            "127.0.0.1 (or ::1); other local users and other hosts must not reach the daemon"
        )
    return str(addr)


def tcp_bind_address(host: str, port: int) -> str:
    """`host:port` for grpc's add_insecure_port (IPv6 in brackets); the host must be loopback."""
    host = loopback_host(host)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
