"""One Claude Code session, offline, with or without the postcompact plugin
(tests/claude_code/run_e2e.py).

`python -m tests.claude_code.session --claude BIN --dir BASE --mode plugin|control|down` writes a
project under BASE/project, and with `plugin` or `down` installs the plugin into HOME=BASE/home
by running the install block of its README (clients/claude-code/plugins/postcompact/README.md:
the make target, `claude plugin marketplace add`, `claude plugin install`). It then runs
`claude -p --input-format stream-json` in the project against the scripted Messages API
(tests/parity/model_server.py) with three turns: the work (ten Reads, one of them a range of a
file too large for Claude Code's own restoration, an Edit inside that range, a Write, a Skill),
`/compact`, and a prompt after it. It leaves in BASE/capture.json every request the server got,
the stream Claude Code printed, its transcript's records, the project's files and, with the
plugin, what the daemon holds (the plugin started it: no daemon runs before; it is stopped
after). `down` makes the daemon unstartable (POSTCOMPACT_BIN exits 1 with a reason).
run_e2e runs this inside a network namespace of its own when it can (`unshare --net`, as root):
nothing but the loopback is reachable.
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
    daemon_view,
    harness_env,
    install_plugin,
    loopback_up,
    make_unstartable,
    pump_json,
    stream_user_line,
    wait_result,
)
from tests.parity.model_server import ModelServer, Step, ToolCall

ROOT = Path(__file__).resolve().parents[2]
README = "clients/claude-code/plugins/postcompact/README.md"
TURN_TIMEOUT_S = 120
SKILL = "house-style"
SKILL_MARKER = "HOUSE-STYLE-9Z: name things plainly."
DOWN_REASON = "the test made this daemon unstartable"
# Files get mtimes in the past, oldest first in the order they are listed (Claude Code ranks its
# own restoration by them: the newest reads, the edited and the written file are its five).
MTIME_BASE_S = 1_780_000_000
BIG_LINES = 420
RANGE = (100, 40)  # the ranged Read of big.py: offset, limit
EDITED_LINE = 120


def _small(n: int) -> str:
    return "".join(f"# f{n:02d} line {i:02d}: " + "abcdefghij" * 4 + "\n" for i in range(36))


def project_files() -> dict[str, str]:
    files = {f"src/f{n:02d}.py": _small(n) for n in range(1, 10)}
    # Over Claude Code's 5,000-token cap for a restored file: it restores a note, postcompact the
    # lines the agent saw and edited.
    files["src/big.py"] = "".join(
        f"BIG {i:05d} " + "y" * 60 + "\n" for i in range(1, BIG_LINES + 1)
    )
    return files


def script(project: Path) -> dict[int, Step]:
    def p(rel: str) -> str:
        return str(project / rel)

    reads = [ToolCall("Read", {"file_path": p(f"src/f{n:02d}.py")}) for n in range(1, 10)]
    offset, limit = RANGE
    old = f"BIG {EDITED_LINE:05d} " + "y" * 60
    return {
        1: Step(
            calls=(
                *reads,
                ToolCall("Read", {"file_path": p("src/big.py"), "offset": offset, "limit": limit}),
                ToolCall("Skill", {"skill": SKILL}),
                ToolCall(
                    "Edit",
                    {
                        "file_path": p("src/big.py"),
                        "old_string": old,
                        "new_string": f"EDITED {EDITED_LINE:05d} by the agent",
                    },
                ),
                ToolCall("Write", {"file_path": p("src/new.py"), "content": "NEW = 1\n"}),
            )
        ),
        2: Step(),
    }


def write_project(project: Path, home: Path) -> None:
    for i, (rel, text) in enumerate(project_files().items()):
        f = project / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
        t = MTIME_BASE_S + 60 * i
        os.utime(f, (t, t))
    skill = project / ".claude" / "skills" / SKILL / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        f"---\nname: {SKILL}\ndescription: How this project writes Python.\n---\n\n{SKILL_MARKER}\n"
    )
    home.mkdir(parents=True)


def run(claude: str, base: Path, mode: str) -> dict[str, Any]:
    project, home = base / "project", base / "home"
    write_project(project, home)
    env = harness_env(claude, base, home, **CLAUDE_QUIET_ENV)
    if mode == "down":
        make_unstartable(env, base, DOWN_REASON)
    if mode != "control":
        # Before the loopback is up and without the key: offline, Claude Code's plugin commands
        # wait about 18 s each on the API when a key is set.
        install_plugin(README, env, base)
    loopback_up()
    env["ANTHROPIC_API_KEY"] = "sk-ant-claude-code-e2e-not-a-key"
    turns: list[dict[str, Any]] = []
    session_id = ""
    with ModelServer(script(project)) as server:
        env["ANTHROPIC_BASE_URL"] = server.url
        cmd = [claude, "-p", "--input-format", "stream-json", "--output-format", "stream-json"]
        cmd += ["--verbose", "--permission-mode", "acceptEdits"]
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
            objects: queue.Queue[dict[str, Any] | None] = queue.Queue()
            threading.Thread(
                target=pump_json, args=(proc.stdout, objects, out_log), daemon=True
            ).start()
            try:
                for text in ("PARITY-STEP 1", "/compact", "PARITY-STEP 2"):
                    proc.stdin.write(stream_user_line(text))
                    proc.stdin.flush()
                    result, named = wait_result(objects, TURN_TIMEOUT_S)
                    session_id = named or session_id
                    turns.append({"turn": text, "result": result and result.get("subtype")})
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
    state = home / ".local" / "state" / "postcompact" / "hooks"
    version = subprocess.run(
        [claude, "--version"], env=env, capture_output=True, text=True, check=False
    )
    return {
        "mode": mode,
        "claude_code": version.stdout.split()[0] if version.stdout.split() else "",
        "project": str(project),
        "session_id": session_id,
        "turns": turns,
        "exit_code": proc.returncode,
        "files": {
            rel: (project / rel).read_text()
            for rel in [*project_files(), "src/new.py"]
            if (project / rel).exists()
        },
        "requests": [{"kind": e.kind, "step": e.step, "body": e.body} for e in server.log],
        "stream": [
            json.loads(x)
            for x in (base / "claude-stdout.jsonl").read_text().splitlines()
            if x.startswith("{")
        ],
        "transcript": [json.loads(x) for x in transcripts[0].read_text().splitlines()]
        if transcripts
        else [],
        "hook_log": (state / "hook.log").read_text() if (state / "hook.log").exists() else "",
        "backoff_marker": (state / "daemon-start-failed.json").exists(),
        "daemon_sessions": daemon_view(env) if mode == "plugin" else [],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--claude", required=True)
    ap.add_argument("--dir", required=True, type=Path)
    ap.add_argument("--mode", required=True, choices=["plugin", "control", "down"])
    a = ap.parse_args()
    capture = run(a.claude, a.dir, a.mode)
    (a.dir / "capture.json").write_text(json.dumps(capture))
    return 0 if all(t["result"] is not None for t in capture["turns"]) else 1


if __name__ == "__main__":
    sys.exit(main())
