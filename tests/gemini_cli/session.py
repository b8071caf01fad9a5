"""One Gemini CLI session, offline, with or without the postcompact extension
(tests/gemini_cli/run_e2e.py).

`python -m tests.gemini_cli.session --gemini BIN --dir BASE --mode extension|control` writes a
project under BASE/project and, with `extension`, installs the extension into HOME=BASE/home by
running the install block of its README (clients/gemini-cli/README.md: the make target, then
`gemini extensions link`). It then runs Gemini CLI headless in the project against the scripted
Gemini API (model_server.py), three prompts, the second and third resuming the session:

1. the work: three read_file calls (one of them a range of big.py), a skill activated (the
   project's), a replace inside the range;
2. one more read, answered with a prompt token count over the compression threshold (the
   settings' model.compressionThreshold), so Gemini CLI compresses the conversation before the
   next request; then a write_file, then a line of text;
3. a line of text (a new process: what it gets after the compression comes from the cache).

It leaves in BASE/capture.json every request the server got, the project's files, the hook's
log and, with the extension, what the daemon holds (the extension started it: no daemon runs
before; it is stopped after). run_e2e runs this inside a network namespace of its own when it
can (`unshare --net`, as root): nothing but the loopback is reachable.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.gemini_cli.model_server import Answer, Call, ModelServer
from tests.offline import daemon_view, harness_env, install_plugin, loopback_up

ROOT = Path(__file__).resolve().parents[2]
README = "clients/gemini-cli/README.md"
MODEL = "gemini-2.5-flash"
PROMPT_TIMEOUT_S = 180
BIG_LINES = 300
RANGE = (120, 159)  # big.py's ranged read: start_line, end_line
EDITED_LINE = 140
# Gemini CLI compresses when the last prompt's tokens reach threshold x the model's limit
# (1,048,576 for gemini-2.5-flash).
COMPRESSION_THRESHOLD = 0.2
SKILL = "house-style"
SKILL_MARKER = "HOUSE-STYLE-7Q: name things plainly."
OVER_THRESHOLD = 900_000


def _small(name: str) -> str:
    return "".join(f"# {name} line {i:02d}: " + "abcdefghij" * 3 + "\n" for i in range(24))


def project_files() -> dict[str, str]:
    files = {f"src/{n}.py": _small(n) for n in ("alpha", "beta", "gamma")}
    files["src/big.py"] = "".join(
        f"BIG {i:05d} " + "y" * 50 + "\n" for i in range(1, BIG_LINES + 1)
    )
    return files


def big_line(n: int) -> str:
    return f"BIG {n:05d} " + "y" * 50


def edited_line() -> str:
    return f"EDITED {EDITED_LINE:05d} by the agent"


def script(project: Path) -> dict[int, list[Answer]]:
    def p(rel: str) -> str:
        return str(project / rel)

    first, last = RANGE
    return {
        1: [
            Answer(
                calls=(
                    Call("read_file", {"file_path": p("src/alpha.py")}),
                    Call(
                        "read_file",
                        {"file_path": p("src/big.py"), "start_line": first, "end_line": last},
                    ),
                    Call("read_file", {"file_path": "src/beta.py"}),
                    Call("activate_skill", {"name": SKILL}),
                )
            ),
            Answer(
                calls=(
                    Call(
                        "replace",
                        {
                            "file_path": p("src/big.py"),
                            "instruction": "Mark the line as edited.",
                            "old_string": big_line(EDITED_LINE),
                            "new_string": edited_line(),
                        },
                    ),
                )
            ),
        ],
        2: [
            Answer(
                calls=(Call("read_file", {"file_path": p("src/gamma.py")}),),
                prompt_tokens=OVER_THRESHOLD,
            ),
            Answer(
                calls=(Call("write_file", {"file_path": p("src/new.py"), "content": "NEW = 1\n"}),)
            ),
        ],
        3: [],
    }


def write_project(project: Path, home: Path) -> None:
    for rel, text in project_files().items():
        f = project / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    skill = project / ".gemini" / "skills" / SKILL / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        f"---\nname: {SKILL}\ndescription: How this project writes Python.\n---\n\n{SKILL_MARKER}\n"
    )
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "model": {"compressionThreshold": COMPRESSION_THRESHOLD},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings, indent=2))


def run(gemini: str, base: Path, mode: str) -> dict[str, Any]:
    project, home = base / "project", base / "home"
    write_project(project, home)
    env = harness_env(gemini, base, home)
    if mode == "extension":
        install_plugin(README, env, base)
    loopback_up()
    env["GEMINI_API_KEY"] = "gemini-cli-e2e-not-a-key"
    env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
    prompts: list[dict[str, Any]] = []
    with ModelServer(script(project)) as server:
        env["GOOGLE_GEMINI_BASE_URL"] = server.url
        for step in (1, 2, 3):
            cmd = [gemini, "-p", f"GEMINI-STEP {step}", "--yolo", "-o", "json", "-m", MODEL]
            if step > 1:
                cmd += ["--resume", "latest"]
            with open(base / f"gemini-stderr-{step}.txt", "wb") as err:
                r = subprocess.run(
                    cmd, cwd=project, env=env, stdout=subprocess.PIPE, stderr=err,
                    timeout=PROMPT_TIMEOUT_S, check=False,
                )  # fmt: skip
            out = r.stdout.decode(errors="replace")
            try:
                result = json.loads(out[out.index("{") :])
            except ValueError:
                result = {"unparsed": out[-2000:]}
            prompts.append({"step": step, "exit": r.returncode, "result": result})
            if r.returncode != 0:
                break
    state = home / ".local" / "state" / "postcompact" / "hooks"
    version = subprocess.run(
        [gemini, "--version"], env=env, capture_output=True, text=True, check=False
    )
    return {
        "mode": mode,
        "gemini": version.stdout.strip(),
        "project": str(project),
        "prompts": prompts,
        "files": {
            rel: (project / rel).read_text()
            for rel in [*project_files(), "src/new.py"]
            if (project / rel).exists()
        },
        "requests": [
            {"kind": e.kind, "step": e.step, "path": e.path, "body": e.body} for e in server.log
        ],
        "hook_log": (state / "hook.log").read_text() if (state / "hook.log").exists() else "",
        "snapshots": sorted(p.name for p in (state / "sessions").glob("*.snapshot-*.txt"))
        if (state / "sessions").is_dir()
        else [],
        "daemon_sessions": daemon_view(env) if mode == "extension" else [],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gemini", required=True)
    ap.add_argument("--dir", required=True, type=Path)
    ap.add_argument("--mode", required=True, choices=["extension", "control"])
    a = ap.parse_args()
    capture = run(a.gemini, a.dir, a.mode)
    (a.dir / "capture.json").write_text(json.dumps(capture))
    done = [p for p in capture["prompts"] if p["exit"] == 0]
    return 0 if len(done) == 3 else 1


if __name__ == "__main__":
    sys.exit(main())
