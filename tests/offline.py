"""What the tests that run a real harness offline share (`make parity`, tests/opencode,
tests/claude_code): a network namespace of their own, its loopback, and Claude Code's
`--input-format stream-json` conversation (one user line in, JSON objects out until a `result`).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import time
from typing import IO, Any

# Nothing of Claude Code's own is to reach out: no updater, no telemetry, no other traffic.
CLAUDE_QUIET_ENV = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
}


def isolation() -> list[str]:
    """The command prefix that gives a run a network namespace of its own (root only)."""
    if os.geteuid() == 0 and shutil.which("unshare"):
        return ["unshare", "--net"]
    return []


def loopback_up() -> None:
    """In a fresh network namespace the loopback starts down."""
    if shutil.which("ip"):
        subprocess.run(["ip", "link", "set", "lo", "up"], check=False, capture_output=True)


def stream_user_line(text: str) -> bytes:
    """One user message for `claude -p --input-format stream-json`."""
    msg = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}
    return (json.dumps(msg) + "\n").encode()


def pump_json(stream: IO[bytes], out: queue.Queue[dict[str, Any] | None], log: IO[bytes]) -> None:
    """Copies `stream` to `log` and puts each JSON object line on `out`; None at the end."""
    for line in stream:
        log.write(line)
        log.flush()
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.put(obj)
    out.put(None)


def wait_result(
    objects: queue.Queue[dict[str, Any] | None], timeout_s: float
) -> tuple[dict[str, Any] | None, str]:
    """The next `result` object of a stream-json run (None: the stream ended or the time ran
    out), and the session id the objects on the way named ("" when none did)."""
    t0, session_id = time.monotonic(), ""
    while time.monotonic() - t0 < timeout_s:
        try:
            obj = objects.get(timeout=1)
        except queue.Empty:
            continue
        if obj is None:
            return None, session_id
        session_id = str(obj.get("session_id") or session_id)
        if obj.get("type") == "result":
            return obj, session_id
    return None, session_id
