"""The postcompact Gemini CLI extension (clients/gemini-cli) in the real Gemini CLI, offline, end to
end, installed as its README says.

`python -m tests.gemini_cli.run_e2e` (and `make test`, through test_gemini_cli.py):

1. installs the pinned Gemini CLI (`@google/gemini-cli`, from the npm registry) into .cache/
   when it is not there, and fills Go's module cache for the hook's build (the session runs
   offline);
2. runs `tests.gemini_cli.session` twice, each in a network namespace of its own when root
   (`unshare --net`: nothing but the loopback): with the extension (installed by its README's
   install block; no daemon runs: the extension starts one) and without it (the control). The
   scripted model reads four files (one of them as a range of big.py), activates a skill,
   edits big.py inside the range, is told of a prompt over Gemini's compression threshold,
   writes a file, and is prompted once more in a new process;
3. checks, from the requests the model got after the compression: the restoration is appended
   to the snapshot message of every one of them, byte-identical, holding the files read (big.py
   as its range, with the edited line as on disk) and the skill; before the compression none;
   without the extension none of it; the daemon saw the session and exactly one compaction,
   and the hook cached one snapshot.

Prints `gemini <version>: restored files reached the model after compaction` when it passes;
raises AssertionError (exit 1) otherwise. `GEMINI_E2E_KEEP=DIR` keeps the runs' files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.gemini_cli.model_server import SNAPSHOT, texts
from tests.gemini_cli.session import EDITED_LINE, RANGE, SKILL_MARKER, big_line, edited_line
from tests.npm_pinned import install_pinned
from tests.offline import isolation

GEMINI_PACKAGE = "@google/gemini-cli"
GEMINI_VERSION = "0.61.0"  # the version the extension is tested with
ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "gemini-cli" / GEMINI_VERSION
GO = os.environ.get("GO") or shutil.which("go") or "/usr/local/go/bin/go"
SESSION_TIMEOUT_S = 900
HEADER = "postcompact re-read these files from disk after the conversation was summarized"


def gemini_binary() -> Path:
    """The pinned Gemini CLI, installed from the npm registry when missing."""
    binary = CACHE / "node_modules" / "@google" / "gemini-cli" / "bundle" / "gemini.js"
    install_pinned(CACHE, GEMINI_PACKAGE, GEMINI_VERSION, binary, "gemini e2e")
    return CACHE / "node_modules" / ".bin" / "gemini"


def go_env() -> dict[str, str]:
    """Go's caches, filled for the hook's build (the session's HOME is its own and offline)."""
    subprocess.run([GO, "mod", "download"], cwd=ROOT / "clients" / "go", check=True)
    names = ["GOCACHE", "GOMODCACHE", "GOPATH"]
    out = subprocess.run([GO, "env", *names], capture_output=True, text=True, check=True)
    return dict(zip(names, out.stdout.splitlines(), strict=True))


def run_session(gemini: Path, base: Path, mode: str, env: dict[str, str]) -> dict[str, Any]:
    cmd = [*isolation(), sys.executable, "-m", "tests.gemini_cli.session"]
    cmd += ["--gemini", str(gemini), "--dir", str(base), "--mode", mode]
    base.mkdir(parents=True)
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=ROOT, env=env, timeout=SESSION_TIMEOUT_S, check=False)
    capture = base / "capture.json"
    if r.returncode != 0 or not capture.is_file():
        tail = ""
        for err in sorted(base.glob("gemini-stderr-*.txt")):
            tail += f"--- {err.name}\n" + err.read_text(errors="replace")[-2000:]
        if capture.is_file():
            tail += (
                "\n--- prompts\n" + json.dumps(json.loads(capture.read_text())["prompts"])[:3000]
            )
        raise AssertionError(
            f"gemini e2e ({mode}): the run did not complete (exit {r.returncode})\n{tail}"
        )
    data: dict[str, Any] = json.loads(capture.read_text())
    data["seconds"] = round(time.monotonic() - t0, 1)
    return data


def main_requests(cap: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in cap["requests"] if r["kind"] == "main"]


def snapshot_message(body: dict[str, Any]) -> str | None:
    """The text of the request's snapshot message (the user message holding SNAPSHOT: Gemini
    CLI sends its session context and the snapshot as two text parts of one message)."""
    for c in body.get("contents") or []:
        t = texts(c)
        if c.get("role") == "user" and SNAPSHOT in t:
            return t
    return None


