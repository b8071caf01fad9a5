"""One soak agent (Python client): a mixed workload on its own session for a bounded time,
tracking what the daemon must hold and checking it after every daemon restart.

`python -m bench.soak.agent --address unix:///d.sock --name p0 --dir DIR --seconds 120
--epoch-file F --out result.json`. The Go agent (clients/go/cmd/soak-agent) does the same.

Expected state, checked after each restart (the orchestrator bumps `--epoch-file` once the new
daemon serves) and at the end; every miss counts as state lost:
- the session is listed;
- every file this agent recorded (RecordRead, RecordWrite, a ReadFile that answered, or restored
  by its last Compact) is still a file-state entry with the same content: CheckWrite ALLOWED, and
  a PreviewCompact candidate;
- every skill it recorded is a PreviewCompact skill candidate;
- the catalogue it last set (or that its last Compact re-announced) is remembered: setting the
  same catalogue again announces nothing.
A call that fails after the request may have reached the daemon (a non-idempotent ReadFile,
Compact or SetCatalog caught by the kill) makes that one expectation unknown; it is dropped, not
guessed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from postcompact_client import Client, PostcompactError, RetryPolicy
from postcompact_client.types import Outcome, Subject, WriteCheck

T = TypeVar("T")

FILES = 24  # per agent: well under the file-state cache's 100 entries
SKILLS = 12
TOOLS = [f"mcp__soak__tool_{i}" for i in range(30)]
TS0 = 1_700_000_000_000


def make_project(root: Path, rng: random.Random) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(FILES):
        p = root / f"src/mod{i:02d}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"def f{i}_{j}(x):\n    return x * {rng.randint(1, 99)}\n" for j in range(40)]
        p.write_text("".join(lines))
        paths.append(p)
    return paths


class Agent:
    def __init__(self, args: argparse.Namespace):
        self.name: str = args.name
        self.rng = random.Random(args.seed)
        self.deadline = time.monotonic() + args.seconds
        self.epoch_file = Path(args.epoch_file)
        self.epoch = self._read_epoch()
        self.client = Client(args.address, auto_start=False, timeout=30.0, retry=RetryPolicy())
        self.root = Path(args.dir)
        self.paths = make_project(self.root, self.rng)
        self.ops: Counter[str] = Counter()
        self.lat: dict[str, list[int]] = defaultdict(list)
        self.errors: Counter[str] = Counter()
        self.lost: list[str] = []
        self.checks = 0
        self.restarts_seen = 0
        self.files: set[str] = set()
        self.skills: set[str] = set()
        self.catalog: list[str] | None = None  # None: unknown (a call that may have applied)
        self.catalog_now = sorted(self.rng.sample(TOOLS, 8))
        self.n = 0
        sid = f"soak-{self.name}"
        self.session = self.client.open_session(str(self.root), session_id=sid)
        self.session_id = sid

    def _read_epoch(self) -> str:
        try:
            return self.epoch_file.read_text()
        except OSError:
            return ""

    def timed(self, method: str, fn: Callable[[], T]) -> T | None:
        t0 = time.perf_counter_ns()
        try:
            r = fn()
        except PostcompactError as e:
            kind = e.reason or ("not retried" if "not retried" in e.message else "transport")
            self.errors[f"{method} {e.code.name} {kind}"] += 1
            return None
        self.lat[method].append((time.perf_counter_ns() - t0) // 1000)
        self.ops[method] += 1
        return r

    # --- the workload ---------------------------------------------------------------------
    def step(self) -> None:
        self.n += 1
        s = self.session
        p = self.rng.choice(self.paths)
        path = str(p)
        roll = self.rng.random()
        if roll < 0.22:
            if self.timed("ReadFile", lambda: s.read_file(path)) is not None:
                self.files.add(path)
        elif roll < 0.40:
            content = p.read_bytes()
            mtime = p.stat().st_mtime_ns // 1_000_000
            if self.timed("RecordRead", lambda: s.record_read(path, content, timestamp_ms=mtime)):
                self.files.add(path)
        elif roll < 0.55:
            check = self.timed("CheckWrite", lambda: s.check_write(path))
            if check is not None and check.result == WriteCheck.ALLOWED:
                text = p.read_text() + f"# edit {self.n}\n"
                p.write_text(text)
                mtime = p.stat().st_mtime_ns // 1_000_000
                wrote = self.timed(
                    "RecordWrite", lambda: s.record_write(path, text, timestamp_ms=mtime)
                )
                if wrote:
                    self.files.add(path)
                else:
                    self.files.discard(path)  # on disk but maybe not recorded: unknown
        elif roll < 0.67:
            name = f"skill-{self.rng.randrange(SKILLS)}"
            body = f"# {name}\n\nDo the thing {name} says.\n" * 4
            at = TS0 + self.n
            recorded = self.timed(
                "RecordSkill", lambda: s.record_skill(name, content=body, invoked_at_ms=at)
            )
            if recorded:
                self.skills.add(name)
        elif roll < 0.74:
            task = {
                "task_id": f"{self.name}-t{self.rng.randrange(20)}",
                "task_type": "local_agent",
                "description": "background work",
                "status": self.rng.choice(["running", "completed"]),
            }
            self.timed("UpsertTask", lambda: s.upsert_task(task))
        elif roll < 0.80:
            if self.rng.random() < 0.5:
                self.catalog_now = sorted(self.rng.sample(TOOLS, 8))
            tools = self.catalog_now
            if self.timed("SetCatalog", lambda: s.set_catalog(deferred_tools=tools)) is not None:
                self.catalog = list(tools)
            else:
                self.catalog = None
        elif roll < 0.86:
            self.timed("CheckStale", s.check_stale)
        elif roll < 0.93:
            text = p.read_text()
            self.timed("EstimateTokens", lambda: self.client.estimate_tokens(text))
        elif roll < 0.97:
            self.timed("PreviewCompact", s.preview_compact)
        else:
            compacted = self.timed("Compact", s.compact)
            if compacted is None:  # may have run or not: cache and announcements unknown
                self.files.clear()
                self.catalog = None
            else:
                self.files = {
                    d.name
                    for d in compacted.decisions
                    if d.subject == Subject.FILE and d.outcome == Outcome.RESTORED
                }
                # a FULL compaction re-announces the stored catalogue: self.catalog stays right

    # --- verification ---------------------------------------------------------------------
    def verify(self, when: str) -> None:
        self.checks += 1
        s = self.session
        sessions = self.timed("ListSessions", self.client.list_sessions)
        if sessions is not None and not any(i.session_id == self.session_id for i in sessions):
            self.lost.append(f"{when}: session {self.session_id} missing")
        preview = self.timed("PreviewCompact", s.preview_compact)
        if preview is not None:
            names = {(d.subject, d.name) for d in preview.decisions}
            for f in sorted(self.files):
                if (Subject.FILE, f) not in names:
                    self.lost.append(f"{when}: file entry {f} missing")
            for k in sorted(self.skills):
                if (Subject.SKILL, k) not in names:
                    self.lost.append(f"{when}: skill {k} missing")
        for f in sorted(self.files):
            r = self.timed("CheckWrite", lambda f=f: s.check_write(f))  # type: ignore[misc]
            if r is not None and r.result != WriteCheck.ALLOWED:
                self.lost.append(f"{when}: CheckWrite {f}: {r.result}")
        if self.catalog is not None:
            tools = self.catalog
            delta = self.timed("SetCatalog", lambda: s.set_catalog(deferred_tools=tools))
            if delta is None:
                self.catalog = None
            elif delta:
                self.lost.append(f"{when}: catalogue re-announced {len(delta)} attachment(s)")

    def run(self) -> dict[str, Any]:
        while time.monotonic() < self.deadline:
            epoch = self._read_epoch()
            if epoch != self.epoch:
                self.epoch = epoch
                self.restarts_seen += 1
                self.verify(f"after restart {epoch.strip()}")
            self.step()
        self.verify("at the end")
        self.client.close()
        return {
            "agent": self.name,
            "lang": "python",
            "ops": dict(self.ops),
            "lat_us": dict(self.lat),
            "errors": dict(self.errors),
            "checks": self.checks,
            "restarts_seen": self.restarts_seen,
            "lost": len(self.lost),
            "lost_detail": self.lost[:20],
        }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--address", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--epoch-file", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    result = Agent(args).run()
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
