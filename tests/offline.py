"""What the tests that run a real harness offline share (`make parity`, tests/opencode,
tests/claude_code, tests/codex, tests/gemini_cli): a network namespace of their own, its loopback,
a scripted model server on it, the harness's environment, a plugin installed by its README's
install block, the daemon's view of the sessions the plugin opened, and Claude Code's
`--input-format stream-json` conversation (one user line in, JSON objects out until a `result`).
"""

from __future__ import annotations

import http.server
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

from postcompact_client import Client

from tests.packaging.blocks import parse

ROOT = Path(__file__).resolve().parents[1]
# The install blocks name the checkout by this placeholder.
PLACEHOLDER = "/path/to/postcompact"
INSTALL_TIMEOUT_S = 600

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


def serve_loopback(handler: type[http.server.BaseHTTPRequestHandler]) -> http.server.HTTPServer:
    """A scripted model server: `handler` on 127.0.0.1, an ephemeral port, each request in a
    thread, served from a thread of its own until `stop_serving`."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def stop_serving(httpd: http.server.HTTPServer) -> None:
    httpd.shutdown()
    httpd.server_close()


def harness_env(harness_bin: str, base: Path, home: Path, **extra: str) -> dict[str, str]:
    """The environment a harness runs in: its executable's folder first on PATH, HOME and the
    runtime folder (the daemon's default socket) in `base`, and Go's caches of this machine (a
    plugin's install block builds the hook offline from them)."""
    env = {
        "PATH": f"{Path(harness_bin).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "XDG_RUNTIME_DIR": str(base / "run"),
        **extra,
    }
    for var in ("GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS"):
        if os.environ.get(var):
            env[var] = os.environ[var]
    return env


def make_unstartable(env: dict[str, str], base: Path, reason: str) -> None:
    """A daemon that cannot start: the plugin's POSTCOMPACT_BIN exits 1 with `reason`."""
    fake = base / "unstartable-postcompact"
    fake.write_text(f"#!/bin/sh\necho 'postcompact: {reason}' >&2\nexit 1\n")
    fake.chmod(0o755)
    env["POSTCOMPACT_BIN"] = str(fake)


def install_block(readme: str) -> str:
    """The one install block of the plugin README `readme` (relative to the checkout), with the
    checkout's path for its placeholder."""
    blocks = [
        b
        for b in parse(readme, (ROOT / readme).read_text())
        if b.install and b.lang in ("sh", "bash") and not b.synopsis
    ]
    if len(blocks) != 1:
        raise SystemExit(f"{readme}: expected one sh block under Install, found {len(blocks)}")
    return blocks[0].text.replace(PLACEHOLDER, str(ROOT))


def install_plugin(readme: str, env: dict[str, str], base: Path) -> None:
    """Run the install block of `readme` as a user would (bash, stop at the first failure), its
    output in base/install.log."""
    with open(base / "install.log", "wb") as log:
        r = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", install_block(readme)],
            env=env, stdout=log, stderr=subprocess.STDOUT, timeout=INSTALL_TIMEOUT_S, check=False,
        )  # fmt: skip
    if r.returncode != 0:
        tail = (base / "install.log").read_text(errors="replace")[-3000:]
        raise SystemExit(f"the README's install block failed (exit {r.returncode}):\n{tail}")


def daemon_view(env: dict[str, str]) -> list[dict[str, Any]]:
    """The sessions of the daemon the plugin started on `env`'s default socket (id, compactions,
    agents), then that daemon stopped."""
    socket = Path(env["XDG_RUNTIME_DIR"]) / "postcompact" / "daemon.sock"
    if not socket.exists():
        return []
    c = Client(f"unix://{socket}", auto_start=False, timeout=10.0)
    try:
        sessions = [
            {"session_id": s.session_id, "compactions": s.compactions, "agents": list(s.agent_ids)}
            for s in c.list_sessions()
        ]
    finally:
        c.close()
    postcompact = ROOT / ".venv" / "bin" / "postcompact"
    subprocess.run(
        [str(postcompact), "stop"], env=env, capture_output=True, timeout=30, check=False
    )
    return sessions