def appended(body: dict[str, Any]) -> str:
    """What follows the snapshot in its message ("" when nothing does)."""
    text = snapshot_message(body) or ""
    return text.split(SNAPSHOT, 1)[1] if SNAPSHOT in text else ""


def split_after(cap: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The main requests before the compression and after it."""
    reqs = main_requests(cap)
    kinds = [r["kind"] for r in cap["requests"]]
    assert "compress" in kinds, f"Gemini CLI did not compress: {kinds}"
    first = next((i for i, r in enumerate(reqs) if snapshot_message(r["body"]) is not None), None)
    assert first is not None, "no request after the compression carries the snapshot"
    return reqs[:first], reqs[first:]


def numbered_range(disk: str, first: int, last: int) -> list[str]:
    lines = disk.split("\n")
    return lines[first - 1 : last]


def check_extension(cap: dict[str, Any]) -> str:
    before, after = split_after(cap)
    assert len(after) >= 3, f"only {len(after)} requests after the compression"
    steps = sorted({r["step"] for r in after})
    assert steps == [2, 3], f"the requests after the compression are of prompts {steps}"
    for r in before:
        assert HEADER not in json.dumps(r["body"]), "restored text before any compression"
    added = appended(after[0]["body"])
    assert added.startswith("\n\n" + HEADER), f"nothing appended to the snapshot:\n{added[:1500]}"
    for i, r in enumerate(after):
        assert appended(r["body"]) == added, f"request {i} after the compression got other text"
    project = cap["project"]
    for rel in ("src/alpha.py", "src/beta.py"):
        disk = cap["files"][rel]
        assert f"{project}/{rel}" in added, f"{rel} was not restored"
        assert all(line in added for line in disk.splitlines()), f"{rel} not as on disk"
    # gamma.py was read in the kept tail (after the cut): Gemini still has it.
    big = cap["files"]["src/big.py"]
    assert edited_line() in big, "the edit did not happen"
    assert big_line(EDITED_LINE) not in big, "the edit left the old line"
    first, last = RANGE
    assert f"{project}/src/big.py" in added, "the edited file was not restored"
    missing = [line for line in numbered_range(big, first, last) if line not in added]
    assert not missing, f"big.py restored without its lines as on disk: {missing[:3]}"
    assert big_line(1) not in added, "big.py restored from its start, not the range read"
    assert big_line(last + 30) not in added, "big.py restored beyond the range the agent read"
    assert SKILL_MARKER in added, "the activated skill was not restored"
    assert not cap["hook_log"], f"the hook logged:\n{cap['hook_log']}"
    assert len(cap["snapshots"]) == 1, f"cached snapshots: {cap['snapshots']}"
    ours = [s for s in cap["daemon_sessions"] if s["session_id"].startswith("gemini-")]
    assert len(ours) == 1, f"the daemon does not hold one Gemini session: {cap['daemon_sessions']}"
    assert ours[0]["compactions"] == 1, f"the daemon saw {ours[0]['compactions']} compactions"
    return added


def check_control(cap: dict[str, Any]) -> None:
    _, after = split_after(cap)
    for r in cap["requests"]:
        raw = json.dumps(r["body"])
        assert "postcompact" not in raw, "postcompact's text without the extension"
    for r in after:
        assert appended(r["body"]) == "", "text after the snapshot without the extension"
        assert SKILL_MARKER not in json.dumps(r["body"]["contents"]), "Gemini restored the skill?"
    assert any(SKILL_MARKER in json.dumps(r["body"]) for r in cap["requests"]), (
        "the skill was never activated"
    )


def main() -> int:
    gemini = gemini_binary()
    env = {**os.environ, **go_env()}
    keep = os.environ.get("GEMINI_E2E_KEEP")
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="pcgemini-"))
    base.mkdir(parents=True, exist_ok=True)
    for d in ("extension", "control"):
        shutil.rmtree(base / d, ignore_errors=True)
    try:
        ext = run_session(gemini, base / "extension", "extension", env)
        check_extension(ext)
        control = run_session(gemini, base / "control", "control", env)
        check_control(control)
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    print(f"gemini e2e: extension {ext['seconds']:.0f}s, control {control['seconds']:.0f}s")
    print(f"gemini {ext['gemini']}: restored files reached the model after compaction", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
