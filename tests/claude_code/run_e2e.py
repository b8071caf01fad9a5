"""The postcompact Claude Code plugin (clients/claude-code) in the real Claude Code, offline, end to
end, installed as its README says.

`python -m tests.claude_code.run_e2e` (and `make test`, through test_claude_code.py):

1. installs the pinned Claude Code (`@anthropic-ai/claude-code-linux-x64`, from the npm registry)
   into .cache/ when it is not there, and fills Go's module cache for the hook's build (the
   session runs offline);
2. runs `tests.claude_code.session` three times, each in a network namespace of its own when
   root (`unshare --net`: nothing but the loopback): with the plugin (installed by its README's
   install block; no daemon runs: the plugin starts one), without it (the control), and with the
   plugin but a daemon that cannot start. The scripted model reads eleven files (one as a range
   of a file too large for Claude Code's own restoration), edits that file inside the range,
   writes one, invokes a skill; then `/compact`, then one more prompt;
3. checks, from the request the model got after the compaction: the restoration came in parts
   (it is over 10,000 characters), every part inline (no `persisted-output`), no file repeated
   that Claude Code restored itself, files only postcompact restored among them, the edited file's
   lines as on disk; without the plugin none of it; the daemon saw the session and its
   compaction; and with the daemon unstartable, the session worked and said why once.

Prints `claude-code <version>: restored files reached the model after compaction` when it passes;
raises AssertionError (exit 1) otherwise. `CLAUDE_CODE_E2E_KEEP=DIR` keeps the runs' files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.claude_code.session import DOWN_REASON, EDITED_LINE, RANGE, SKILL_MARKER
from tests.npm_pinned import install_pinned
from tests.offline import isolation

CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code-linux-x64"
CLAUDE_CODE_VERSION = "2.1.336"  # the version the plugin is tested with (postcompact-hook's too)
ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "claude-code" / CLAUDE_CODE_VERSION
GO = os.environ.get("GO") or shutil.which("go") or "/usr/local/go/bin/go"
SESSION_TIMEOUT_S = 600
CAP = 10_000  # Claude Code's limit on a hook's text, in characters
HEADER = re.compile(r"\(part (\d+) of (\d+); the parts may come in any order\)")
READ_CALL = re.compile(r"Called the Read tool with the following input: (\{[^\n]*\})")
DOWN_TEXT = "could not be started"


def claude_binary() -> Path:
    """The pinned Claude Code executable, installed from the npm registry when missing."""
    binary = CACHE / "node_modules" / CLAUDE_CODE_PACKAGE / "claude"
    return install_pinned(
        CACHE, CLAUDE_CODE_PACKAGE, CLAUDE_CODE_VERSION, binary, "claude-code e2e"
    )


def go_env() -> dict[str, str]:
    """Go's caches, filled for the hook's build (the session's HOME is its own and offline)."""
    subprocess.run([GO, "mod", "download"], cwd=ROOT / "clients" / "go", check=True)
    names = ["GOCACHE", "GOMODCACHE", "GOPATH"]
    out = subprocess.run([GO, "env", *names], capture_output=True, text=True, check=True)
    return dict(zip(names, out.stdout.splitlines(), strict=True))


def run_session(claude: Path, base: Path, mode: str, env: dict[str, str]) -> dict[str, Any]:
    cmd = [*isolation(), sys.executable, "-m", "tests.claude_code.session"]
    cmd += ["--claude", str(claude), "--dir", str(base), "--mode", mode]
    base.mkdir(parents=True)
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=ROOT, env=env, timeout=SESSION_TIMEOUT_S, check=False)
    capture = base / "capture.json"
    if r.returncode != 0 or not capture.is_file():
        err = base / "claude-stderr.txt"
        tail = err.read_text(errors="replace")[-3000:] if err.is_file() else ""
        raise AssertionError(
            f"claude-code e2e ({mode}): the run did not complete (exit {r.returncode})\n{tail}"
        )
    data: dict[str, Any] = json.loads(capture.read_text())
    data["seconds"] = round(time.monotonic() - t0, 1)
    return data


