"""Starting the daemon on demand: spawn it detached, then wait for health (docs/clients.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

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
    proc = subprocess.Popen(
        daemon_command(socket_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    _SPAWNED.append(proc)
    return proc
