"""Starting the daemon on demand: spawn it detached, then wait for health (docs/clients.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from postcompact_client._errors import DaemonUnavailable

_SPAWNED: list[subprocess.Popen[bytes]] = []  # keep handles: no ResourceWarning on collection


def daemon_command(socket_path: str | None) -> list[str]:
    if os.environ.get("POSTCOMPACT_BIN"):
        cmd = [os.environ["POSTCOMPACT_BIN"]]
    elif shutil.which("postcompact"):
        cmd = [str(shutil.which("postcompact"))]
    else:
        cmd = [sys.executable, "-m", "postcompact"]
    cmd.append("serve")
    if socket_path:
        cmd += ["--socket", socket_path]
    return cmd


def spawn_daemon(socket_path: str | None) -> subprocess.Popen[bytes]:
    """Start `postcompact serve` in its own session with no terminal, never forking this process."""
    cmd = daemon_command(socket_path)
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        raise DaemonUnavailable(
            f"no daemon answered, and starting one failed: {cmd[0]}: {exc.strerror or exc} "
            "(set POSTCOMPACT_BIN to the postcompact executable, or start the daemon)"
        ) from None
    _SPAWNED.append(proc)
    return proc
