"""B8 — the Claude Code plugin's hook command: one hook call, process start to exit.

Claude Code runs a hook as a new process per event, its JSON on stdin. The plugin's hook is a
compiled Go program (clients/go/cmd/postcompact-hook); this measures what a call costs end to
end — spawn, read the payload, one gRPC call to the daemon over its Unix socket, exit — beside
the same report made by a Python program through the Python client (bench/_hook_python.py) and
the floors of a process (`/bin/true`) and of a Python start-up (`python -c pass`).

Series, alternated call by call (so that the machine's drift hits them alike):

- `true`: spawn and wait, the floor of any hook;
- `python -c pass`: the interpreter's start-up, the floor of a Python hook;
- go PostToolUse Read: the hook with a Read's payload (a 2.4 KB file): RecordRead;
- python PostToolUse Read: bench/_hook_python.py with the same payload: RecordRead;
- go SessionStart(compact) part 1: the hook printing its part of the restoration (a
  PreviewCompact of a session that read twelve files; Claude Code's five left to it).

The daemon runs pinned to CPU 0, this driver and the hooks it spawns to CPU 1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench._daemon import running_daemon
from bench._measure import pin_client
from bench.report import ROOT, Section, Table, bar_chart, percentile

GO = os.environ.get("GO") or shutil.which("go") or "/usr/local/go/bin/go"
BIN = ROOT / "bench" / "out" / "bin"
TARGET_MS = 30.0
SESSION = "b8-bench-session"


@dataclass
class Series:
    name: str
    argv: list[str]
    payload: Any = None  # a callable (i) -> bytes, or None
    lat: list[float] = field(default_factory=list)

    def once(self, env: dict[str, str], i: int) -> None:
        data = self.payload(i) if self.payload else b""
        t0 = time.perf_counter()
        r = subprocess.run(self.argv, input=data, env=env, capture_output=True, check=False)
        self.lat.append(time.perf_counter() - t0)
        if r.returncode != 0:
            raise RuntimeError(f"{self.name}: exit {r.returncode}: {r.stderr.decode()[-500:]}")

    def row(self) -> list[object]:
        ms = sorted(x * 1e3 for x in self.lat)
        return [
            self.name,
            len(ms),
            percentile(ms, 0.5),
            percentile(ms, 0.9),
            percentile(ms, 0.99),
        ]


def build_hook() -> Path:
    exe = BIN / "postcompact-hook"
    BIN.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [GO, "build", "-trimpath", "-o", str(exe), "./cmd/postcompact-hook"],
        cwd=ROOT / "clients" / "go",
        check=True,
    )
    return exe


def make_project(root: Path) -> list[Path]:
    files = []
    for i in range(12):
        f = root / "src" / f"m{i:02d}.py"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(
            "".join(f"def f{i}_{j}(x):\n    return x + {j}  # padding\n" for j in range(40))
        )
        t = 1_780_000_000 + 60 * i
        os.utime(f, (t, t))
        files.append(f)
    return files


def read_payload(project: Path, path: Path, tool_use_id: str) -> bytes:
    content = path.read_text()
    n = content.count("\n") + 1
    return json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": str(project / "t.jsonl"),
            "cwd": str(project),
            "prompt_id": "p",
            "permission_mode": "acceptEdits",
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "tool_input": {"file_path": str(path)},
            "tool_response": {
                "type": "text",
                "file": {
                    "filePath": str(path),
                    "content": content,
                    "numLines": n,
                    "startLine": 1,
                    "totalLines": n,
                },
            },
            "tool_use_id": tool_use_id,
        }
    ).encode()


def measure(quick: bool) -> tuple[list[Series], dict[str, Any]]:
    pin_client()
    hook = build_hook()
    rounds = 40 if quick else 300
    tmp = Path(tempfile.mkdtemp(prefix="pcb8-", dir="/tmp"))
    try:
        project = tmp / "project"
        files = make_project(project)
        with running_daemon(tmp) as d:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(tmp),
                "POSTCOMPACT_ADDRESS": d.address,
                "POSTCOMPACT_HOOK_STATE": str(tmp / "hook-state"),
                "CLAUDE_PROJECT_DIR": str(project),
                "CLAUDECODE": "1",
                "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
            }
            # The session: every file read once (and opened) by the hook.
            for i, f in enumerate(files):
                subprocess.run(
                    [str(hook)], input=read_payload(project, f, f"w{i}"), env=env, check=True
                )
            target = files[3]  # not one of Claude Code's five: its RecordRead is the same
            compact = json.dumps(
                {
                    "session_id": SESSION,
                    "transcript_path": str(project / "t.jsonl"),
                    "cwd": str(project),
                    "hook_event_name": "SessionStart",
                    "source": "compact",
                    "model": "m",
                }
            ).encode()
            series = [
                Series("`true`", ["true"]),
                Series("`python -c pass`", [sys.executable, "-c", "pass"]),
                Series(
                    "go PostToolUse Read",
                    [str(hook)],
                    lambda i: read_payload(project, target, f"go{i}"),
                ),
                Series(
                    "python PostToolUse Read",
                    [sys.executable, str(ROOT / "bench" / "_hook_python.py")],
                    lambda i: read_payload(project, target, f"py{i}"),
                ),
                Series(
                    "go SessionStart(compact) part 1", [str(hook), "--part", "1"], lambda i: compact
                ),
            ]
            for s in series:  # warm-up: page cache, the daemon's first answers
                for i in range(3):
                    s.once(env, -1 - i)
                s.lat.clear()
            for i in range(rounds):
                for s in series:
                    s.once(env, i)
            out = subprocess.run(
                [str(hook), "--part", "1"], input=compact, env=env, capture_output=True, check=True
            )
            part = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
            info = {"part_chars": len(part.encode("utf-16-le")) // 2, "files": len(files)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return series, info


def run(quick: bool = False) -> Section:
    series, info = measure(quick)
    by = {s.name: s for s in series}

    def p50(name: str) -> float:
        return percentile(sorted(x * 1e3 for x in by[name].lat), 0.5)

    go, py = p50("go PostToolUse Read"), p50("python PostToolUse Read")
    table = Table(
        "One hook call, process start to exit (ms), Unix socket",
        ["series", "calls", "p50 ms", "p90 ms", "p99 ms"],
        [s.row() for s in series],
    )
    ratios = Table(
        "The Go hook against the same report from Python",
        ["PostToolUse Read", "p50 ms", "÷ go"],
        [
            ["go (postcompact-hook)", go, "1.00x"],
            ["python (postcompact_client)", py, f"{py / go:.1f}x"],
        ],
    )
    met = "met" if go < TARGET_MS else "NOT met"
    plot = bar_chart(
        table,
        "b8_hooks.png",
        title="B8 one hook call, p50 (ms, log scale), lower is better",
        value_col=2,
        log=True,
    )
    return Section(
        "B8 — the Claude Code plugin's hook, one call end to end",
        __doc__.split("\n", 1)[1].strip()
        + f"\n\nThe part printed holds {info['part_chars']:,} characters (the session read "
        f"{info['files']} files).",
        [table, ratios],
        plots=[plot],
        verdicts=[
            f"go PostToolUse Read, p50: {go:.1f} ms (target < {TARGET_MS:.0f} ms) — {met}; "
            f"the Python equivalent {py:.0f} ms ({py / go:.1f}x)"
        ],
    )
