"""One scenario through the real Claude Code, offline (docs/parity.md).

`python -m tests.parity.session --claude BIN --scenario NAME --dir DIR` writes the project under
DIR/project, runs Claude Code there with HOME=DIR/home against the scripted model server, feeds
it the scenario's turns over `--input-format stream-json` (each turn waits for the result of the
one before), and leaves in DIR/capture.json every request the server got and the path of the
transcript Claude Code wrote. `tests.parity.__main__` runs it inside a network namespace of its
own when it can (`unshare -n`, as root), so nothing but the loopback is reachable.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from tests.parity.model_server import ModelServer
from tests.parity.scenarios import SCENARIOS, Delete, Prompt

TURN_TIMEOUT_S = 90
# Nothing of Claude Code's own is to reach out: no updater, no telemetry, no other traffic.
QUIET_ENV = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
}


def _loopback_up() -> None:
    """In a fresh network namespace the loopback starts down."""
    if shutil.which("ip"):
        subprocess.run(["ip", "link", "set", "lo", "up"], check=False, capture_output=True)


def _user_line(text: str) -> bytes:
    msg = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}
    return (json.dumps(msg) + "\n").encode()


def _pump(stream: IO[bytes], out: queue.Queue[dict[str, Any] | None], log: IO[bytes]) -> None:
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


def run(claude: str, scenario_name: str, base: Path) -> dict[str, Any]:
    project, home = base / "project", base / "home"
    project.mkdir(parents=True)
    home.mkdir(parents=True)
    scenario = SCENARIOS[scenario_name](str(project))
    scenario.write(project, home)
    _loopback_up()
    with ModelServer(scenario.steps) as server:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-ant-parity-not-a-key",
            **QUIET_ENV,
        }
        cmd = [
            claude,
            "-p",
            "--input-format", "stream-json",
            "--output-format", "stream-json",
            "--verbose",
            "--permission-mode", scenario.permission_mode,
        ]  # fmt: skip
        if scenario.allowed_tools:
            cmd += ["--allowedTools", *scenario.allowed_tools]
        if scenario.mcp:
            config = base / "mcp.json"
            server_py = str(Path(__file__).with_name("mcp_server.py"))
            servers = {
                "parity-notes": {"type": "stdio", "command": sys.executable, "args": [server_py]}
            }
            config.write_text(json.dumps({"mcpServers": servers}))
            cmd += ["--mcp-config", str(config), "--strict-mcp-config"]
        with (
            open(base / "claude-stdout.jsonl", "wb") as out_log,
            open(base / "claude-stderr.txt", "wb") as err_log,
        ):
            proc = subprocess.Popen(
                cmd, cwd=project, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=err_log,
            )  # fmt: skip
            assert proc.stdin is not None
            assert proc.stdout is not None
            results: queue.Queue[dict[str, Any] | None] = queue.Queue()
            threading.Thread(
                target=_pump, args=(proc.stdout, results, out_log), daemon=True
            ).start()
            turns: list[dict[str, Any]] = []
            session_id = ""
            try:
                for turn in scenario.turns:
                    if isinstance(turn, Delete):
                        (project / turn.path).unlink()
                        turns.append({"delete": turn.path})
                        continue
                    text = f"PARITY-STEP {turn.step}" if isinstance(turn, Prompt) else turn.text
                    proc.stdin.write(_user_line(text))
                    proc.stdin.flush()
                    t0, result = time.monotonic(), None
                    while time.monotonic() - t0 < TURN_TIMEOUT_S:
                        try:
                            obj = results.get(timeout=1)
                        except queue.Empty:
                            continue
                        if obj is None:
                            break
                        session_id = str(obj.get("session_id") or session_id)
                        if obj.get("type") == "result":
                            result = obj
                            break
                    turns.append(
                        {"turn": text, "result": None if result is None else result.get("subtype")}
                    )
                    if result is None:
                        break
            finally:
                proc.stdin.close()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    transcripts = sorted((home / ".claude" / "projects").glob("*/*.jsonl"))
    version = subprocess.run(
        [claude, "--version"], check=False, capture_output=True, text=True, env=env
    )
    capture = {
        "scenario": scenario_name,
        "claude_code": version.stdout.strip(),
        "project": str(project),
        "home": str(home),
        "session_id": session_id,
        "turns": turns,
        "exit_code": proc.returncode,
        "transcript": str(transcripts[0]) if transcripts else "",
        "requests": [
            {"path": e.path, "kind": e.kind, "step": e.step, "body": e.body} for e in server.log
        ],
    }
    (base / "capture.json").write_text(json.dumps(capture))
    return capture


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--claude", required=True)
    ap.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    ap.add_argument("--dir", required=True, type=Path)
    args = ap.parse_args()
    cap = run(args.claude, args.scenario, args.dir)
    done = all(t.get("result", "x") is not None for t in cap["turns"])
    return 0 if done and cap["transcript"] else 1


if __name__ == "__main__":
    sys.exit(main())
