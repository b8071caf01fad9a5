"""Starting the daemon on demand (docs/clients.md, "Auto-start"): spawn `postcompact serve
--detached` in its own session, read why it could not start, and decide when to start it again.

A client with auto-start on starts the daemon whenever a call finds none (a transport
UNAVAILABLE), over its whole life, within its `AutoStartPolicy`: at most `max_starts` starts in
any `window` seconds, and after each start a back-off before the next (`initial_backoff`,
doubled after each start that did not bring a daemon up, at most `max_backoff`). A start that
is not allowed yet leaves the call to its retry policy, which asks again at each retry.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import IO

from postcompact_client._errors import DaemonStartFailed

# `postcompact serve` exits with this status when another daemon holds the lock: it lost a race
# to another starter, whose daemon is coming up.
EXIT_ALREADY_RUNNING = 4


@dataclass(frozen=True)
class AutoStartPolicy:
    """How often a client may start the daemon: at most `max_starts` in any `window` seconds;
    after a start, the next waits `initial_backoff` s, doubled after each start that failed, at
    most `max_backoff` s. A daemon found serving is not a start."""

    max_starts: int = 3
    window: float = 60.0
    initial_backoff: float = 1.0
    max_backoff: float = 30.0

    def backoff(self, failures: int) -> float:
        """The wait after a start, when the `failures` starts before it failed in a row."""
        return min(self.max_backoff, self.initial_backoff * 2.0 ** min(failures, 60))


DEFAULT_AUTO_START = AutoStartPolicy()


class Starter:
    """One client's starts (thread-safe: shared by its threads, or its tasks)."""

    START, JOIN, DEFER = "start", "join", "defer"

    def __init__(self, policy: AutoStartPolicy):
        self.policy = policy
        self._lock = threading.Lock()
        self._starts: deque[float] = deque()  # when each start within the window was made
        self._running = False
        self._failures = 0  # starts in a row that did not bring a daemon up
        self._ended = -math.inf  # when the last start ended
        self._spawned_now = False  # the start running spawned a daemon
        self.last_error = ""  # why the last start failed ("" when it did not)

    def begin(self) -> str:
        """START: this caller starts the daemon (and calls `end`); JOIN: another one is
        starting it; DEFER: the policy allows no start now (`why_not` says why)."""
        with self._lock:
            if self._running:
                return self.JOIN
            if self._why_not(time.monotonic()):
                return self.DEFER
            self._running = True
            self._spawned_now = False
            return self.START

    def spawned(self) -> None:
        with self._lock:
            self._starts.append(time.monotonic())
            self._spawned_now = True

    def end(self, error: str = "") -> None:
        """The start is over: `error` says why it failed, "" when a daemon serves."""
        with self._lock:
            self._running = False
            if not self._spawned_now:
                return
            self._ended = time.monotonic()
            self._failures = self._failures + 1 if error else 0
            self.last_error = error

    def why_not(self) -> str:
        """Why the policy allows no start now ("" when it does)."""
        with self._lock:
            return self._why_not(time.monotonic())

    def _why_not(self, now: float) -> str:
        p = self.policy
        while self._starts and now - self._starts[0] >= p.window:
            self._starts.popleft()
        if len(self._starts) >= p.max_starts:
            return (
                f"not started again: {len(self._starts)} starts in the last {p.window:g} s, "
                "the most its AutoStartPolicy allows"
            )
        wait = self._ended + p.backoff(max(0, self._failures - 1)) - now
        if wait > 0:
            last = (
                f"the last start failed ({self.last_error})"
                if self.last_error
                else f"the daemon was started {now - self._ended:.1f} s ago"
            )
            return f"not started again yet: {last}; the next start may come in {wait:.1f} s"
        return ""


def daemon_command(socket_path: str | None) -> list[str]:
    if os.environ.get("POSTCOMPACT_BIN"):
        cmd = [os.environ["POSTCOMPACT_BIN"]]
    elif shutil.which("postcompact"):
        cmd = [str(shutil.which("postcompact"))]
    else:
        cmd = [sys.executable, "-m", "postcompact"]
    cmd += ["serve", "--detached"]
    if socket_path:
        cmd += ["--socket", socket_path]
    return cmd


def first_error_line(text: str) -> str:
    """What a daemon that could not start said, in one line: its first `postcompact: ...`
    line, else its last non-empty one (a traceback's exception)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("postcompact:"):
            return line
    return lines[-1] if lines else ""


class Spawned:
    """A daemon this client spawned: its process and what it wrote to stderr while starting
    (`serve --detached` stops writing there once it serves: its log file takes over)."""

    def __init__(self, proc: subprocess.Popen[bytes], errors: IO[bytes], cmd: list[str]):
        self.proc = proc
        self.errors = errors
        self.cmd = cmd

    def exited(self) -> int | None:
        """Its exit status once it has exited (an exit 4, another daemon holding the lock, is
        not reported: that daemon is coming up)."""
        status = self.proc.poll()
        return None if status == EXIT_ALREADY_RUNNING else status

    def said(self) -> str:
        self.errors.seek(0)
        return first_error_line(self.errors.read(64 * 1024).decode(errors="replace"))

    def describe_exit(self, status: int) -> str:
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        said = self.said()
        return (
            f"the postcompact daemon (pid {self.proc.pid}, {' '.join(self.cmd)}) {how} before "
            f"serving" + (f": {said}" if said else "")
        )

    def close(self) -> None:
        self.errors.close()


def spawn_daemon(socket_path: str | None) -> Spawned:
    """Start `postcompact serve --detached` in its own session with no terminal, never forking
    this process; its stderr goes to a temporary file this client reads if it fails to start."""
    cmd = daemon_command(socket_path)
    errors = tempfile.TemporaryFile()  # noqa: SIM115 (kept by Spawned until the start ends)
    try:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        errors.close()
        raise DaemonStartFailed(
            f"no daemon answered, and starting one failed: {cmd[0]}: {exc.strerror or exc} "
            "(set POSTCOMPACT_BIN to the postcompact executable, or start the daemon)"
        ) from None
    # The daemon outlives this client in its own session; while both live, a thread reaps it
    # when it exits (a long-lived client that starts it again leaves no zombies).
    threading.Thread(target=proc.wait, name="postcompact-reaper", daemon=True).start()
    return Spawned(proc, errors, cmd)
