"""One Codex CLI session, offline, with or without the postcompact plugin (tests/codex/run_e2e.py).

`python -m tests.codex.session --codex BIN --dir BASE --mode plugin|control|down` writes a project
under BASE/project and a Codex configuration under HOME=BASE/home (`~/.codex/config.toml`: the
scripted Responses API of tests/codex/model_server.py as the model provider, no approvals, no
sandbox, `model_auto_compact_token_limit`). With `plugin` or `down` it installs the plugin by
running the install block of its README (clients/codex/README.md: the make target, `codex plugin
marketplace add`, `codex plugin add`, `postcompact-hook --codex-trust`; no
`--dangerously-bypass-hook-trust` anywhere). It then runs `codex exec` in the project, whose
scripted model reads files through shell commands (whole with `cat`, one as a range with `sed -n`,
one through a pipe, which is not a plain read) and edits the ranged file with apply_patch (inside
its range, and the line after it); the last of those answers reports more input tokens than the
limit, so Codex compacts on its own before its next request. Then `codex exec resume --last` runs
one more turn. It leaves in BASE/capture.json every request the server got, Codex's JSON events,
the project's files and, with the plugin, the hook's log and what the daemon holds (the plugin
started it: no daemon runs before; it is stopped after). `down` makes the daemon unstartable
(POSTCOMPACT_BIN exits 1 with a reason). run_e2e runs this inside a network namespace of its own
when it can (`unshare --net`, as root): nothing but the loopback is reachable.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.codex.model_server import Call, ModelServer, Step
from tests.offline import daemon_view, harness_env, install_plugin, loopback_up, make_unstartable

ROOT = Path(__file__).resolve().parents[2]
README = "clients/codex/README.md"
TURN_TIMEOUT_S = 180
AUTO_COMPACT_LIMIT = 5000
SMALL_FILES = 6
BIG_LINES = 300
RANGE = (100, 139)  # the sed -n read of big.py: first and last line
EDITED_LINES = (120, 140)  # one inside the range read, one just after it
PIPED = "src/piped.py"  # read through a pipe: not a plain read, never recorded
DOWN_REASON = "the test made this daemon unstartable"
# Codex's own traffic (its curated plugins' sync at start and exit) goes to a proxy on a closed
# loopback port: offline it then fails at once instead of waiting on name resolution (5 s a run).
# The scripted model server is reached directly.
CODEX_QUIET_ENV = {
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
}


def _small(n: int) -> str:
    return "".join(f"# f{n:02d} line {i:02d}: " + "abcdefghij" * 4 + "\n" for i in range(36))


def project_files() -> dict[str, str]:
    files = {f"src/f{n:02d}.py": _small(n) for n in range(1, SMALL_FILES + 1)}
    files["src/big.py"] = "".join(
        f"BIG {i:05d} " + "y" * 60 + "\n" for i in range(1, BIG_LINES + 1)
    )
    files[PIPED] = "".join(f"PIPED {i:03d}\n" for i in range(1, 21))
    return files


def patch() -> str:
    """Two hunks on big.py: one inside the range read, one on the line just after it (the daemon
    then widens the range it restores by that line: the write and its lines reached it)."""
    hunks = []
    for n in EDITED_LINES:
        hunks.append(
            "@@\n"
            f" BIG {n - 1:05d} {'y' * 60}\n"
            f"-BIG {n:05d} {'y' * 60}\n"
            f"+EDITED {n:05d} by the agent\n"
            f" BIG {n + 1:05d} {'y' * 60}\n"
        )
    return "*** Begin Patch\n*** Update File: src/big.py\n" + "".join(hunks) + "*** End Patch\n"


def script() -> list[Step]:
    first, last = RANGE
    reads = [f"cat src/f{n:02d}.py" for n in range(1, SMALL_FILES + 1)]
    reads += [f"sed -n '{first},{last}p' src/big.py", f"cat {PIPED} | head -n 5"]
    steps = [Step((Call("exec_command", {"cmd": cmd}),)) for cmd in reads]
    steps.append(Step((Call("apply_patch", text=patch()),), input_tokens=2 * AUTO_COMPACT_LIMIT))
    return steps  # then the text "Done." ends each turn (the one compacted, and the resumed one)


def write_project(project: Path) -> None:
    for rel, text in project_files().items():
        f = project / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)


def config(url: str) -> str:
    return f"""model = "gpt-5.5"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "danger-full-access"
model_auto_compact_token_limit = {AUTO_COMPACT_LIMIT}

[model_providers.scripted]
name = "scripted"
base_url = "{url}"
wire_api = "responses"
env_key = "CODEX_E2E_KEY"
"""


def events(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def run(codex: str, base: Path, mode: str) -> dict[str, Any]:
    project, home = base / "project", base / "home"
    write_project(project)
    (home / ".codex").mkdir(parents=True)
    env = harness_env(codex, base, home, **CODEX_QUIET_ENV)
    if mode == "down":
        make_unstartable(env, base, DOWN_REASON)
    loopback_up()
    turns: list[dict[str, Any]] = []
    with ModelServer(script()) as server:
        (home / ".codex" / "config.toml").write_text(config(server.url))
        if mode != "control":
            install_plugin(README, env, base)
        env["CODEX_E2E_KEY"] = "codex-e2e-not-a-key"
        base_cmd = [codex, "exec", "--skip-git-repo-check", "--json", "-C", str(project)]
        for name, extra in (("work", ["PC-STEP 1"]), ("resume", ["resume", "--last", "PC-STEP 2"])):
            r = subprocess.run(
                base_cmd + extra, env=env, cwd=project, capture_output=True, text=True,
                stdin=subprocess.DEVNULL,
                timeout=TURN_TIMEOUT_S, check=False,
            )  # fmt: skip
            (base / f"codex-{name}.jsonl").write_text(r.stdout)
            (base / f"codex-{name}-stderr.txt").write_text(r.stderr)
            turns.append({"turn": name, "exit_code": r.returncode, "events": events(r.stdout)})
            if r.returncode != 0:
                break
    thread = next(
        (e["thread_id"] for t in turns for e in t["events"] if e.get("type") == "thread.started"),
        "",
    )
    state = home / ".local" / "state" / "postcompact" / "hooks"
    version = subprocess.run(
        [codex, "--version"], env=env, capture_output=True, text=True, check=False
    )
    return {
        "mode": mode,
        "codex": version.stdout.split()[-1] if version.stdout.split() else "",
        "project": str(project),
        "session_id": thread,
        "turns": turns,
        "files": {rel: (project / rel).read_text() for rel in project_files()},
        "requests": [{"kind": e.kind, "step": e.step, "body": e.body} for e in server.log],
        "hook_log": (state / "hook.log").read_text() if (state / "hook.log").exists() else "",
        "install_log": (base / "install.log").read_text() if mode != "control" else "",
        "backoff_marker": (state / "daemon-start-failed.json").exists(),
        "daemon_sessions": daemon_view(env) if mode == "plugin" else [],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--codex", required=True)
    ap.add_argument("--dir", required=True, type=Path)
    ap.add_argument("--mode", required=True, choices=["plugin", "control", "down"])
    a = ap.parse_args()
    capture = run(a.codex, a.dir, a.mode)
    (a.dir / "capture.json").write_text(json.dumps(capture))
    return 0 if all(t["exit_code"] == 0 for t in capture["turns"]) else 1


if __name__ == "__main__":
    sys.exit(main())
