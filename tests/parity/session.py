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
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.offline import (
    CLAUDE_QUIET_ENV,
    loopback_up,
    pump_json,
    stream_user_line,
    wait_result,
)
from tests.parity.model_server import ModelServer
from tests.parity.scenarios import SCENARIOS, Delete, Prompt

TURN_TIMEOUT_S = 90


def run(claude: str, scenario_name: str, base: Path) -> dict[str, Any]:
    project, home = base / "project", base / "home"
    project.mkdir(parents=True)
    home.mkdir(parents=True)
    scenario = SCENARIOS[scenario_name](str(project))
    scenario.write(project, home)
    loopback_up()
    with ModelServer(scenario.steps) as server:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-ant-parity-not-a-key",
            **CLAUDE_QUIET_ENV,
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
                target=pump_json, args=(proc.stdout, results, out_log), daemon=True
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
                    proc.stdin.write(stream_user_line(text))
                    proc.stdin.flush()
                    result, named = wait_result(results, TURN_TIMEOUT_S)
                    session_id = named or session_id
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
