"""The postcompact OpenCode plugin (clients/opencode) in the real OpenCode, offline, end to end.

`python -m tests.opencode.run_e2e` (and `make test`, through tests/opencode/test_opencode.py):

1. installs the pinned OpenCode (`opencode-ai`, from the npm registry) into .cache/ when it is not
   there, and builds the plugin (`npm ci` in clients/opencode, whose `prepare` also builds the
   Node client it links to when that is not built);
2. starts a daemon on a socket of its own;
3. runs `tests.opencode.session` three times, each in a network namespace of its own when root
   (`unshare --net`: nothing but the loopback is reachable): with the plugin and that daemon's
   address; with the plugin, no daemon running and none named, and no `postcompact` on PATH (the
   plugin finds the checkout's `.venv/bin/postcompact` and starts the daemon itself); and
   `--pure` (without the plugin, the control). The scripted model makes OpenCode read two files,
   load a project skill, try an edit that fails, edit one file and write a third, then reports a
   context nearly full, so OpenCode compacts on its own;
4. checks that the first request after the summary carries every one of those files as the
   daemon restored it, re-read from disk (the edited text, Read-numbered), in the user message
   after the summary, and the skill's instructions, and not the file of the failed edit; that
   the next request still does; that OpenCode alone sends none of it;
   that the daemon saw the session and one compaction; and that the plugin said so in
   OpenCode's log, at INFO (and nothing at WARN).

Prints `opencode <version>: restored files reached the model after compaction` when it passes;
raises AssertionError (exit 1) otherwise. `OPENCODE_E2E_KEEP=DIR` keeps the runs' files.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from postcompact_client import Client

from tests.daemon.conftest import start_daemon
from tests.npm_pinned import install_pinned
from tests.offline import isolation
from tests.opencode.model_server import SUMMARY, text_of
from tests.opencode.session import SKILL_MARKER, SKILL_NAME

OPENCODE_PACKAGE = "opencode-ai"
OPENCODE_VERSION = "1.18.33"
ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "opencode" / OPENCODE_VERSION
PLUGIN = ROOT / "clients" / "opencode"
SESSION_TIMEOUT_S = 240
NPM = ["--no-audit", "--no-fund", "--loglevel", "error"]


def opencode_binary() -> Path:
    """The pinned OpenCode executable, installed from the npm registry when missing."""
    binary = CACHE / "node_modules" / ".bin" / "opencode"
    return install_pinned(CACHE, OPENCODE_PACKAGE, OPENCODE_VERSION, binary, "opencode e2e")


def build_plugin() -> Path:
    """clients/opencode installed (its lockfile) and built; returns the directory OpenCode loads."""
    if not (PLUGIN / "node_modules" / "typescript").is_dir():
        subprocess.run(["npm", "ci", *NPM], cwd=PLUGIN, check=True)  # `prepare` builds it
    else:
        subprocess.run(["npm", "run", "--silent", "build"], cwd=PLUGIN, check=True)
    if not (PLUGIN / "dist" / "index.js").is_file():
        raise SystemExit("opencode e2e: the plugin did not build")
    return PLUGIN


def run_session(
    opencode: Path, base: Path, *, address: str | None = None, runtime: Path | None = None,
    pure: bool = False,
) -> dict[str, Any]:  # fmt: skip
    where = ["--address", address] if address else ["--runtime-dir", str(runtime)]
    cmd = [*isolation(), sys.executable, "-m", "tests.opencode.session"]
    cmd += ["--opencode", str(opencode), "--plugin", str(PLUGIN), *where]
    cmd += ["--dir", str(base), *(["--pure"] if pure else [])]
    r = subprocess.run(cmd, cwd=ROOT, timeout=SESSION_TIMEOUT_S, check=False)
    capture = base / "capture.json"
    if r.returncode != 0 or not capture.is_file():
        err = base / "opencode-stderr.txt"
        tail = err.read_text(errors="replace")[-3000:] if err.is_file() else ""
        raise AssertionError(
            f"opencode e2e: the run did not complete (exit {r.returncode})\n{tail}"
        )
    data: dict[str, Any] = json.loads(capture.read_text())
    return data


def after_summary(capture: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """The messages of each main request after the compaction, in order."""
    kinds = [r["kind"] for r in capture["requests"]]
    assert "compaction" in kinds, f"OpenCode did not compact: {kinds}"
    return [
        r["body"]["messages"]
        for r in capture["requests"]
        if r["kind"] == "main" and r["phase"] == "after"
    ]


def numbered(text: str) -> list[str]:
    """A file's lines as a Read result numbers them (`N\\tline`)."""
    return [f"{i}\t{line}" for i, line in enumerate(text.split("\n")[:-1], 1)]


