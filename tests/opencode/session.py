"""One OpenCode run, offline, against the scripted model server (tests/opencode/run_e2e.py).

`python -m tests.opencode.session --opencode BIN --plugin DIR (--address ADDR | --runtime-dir D)
--dir BASE [--pure]` writes a small project under BASE/project and OpenCode's configuration beside
it (a provider `local` on `@ai-sdk/openai-compatible` at the scripted server, a model whose context
is small, and the postcompact plugin), runs `opencode run` there with HOME=BASE/home and a dummy
key, and leaves in BASE/capture.json every request the server got, in order. The script reads a.py,
loads a skill, tries an edit of d.py that fails, reads b.py, edits a.py and writes c.py; the answer
with the write reports a context nearly full, so OpenCode compacts on its own; after the summary it
reads b.py again and stops. `--pure` runs OpenCode without external plugins (the control: what
OpenCode sends on its own). `--address` names the daemon (POSTCOMPACT_ADDRESS); with
`--runtime-dir` instead, no daemon is named or running: XDG_RUNTIME_DIR is D, and the plugin finds
no `postcompact` on PATH (no run has one there), so it must find the executable itself and start
the daemon (the model server waits for it before its first answer, at most DAEMON_WAIT_S). run_e2e
runs this inside a network namespace of its own when it can (`unshare --net`, as root), so nothing
but the loopback is reachable.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tests.offline import loopback_up
from tests.opencode.model_server import ModelServer, ToolCall

RUN_TIMEOUT_S = 150
DAEMON_WAIT_S = 60
PLUGIN_API_VERSION = "1.18.33"  # @opencode-ai/plugin, as OpenCode 1.18.33 asks for it
CONTEXT = 20_000  # the scripted model's context window (tokens)
OUTPUT = 1_000
FULL = 19_500  # input tokens reported before the compaction: over what CONTEXT leaves room for
PROMPT = "Refactor a.py so that f returns 2, and add c.py."
FILES = {
    "a.py": "def f():\n    return 1\n\n\ndef helper(x):\n    return x * 3\n",
    "b.py": 'from a import f\n\n\ndef g():\n    return f() + len("b")\n',
    "d.py": "def h():\n    return 4\n",  # never read; an edit of it fails
}
# A skill of the user's (OpenCode finds ~/.config/opencode/skills/*/SKILL.md: that directory is
# seeded already, where a project's .opencode/ would need seeding too); its body carries
# SKILL_MARKER.
SKILL_NAME = "house-style"
SKILL_MARKER = "HOUSE-STYLE-7Q: functions return literals only after review."
SKILL = (
    f"---\nname: {SKILL_NAME}\ndescription: How this project writes Python.\n---\n\n"
    f"# House style\n\n{SKILL_MARKER}\n"
)
# Nothing of OpenCode's own is to reach out: no update check, no model catalogue, no share, no
# language-server download, no Claude Code files of the user's.
QUIET_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
}


def seed_config_dir(home: Path) -> None:
    """OpenCode, when a plugin is configured, installs `@opencode-ai/plugin` into each config
    directory (~/.config/opencode, every .opencode/) from the npm registry before loading the
    plugins, unless the directory already has a node_modules and a package-lock.json naming it.
    Offline that install fails after npm's retries (about 70 s, then a warning); a user's config
    directory has it from their first online run, so the test seeds the same state. The plugin
    itself needs nothing there (it imports @opencode-ai/plugin for its types only)."""
    conf = home / ".config" / "opencode"
    (conf / "node_modules").mkdir(parents=True)
    deps = {"@opencode-ai/plugin": PLUGIN_API_VERSION}
    (conf / "package.json").write_text(json.dumps({"dependencies": deps}))
    (conf / "package-lock.json").write_text(
        json.dumps({"lockfileVersion": 3, "packages": {"": {"dependencies": deps}}})
    )


def path_without_postcompact() -> str:
    """PATH without the directories holding a `postcompact` (an activated .venv, an install):
    the plugin is to find the daemon without it."""
    dirs = os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not os.access(Path(d, "postcompact"), os.X_OK))


def wait_for_daemon(runtime: Path) -> None:
    """Wait until the daemon the plugin starts announces itself (D/server.json), at most
    DAEMON_WAIT_S."""
    announced = runtime / "postcompact" / "server.json"
    deadline = time.monotonic() + DAEMON_WAIT_S
    while not announced.is_file() and time.monotonic() < deadline:
        time.sleep(0.05)


def config(url: str, plugin: str) -> dict[str, Any]:
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": "local/scripted",
        "small_model": "local/scripted",
        "autoupdate": False,
        "share": "disabled",
        "plugin": [plugin],
        "provider": {
            "local": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted local model",
                "options": {"baseURL": url, "apiKey": "sk-opencode-e2e-not-a-key"},
                "models": {
                    "scripted": {
                        "name": "Scripted",
                        "tool_call": True,
                        "limit": {"context": CONTEXT, "output": OUTPUT},
                    }
                },
            }
        },
    }


def run(
    opencode: str, plugin: str, address: str | None, runtime: Path | None, base: Path, pure: bool
) -> dict[str, Any]:
    project, home = base / "project", base / "home"
    project.mkdir(parents=True)
    home.mkdir(parents=True)
    seed_config_dir(home)
    for name, text in FILES.items():
        (project / name).write_text(text)
    skill = home / ".config" / "opencode" / "skills" / SKILL_NAME / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL)
    p = str(project)
    before = [
        ToolCall("read", {"filePath": f"{p}/a.py"}),
        ToolCall("skill", {"name": SKILL_NAME}),
        # Fails (the text is not in the file): OpenCode reports no write of d.py.
        ToolCall("edit", {"filePath": f"{p}/d.py", "oldString": "NOT-IN-D", "newString": "x"}),
        ToolCall("read", {"filePath": f"{p}/b.py"}),
        ToolCall(
            "edit", {"filePath": f"{p}/a.py", "oldString": "return 1", "newString": "return 2"}
        ),
        ToolCall("write", {"filePath": f"{p}/c.py", "content": "from a import f\n\nprint(f())\n"}),
    ]
    after = [ToolCall("read", {"filePath": f"{p}/b.py"})]
    loopback_up()
    ready: Callable[[], None] | None = None
    if runtime is not None:
        runtime.mkdir(parents=True, mode=0o700)
        ready = functools.partial(wait_for_daemon, runtime)
    with ModelServer(before, after, context_tokens=FULL, ready=ready) as server:
        (project / "opencode.json").write_text(json.dumps(config(server.url, plugin), indent=2))
        env = {
            "PATH": path_without_postcompact(),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            **({"POSTCOMPACT_ADDRESS": address} if address else {}),
            **({"XDG_RUNTIME_DIR": str(runtime)} if runtime else {}),
            **QUIET_ENV,
        }
        cmd = [
            opencode,
            "run",
            "--print-logs",
            "--format",
            "json",
            *(["--pure"] if pure else []),
            PROMPT,
        ]
        with (
            open(base / "opencode-stdout.txt", "wb") as out,
            open(base / "opencode-stderr.txt", "wb") as err,
        ):
            r = subprocess.run(
                cmd, cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                timeout=RUN_TIMEOUT_S, check=False,
            )  # fmt: skip
        version = subprocess.run(
            [opencode, "--version"], env=env, capture_output=True, text=True, check=False
        )
        log = [asdict(e) for e in server.log]
    logged = (base / "opencode-stderr.txt").read_text(errors="replace").splitlines()
    return {
        "opencode": version.stdout.strip(),
        "returncode": r.returncode,
        "project": p,
        "files": {
            n: (project / n).read_text()
            for n in ("a.py", "b.py", "c.py", "d.py")
            if (project / n).exists()
        },
        "requests": log,
        "warnings": [line for line in logged if "level=WARN" in line or "level=ERROR" in line],
        "plugin_log": [line for line in logged if 'message="postcompact:' in line],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--opencode", required=True)
    ap.add_argument("--plugin", required=True)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--address")
    where.add_argument("--runtime-dir", type=Path)
    ap.add_argument("--dir", required=True, type=Path)
    ap.add_argument("--pure", action="store_true")
    a = ap.parse_args()
    capture = run(a.opencode, a.plugin, a.address, a.runtime_dir, a.dir, a.pure)
    (a.dir / "capture.json").write_text(json.dumps(capture))
    return 0 if capture["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
