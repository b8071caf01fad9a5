"""`make parity`: the real Claude Code, offline, beside the daemon (docs/parity.md, "Against the
running Claude Code").

Installs the pinned Claude Code (`@anthropic-ai/claude-code-linux-x64`) into `.cache/` when it
is not there, runs every scenario of `tests.parity.scenarios` through it against the scripted
model server (in a network namespace of its own as root: nothing but the loopback), replays each
through a live daemon under `claude-code` and compares (`tests.parity.compare`). Writes the
results into docs/parity.md between its `live` markers (`PARITY_WRITE_DOC=0`, or naming some
scenarios, `python -m tests.parity files plan`, does not) and bench/out/parity.json. Exit 1
when a scenario could not run or anything compared differs. Captures stay in a temporary
directory, removed at the end (they hold Claude Code's prose); `PARITY_KEEP=DIR` keeps them.
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

from tests.daemon.conftest import start_daemon
from tests.npm_pinned import install_pinned
from tests.offline import isolation
from tests.parity.compare import Comparison, Item, compare
from tests.parity.scenarios import SCENARIOS

CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code-linux-x64"
CLAUDE_CODE_VERSION = "2.1.336"  # the version docs/claude-code.md describes as today's
ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "claude-code" / CLAUDE_CODE_VERSION
DOC = ROOT / "docs" / "parity.md"
BEGIN, END = "<!-- generated: live -->", "<!-- end: live -->"
SESSION_TIMEOUT_S = 300


def claude_binary() -> Path:
    """The pinned Claude Code executable, installed from the npm registry when missing."""
    binary = CACHE / "node_modules" / CLAUDE_CODE_PACKAGE / "claude"
    return install_pinned(CACHE, CLAUDE_CODE_PACKAGE, CLAUDE_CODE_VERSION, binary, "parity")


def run_scenario(claude: Path, name: str, base: Path) -> dict[str, Any] | None:
    cmd = [*isolation(), sys.executable, "-m", "tests.parity.session"]
    cmd += ["--claude", str(claude), "--scenario", name, "--dir", str(base)]
    t0 = time.monotonic()
    r = subprocess.run(cmd, cwd=ROOT, timeout=SESSION_TIMEOUT_S, check=False)
    capture = base / "capture.json"
    if r.returncode != 0 or not capture.is_file():
        err = base / "claude-stderr.txt"
        tail = err.read_text(errors="replace")[-2000:] if err.is_file() else ""
        print(f"parity: {name}: the session did not complete (exit {r.returncode})\n{tail}")
        return None
    data: dict[str, Any] = json.loads(capture.read_text())
    data["seconds"] = round(time.monotonic() - t0, 1)
    return data


def _short(item: str) -> str:
    """`note /a/b/c.py` -> `note c.py`."""
    note, _, path = item.rpartition(" ")
    return f"{note} {Path(path).name}".strip()


def _equal(i: Item) -> str:
    return "yes" if i.equal else "by design" if i.by_design else "**no**"


def write_doc(results: list[tuple[str, dict[str, Any] | None, Comparison | None]]) -> None:
    version = next((cap["claude_code"] for _, cap, _ in results if cap), CLAUDE_CODE_VERSION)
    version = version.removesuffix(" (Claude Code)")
    isolated = "its own network namespace" if isolation() else "no namespace (not root)"
    lines = [
        BEGIN,
        f"Last run: {time.strftime('%Y-%m-%d %H:%M', time.localtime())}, Claude Code "
        f"{version}, {isolated}.",
        "",
        "| scenario | compaction | files (Claude Code) | files equal | attachments equal "
        "| out of scope |",
        "|---|---|---|---|---|---|",
    ]
    for name, cap, c in results:
        if cap is None or c is None:
            lines.append(f"| {name} | — | the session did not complete | **no** | — | — |")
            continue
        equal = sum(i.equal for i in c.items)
        design = sum(i.by_design for i in c.items)
        mark = f" (+{design} by design)" if design else ""
        files = ", ".join(_short(f) for f in c.cc_files) or "(none)"
        lines.append(
            f"| {name} | {c.trigger} | {files} | {'yes' if c.files_equal else '**no**'} | "
            f"{equal} of {len(c.items)}{mark} | {', '.join(c.out_of_scope) or '—'} |"
        )
    lines += ["", "Each attachment compared:", ""]
    lines += [
        "| scenario | kind | attachment | equal | first difference or note |",
        "|---|---|---|---|---|",
    ]
    for name, cap, c in results:
        here = f"{cap['project']}/" if cap else "\0"  # paths shown relative to the project
        for i in c.items if c else []:
            what = i.what.replace(here, "").replace("|", "\\|").replace("\n", " ")[:90]
            detail = i.detail.replace(here, "").replace("|", "\\|").replace("\n", " ")[:300]
            lines.append(f"| {name} | {i.kind} | {what} | {_equal(i)} | {detail} |")
    lines.append(END)
    text = DOC.read_text()
    if BEGIN not in text:
        raise SystemExit(f"parity: {DOC} has no {BEGIN} marker")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(head + "\n".join(lines) + tail)


def main() -> int:
    claude = claude_binary()
    keep = os.environ.get("PARITY_KEEP")
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="pcparity-"))
    base.mkdir(parents=True, exist_ok=True)
    names = sys.argv[1:] or sorted(SCENARIOS)
    results: list[tuple[str, dict[str, Any] | None, Comparison | None]] = []
    daemon = start_daemon()
    try:
        for name in names:
            print(f"parity: {name}", flush=True)
            work = base / name
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            cap = run_scenario(claude, name, work)
            c = compare(cap, daemon, f"parity-{name}") if cap else None
            results.append((name, cap, c))
            if c is not None:
                bad = [i for i in c.items if not i.equal and not i.by_design]
                print(
                    f"parity: {name}: files {'equal' if c.files_equal else 'DIFFER'} "
                    f"({len(c.cc_files)}), {len(c.items) - len(bad)} of {len(c.items)} "
                    "attachments equal"
                )
                if not c.files_equal:
                    print(f"  Claude Code: {c.cc_files}\n  postcompact: {c.pc_files}")
                for i in bad:
                    print(f"  {i.kind} {i.what[:60]!r}: {i.detail}")
    finally:
        daemon.stop()
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "parity.json").write_text(
        json.dumps([c.as_dict() if c else {"scenario": n} for n, _, c in results], indent=1)
    )
    if os.environ.get("PARITY_WRITE_DOC", "1") != "0" and not sys.argv[1:]:  # all of them
        write_doc(results)
    good = all(c is not None and c.equal for _, _, c in results)
    print(f"parity: Claude Code {CLAUDE_CODE_VERSION}: {'all equal' if good else 'DIFFERENCES'}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