def text_of(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [
        b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"
    ]


def after_compaction(capture: dict[str, Any]) -> dict[str, Any]:
    """The first request of the prompt after `/compact`."""
    kinds = [r["kind"] for r in capture["requests"]]
    assert "compact" in kinds, f"Claude Code did not compact: {kinds}"
    return next(r["body"] for r in capture["requests"] if r["kind"] == "main" and r["step"] == 2)


def read_paths(text: str) -> list[str]:
    """The files of the restored Read calls in `text`, in order."""
    return [json.loads(m)["file_path"] for m in READ_CALL.findall(text)]


def split(body: dict[str, Any]) -> tuple[list[str], str]:
    """What Claude Code restored itself (its Read calls, in the user messages) and the hooks'
    context (the section of the trailing system message)."""
    own: list[str] = []
    hooks = ""
    for m in body["messages"]:
        for t in text_of(m):
            if m["role"] == "user":
                own += read_paths(t)
            elif "SessionStart hook additional context: " in t:
                hooks = t.split("SessionStart hook additional context: ", 1)[1]
    return own, hooks


def numbered(text: str, first: int, count: int) -> list[str]:
    lines = text.split("\n")
    return [f"{n}\t{lines[n - 1]}" for n in range(first, first + count)]


def check_plugin(cap: dict[str, Any]) -> None:
    project = cap["project"]
    body = after_compaction(cap)
    raw = json.dumps(body)
    assert "persisted-output" not in raw, "a part went over the cap: only its preview was sent"
    own, hooks = split(body)
    parts = {int(m.group(1)) for m in HEADER.finditer(hooks)}
    assert len(parts) >= 2, f"the restoration was not split: parts {sorted(parts)}\n{hooks[:1500]}"
    # The parts are joined by "\n" in one section; each was one hook's text.
    pieces = re.split(r"\n(?=postcompact re-read these files)", hooks.split("\n\nToday's date")[0])
    assert len(pieces) == len(parts), f"{len(pieces)} pieces for parts {sorted(parts)}"
    assert all(len(p) <= CAP for p in pieces), [len(p) for p in pieces]
    assert sum(map(len, pieces)) > CAP, "the restoration fits one hook: the split was not needed"
    ours = read_paths(hooks)
    assert len(ours) == len(set(ours)), f"a file restored twice by postcompact: {ours}"
    twice = set(ours) & set(own)
    assert not twice, f"postcompact repeated files Claude Code restored itself: {sorted(twice)}"
    assert own, "Claude Code restored no file itself?"
    assert f"{project}/src/new.py" in own, f"the written file is not Claude Code's own: {own}"
    only = [p for p in ours if p not in own]
    assert any(p.startswith(f"{project}/src/f0") for p in only), (
        f"no file only postcompact restored: {ours}"
    )
    # The edited file: too large for Claude Code (a note), its lines seen and edited as on disk.
    big, disk = f"{project}/src/big.py", cap["files"]["src/big.py"]
    assert big in ours, f"the edited file was not restored: {ours}"
    assert f"EDITED {EDITED_LINE:05d}" in disk, "the edit did not happen"
    first, count = RANGE
    missing = [line for line in numbered(disk, first, count) if line not in hooks]
    assert not missing, f"big.py restored without its lines as on disk: {missing[:3]}"
    assert f'"offset":{first}' in hooks, "big.py's range is not named in its Read call"
    assert SKILL_MARKER not in hooks, "postcompact restored the skill (Claude Code's own)"
    assert SKILL_MARKER in raw, "Claude Code did not restore the skill itself?"
    assert not cap["hook_log"], f"the hook logged:\n{cap['hook_log']}"
    ours_daemon = [
        s for s in cap["daemon_sessions"] if s["session_id"] == f"claude-code-{cap['session_id']}"
    ]
    assert len(ours_daemon) == 1, f"the daemon does not hold the session: {cap['daemon_sessions']}"
    assert ours_daemon[0]["compactions"] == 1, (
        f"the daemon saw {ours_daemon[0]['compactions']} compactions"
    )


def check_control(cap: dict[str, Any], restored_by_plugin: list[str]) -> None:
    body = after_compaction(cap)
    own, hooks = split(body)
    assert not hooks, f"hook context without the plugin:\n{hooks[:500]}"
    project = cap["project"]
    mine = {f"{project}/{p.split('/project/', 1)[1]}" for p in restored_by_plugin}
    assert not mine & set(own), "Claude Code alone restored what only the plugin did?"
    assert "postcompact" not in json.dumps(body), "postcompact in a run without the plugin"


def hook_messages(cap: dict[str, Any]) -> list[str]:
    """The hook messages Claude Code showed (its transcript's hook_system_message records)."""
    out = []
    for rec in cap["transcript"]:
        att = rec.get("attachment") if isinstance(rec, dict) else None
        if isinstance(att, dict) and att.get("type") == "hook_system_message":
            out.append(str(att.get("content", "")))
    return out


def check_down(cap: dict[str, Any]) -> None:
    assert all(t["result"] == "success" for t in cap["turns"]), cap["turns"]
    body = after_compaction(cap)
    own, hooks = split(body)
    assert own, "with the daemon down Claude Code still restores its own files"
    assert not hooks, "the plugin injected text without a daemon?"
    told = [m for m in hook_messages(cap) if DOWN_TEXT in m]
    assert len(told) == 1, f"expected one message that the daemon is down, got {told}"
    assert DOWN_REASON in told[0], f"the message does not say why: {told[0]}"
    for r in cap["requests"]:
        assert DOWN_TEXT not in json.dumps(r["body"]), "the message reached the model"
    assert cap["backoff_marker"], "no back-off marker after the failed start"


def main() -> int:
    claude = claude_binary()
    env = {**os.environ, **go_env()}
    keep = os.environ.get("CLAUDE_CODE_E2E_KEEP")
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="pcclaude-"))
    base.mkdir(parents=True, exist_ok=True)
    for d in ("plugin", "control", "down"):
        shutil.rmtree(base / d, ignore_errors=True)
    try:
        plugin = run_session(claude, base / "plugin", "plugin", env)
        check_plugin(plugin)
        _, hooks = split(after_compaction(plugin))
        control = run_session(claude, base / "control", "control", env)
        check_control(control, read_paths(hooks))
        down = run_session(claude, base / "down", "down", env)
        check_down(down)
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    seconds = ", ".join(f"{c['mode']} {c['seconds']:.0f}s" for c in (plugin, control, down))
    print(f"claude-code e2e: {seconds}", flush=True)
    print(
        f"claude-code {plugin['claude_code']}: restored files reached the model after compaction",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