def user_after_summary(messages: list[dict[str, Any]]) -> str:
    """The text of the first user message after OpenCode's summary."""
    at = next(
        i
        for i, m in enumerate(messages)
        if m["role"] == "assistant" and SUMMARY.strip() in text_of(m)
    )
    user = next(m for m in messages[at + 1 :] if m["role"] == "user")
    return text_of(user)


def check(capture: dict[str, Any], control: dict[str, Any], daemon_sessions: list[Any]) -> None:
    project, files = capture["project"], capture["files"]
    assert files["a.py"].count("return 2") == 1, f"the edit did not happen: {files}"
    assert files["d.py"] == "def h():\n    return 4\n", f"the failing edit changed d.py: {files}"
    assert "c.py" in files, f"the write did not happen: {files}"
    for c in (capture, control):  # nothing failed, nothing tried the network
        assert not c["warnings"], "OpenCode warned:\n" + "\n".join(c["warnings"])
    requests = after_summary(capture)
    assert len(requests) >= 2, f"expected two requests after the summary, got {len(requests)}"
    for n, messages in enumerate(requests[:2], 1):
        text = user_after_summary(messages)
        for name in ("a.py", "b.py", "c.py"):
            path = f"{project}/{name}"
            assert path in text, (
                f"request {n} after the compaction: {name} was not restored:\n{text[:2000]}"
            )
            missing = [line for line in numbered(files[name]) if line not in text]
            assert not missing, f"request {n}: {name} restored without {missing!r}"
            # In OpenCode's own words: its read tool's path key, no Claude Code tool named.
            assert f'{{"filePath":"{path}"}}' in text, f"request {n}: {name}'s call not OpenCode's"
        assert "Read tool" not in text, f"request {n}: Claude Code's wording:\n{text[:2000]}"
        # The skill the agent loaded comes back; the file of the failed edit does not.
        assert SKILL_MARKER in text, f"request {n}: the skill's instructions are missing"
        assert f"Skill: {SKILL_NAME}" in text, f"request {n}: the skill's name is missing"
        assert f"{project}/d.py" not in text, f"request {n}: the failed edit's file restored"
    # OpenCode on its own (no plugin): the same run restores nothing after its summary.
    alone = user_after_summary(after_summary(control)[0])
    for name in ("a.py", "b.py", "c.py"):
        assert f"{control['project']}/{name}" not in alone, f"OpenCode alone restored {name}?"
    assert SKILL_MARKER not in alone, "OpenCode alone restored the skill?"
    ours = [s for s in daemon_sessions if s.session_id.startswith("opencode-")]
    assert len(ours) == 1, f"expected one OpenCode session on the daemon: {daemon_sessions}"
    assert ours[0].compactions == 1, f"the daemon saw {ours[0].compactions} compactions"
    # What the plugin told OpenCode's log (INFO, so that a user sees it with --print-logs).
    said = capture["plugin_log"]
    for what in ("connected to the daemon at", "restored 3 file(s) and 1 skill(s)"):
        assert any("level=INFO" in line and what in line for line in said), (
            f"no INFO {what!r}: {said}"
        )


def started_daemon(runtime: Path) -> tuple[int, str]:
    """The pid and address of the daemon the plugin started, from its D/server.json."""
    announced = runtime / "postcompact" / "server.json"
    assert announced.is_file(), f"the plugin started no daemon (no {announced})"
    info = json.loads(announced.read_text())
    return int(info["pid"]), str(info["address"])


def stop_started(runtime: Path, pid: int) -> None:
    """SIGTERM to the daemon the plugin started; until it is gone (server.json removed), 30 s."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 30
    while (runtime / "postcompact" / "server.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def main() -> int:
    opencode = opencode_binary()
    build_plugin()
    keep = os.environ.get("OPENCODE_E2E_KEEP")
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="pcopencode-"))
    base.mkdir(parents=True, exist_ok=True)
    daemon = start_daemon(["--no-persist"])
    runtime = base / "autostart-run"
    try:
        for d in ("plugin", "autostart", "autostart-run", "pure"):
            shutil.rmtree(base / d, ignore_errors=True)
        with_plugin = run_session(opencode, base / "plugin", address=daemon.address)
        control = run_session(opencode, base / "pure", address=daemon.address, pure=True)
        check(with_plugin, control, daemon.client.list_sessions())
        # No daemon, none named, no postcompact on PATH: the plugin starts one itself.
        autostart = run_session(opencode, base / "autostart", runtime=runtime)
        _, address = started_daemon(runtime)
        with Client(address) as own:
            check(autostart, control, own.list_sessions())
        starts = [line for line in autostart["plugin_log"] if "connected to the daemon" in line]
        assert any("daemonBinFrom=checkout" in line for line in starts), starts
    finally:
        if (runtime / "postcompact" / "server.json").is_file():
            stop_started(runtime, started_daemon(runtime)[0])
        daemon.stop()
        shutil.rmtree(daemon.dir, ignore_errors=True)
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    print(
        f"opencode {with_plugin['opencode']}: restored files reached the model after compaction",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
