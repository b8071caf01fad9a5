"""The postcompact plugin in the real Codex CLI, offline, end to end, installed as its README says
(clients/codex/README.md).

`python -m tests.codex.run_e2e` (and `make test`, through test_codex.py):

1. installs the pinned Codex CLI (`@openai/codex`, from the npm registry) into .cache/ when it is
   not there, and fills Go's module cache for the hook's build (the session runs offline);
2. runs `tests.codex.session` three times, each in a network namespace of its own when root
   (`unshare --net`: nothing but the loopback): with the plugin (installed by its README's install
   block, its hooks trusted by `postcompact-hook --codex-trust`; no daemon runs: the plugin starts
   one), without it (the control), and with the plugin but a daemon that cannot start. The
   scripted model reads six files with `cat`, a range of a larger one with `sed -n`, one more
   through a pipe, edits the ranged file with apply_patch (inside its range, and the line just
   after it), and Codex compacts on its own; then one more turn (`codex exec resume`);
3. checks, from the first request the model got after the compaction: the restoration came as
   developer messages, in parts in their configured order, each at most 10,000 bytes and inline
   (no truncation), more than one part (it is over 10,000 bytes); every file read with `cat` is
   in it; of the ranged file, the lines read widened by the line edited after them (which only the
   recorded write tells the daemon), as on disk with the edits, and no other line; the
   file read through a pipe is not; the same text is in the request of the next turn; without the
   plugin none of it (and no "postcompact" anywhere); the daemon holds the session
   `codex-<thread id>` and its one compaction; the hook logged nothing. With the daemon
   unstartable, both turns worked, nothing was injected, and the hook said why once (its log:
   `codex exec` prints no SessionStart message) and left its back-off marker.

Prints `codex <version>: restored files reached the model after compaction` when it passes;
raises AssertionError (exit 1) otherwise. `CODEX_E2E_KEEP=DIR` keeps the runs' files.
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

from tests.codex.model_server import SUMMARY
from tests.codex.session import DOWN_REASON, EDITED_LINES, PIPED, RANGE, SMALL_FILES
from tests.npm_pinned import install_pinned
from tests.offline import isolation

CODEX_PACKAGE = "@openai/codex"
CODEX_VERSION = "0.171.0"  # the version the plugin is tested with (postcompact-hook's TestedCodex)
ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "codex" / CODEX_VERSION
GO = os.environ.get("GO") or shutil.which("go") or "/usr/local/go/bin/go"
SESSION_TIMEOUT_S = 600
CAP = 10_000  # Codex's limit on a hook's text: about 2,500 tokens, in bytes
HEADER = re.compile(r"^postcompact re-read these files .*\(part (\d+) of (\d+)\)\.")


def codex_binary() -> Path:
    """The pinned Codex executable (its npm launcher), installed from the npm registry when
    missing (with its platform package, an optional dependency)."""
    binary = CACHE / "node_modules" / ".bin" / "codex"
    return install_pinned(CACHE, CODEX_PACKAGE, CODEX_VERSION, binary, "codex e2e")


def go_env() -> dict[str, str]:
    """Go's caches, filled for the hook's build (the session's HOME is its own and offline)."""
    subprocess.run([GO, "mod", "download"], cwd=ROOT / "clients" / "go", check=True)
    names = ["GOCACHE", "GOMODCACHE", "GOPATH"]
    out = subprocess.run([GO, "env", *names], capture_output=True, text=True, check=True)
    return dict(zip(names, out.stdout.splitlines(), strict=True))


def run_session(codex: Path, base: Path, mode: str, env: dict[str, str]) -> dict[str, Any]:
    cmd = [*isolation(), sys.executable, "-m", "tests.codex.session"]
    cmd += ["--codex", str(codex), "--dir", str(base), "--mode", mode]
    base.mkdir(parents=True)
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=ROOT, env=env, timeout=SESSION_TIMEOUT_S, check=False)
    capture = base / "capture.json"
    if r.returncode != 0 or not capture.is_file():
        tails = []
        for name in ("install.log", "codex-work-stderr.txt", "codex-resume-stderr.txt"):
            f = base / name
            if f.is_file():
                tails.append(f"--- {name}\n" + f.read_text(errors="replace")[-2000:])
        raise AssertionError(
            f"codex e2e ({mode}): the run did not complete (exit {r.returncode})\n"
            + "\n".join(tails)
        )
    data: dict[str, Any] = json.loads(capture.read_text())
    data["seconds"] = round(time.monotonic() - t0, 1)
    return data


def texts(item: dict[str, Any]) -> list[str]:
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(c.get("text", "")) for c in content if isinstance(c, dict)]
    return []


def developer_texts(body: dict[str, Any]) -> list[str]:
    return [
        t
        for item in body.get("input") or []
        if isinstance(item, dict) and item.get("role") == "developer"
        for t in texts(item)
    ]


def after_compaction(cap: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first request after Codex's compaction, and the first of the next turn (after the
    summary: the request whose history holds the most recent user prompt)."""
    kinds = [r["kind"] for r in cap["requests"]]
    assert kinds.count("compaction") == 1, f"Codex did not compact once: {kinds}"
    at = kinds.index("compaction")
    later = [r["body"] for r in cap["requests"][at + 1 :] if r["kind"] == "main"]
    assert len(later) == 2, f"expected the rest of the turn and one more, got {kinds}"
    first, resumed = later
    assert SUMMARY in json.dumps(first), "the summary is not in the request after the compaction"
    assert "PC-STEP 2" in json.dumps(resumed), "the second turn's request is not the resumed one"
    return first, resumed


def numbered(text: str, first: int, last: int) -> list[str]:
    lines = text.split("\n")
    return [f"{n}\t{lines[n - 1]}" for n in range(first, last + 1)]


def restoration(body: dict[str, Any]) -> list[str]:
    """postcompact's parts among the request's developer messages, in their order."""
    return [t for t in developer_texts(body) if HEADER.match(t)]


def check_plugin(cap: dict[str, Any]) -> None:
    first, resumed = after_compaction(cap)
    raw = json.dumps(first)
    for cut in ("truncated output", "Full hook output saved"):
        assert cut not in raw, f"a part went over Codex's cap: only its preview was sent ({cut})"
    parts = restoration(first)
    numbers = [(int(m.group(1)), int(m.group(2))) for p in parts if (m := HEADER.match(p))]
    assert len(parts) >= 2, f"the restoration was not split: {numbers}\n{developer_texts(first)}"
    assert numbers == [(k, len(parts)) for k in range(1, len(parts) + 1)], (
        f"the parts are not in their configured order, each of all: {numbers}"
    )
    sizes = [len(p.encode()) for p in parts]
    assert all(n <= CAP for n in sizes), f"a part over {CAP} bytes: {sizes}"
    assert sum(sizes) > CAP, f"the restoration fits one hook ({sizes}): the split was not needed"
    text = "\n".join(parts)
    files = cap["files"]
    for n in range(1, SMALL_FILES + 1):
        rel = f"src/f{n:02d}.py"
        missing = [ln for ln in numbered(files[rel], 1, 36) if ln not in text]
        assert not missing, f"{rel}, read with cat, is not restored whole: {missing[:2]}"
    # big.py: the lines read, widened by the line just after them that apply_patch changed (the
    # daemon knows of it only through the write the hook recorded), as on disk; nothing else.
    big, (lo, hi) = files["src/big.py"], RANGE
    assert all(f"EDITED {n:05d} by the agent" in big for n in EDITED_LINES), "no edit on disk"
    last = max(hi, *EDITED_LINES)
    missing = [ln for ln in numbered(big, lo, last) if ln not in text]
    assert not missing, f"big.py's range is not restored as on disk: {missing[:3]}"
    outside = [f"BIG {n:05d}" for n in (1, lo - 1, last + 1, 300) if f"BIG {n:05d}" in text]
    assert not outside, f"big.py restored beyond the lines read and edited: {outside}"
    assert f'"offset":{lo},"limit":{last - lo + 1}' in text, "big.py's range is not named so"
    assert "PIPED 001" not in text, f"{PIPED}, read through a pipe, was recorded"
    assert restoration(resumed) == parts, "the restoration is not in the next turn's request"
    assert not cap["hook_log"], f"the hook logged:\n{cap['hook_log']}"
    assert "trusted postcompact@postcompact:hooks/codex.json" in cap["install_log"], (
        f"the install did not trust the hooks:\n{cap['install_log'][-1500:]}"
    )
    ours = [s for s in cap["daemon_sessions"] if s["session_id"] == f"codex-{cap['session_id']}"]
    assert len(ours) == 1, f"the daemon does not hold the session: {cap['daemon_sessions']}"
    assert ours[0]["compactions"] == 1, f"the daemon saw {ours[0]['compactions']} compactions"


def check_control(cap: dict[str, Any]) -> None:
    first, resumed = after_compaction(cap)
    for body in (first, resumed):
        assert not restoration(body), "postcompact's parts without the plugin"
        assert "postcompact" not in json.dumps(body), "postcompact in a run without the plugin"
    assert all(f"EDITED {n:05d}" in cap["files"]["src/big.py"] for n in EDITED_LINES), "no edit"


def check_down(cap: dict[str, Any]) -> None:
    assert all(t["exit_code"] == 0 for t in cap["turns"]), "Codex failed with the daemon down"
    first, resumed = after_compaction(cap)
    assert not restoration(first), "parts without a daemon?"
    assert not restoration(resumed), "parts without a daemon?"
    for r in cap["requests"]:
        assert "could not be started" not in json.dumps(r["body"]), "the message reached the model"
    told = [ln for ln in cap["hook_log"].splitlines() if "could not be started" in ln]
    assert len(told) == 1, f"not said once: {told}"
    assert DOWN_REASON in told[0], f"the message does not say why: {told[0]}"
    assert cap["backoff_marker"], "no back-off marker after the failed start"


def main() -> int:
    codex = codex_binary()
    env = {**os.environ, **go_env()}
    keep = os.environ.get("CODEX_E2E_KEEP")
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="pccodex-"))
    base.mkdir(parents=True, exist_ok=True)
    for d in ("plugin", "control", "down"):
        shutil.rmtree(base / d, ignore_errors=True)
    try:
        plugin = run_session(codex, base / "plugin", "plugin", env)
        check_plugin(plugin)
        control = run_session(codex, base / "control", "control", env)
        check_control(control)
        down = run_session(codex, base / "down", "down", env)
        check_down(down)
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    seconds = ", ".join(f"{c['mode']} {c['seconds']:.0f}s" for c in (plugin, control, down))
    print(f"codex e2e: {seconds}", flush=True)
    print(f"codex {plugin['codex']}: restored files reached the model after compaction", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
