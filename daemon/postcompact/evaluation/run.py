"""`postcompact eval`'s work: every transcript under every policy, pooled (docs/eval.md)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from postcompact.evaluation.corpus import TranscriptFile
from postcompact.evaluation.measure import Counts, Scored, score_transcript
from postcompact.evaluation.need import points
from postcompact.evaluation.policies import Policy
from postcompact.transcript.parse import TranscriptError, parse

__all__ = ["Evaluation", "Row", "evaluate"]


@dataclass(frozen=True, slots=True)
class Row:
    """One compaction under one policy."""

    policy: str
    file: str
    repo: str
    half: str
    boundary: int  # 1-based among the file's main-thread compactions
    line: int
    trigger: str
    counts: dict[int, Counts]


@dataclass(slots=True)
class Evaluation:
    policies: list[Policy]
    windows: tuple[int, ...]
    rows: list[Row] = field(default_factory=list)
    files: int = 0
    failures: list[str] = field(default_factory=list)  # "file: why" for files not read
    seconds: float = 0.0

    def pooled(
        self, policy: str, window: int, *, half: str | None = None, repo: str | None = None
    ) -> Counts:
        out = Counts()
        for r in self.rows:
            if r.policy != policy or (half and r.half != half) or (repo and r.repo != repo):
                continue
            out.add(r.counts[window])
        return out

    @property
    def repos(self) -> list[str]:
        return sorted({r.repo for r in self.rows})

    def half_of_repo(self, repo: str) -> str:
        return next(r.half for r in self.rows if r.repo == repo)


Progress = Callable[[int, int, TranscriptFile], None]


def evaluate(
    files: Sequence[TranscriptFile],
    policies: Sequence[Policy],
    windows: Sequence[int],
    progress: Progress | None = None,
) -> Evaluation:
    """Every policy on every file (each file parsed once); a file that cannot be read is
    reported in `failures` and the others go on."""
    started = time.monotonic()
    ev = Evaluation(list(policies), tuple(sorted(set(windows))))
    for n, f in enumerate(files, start=1):
        if progress is not None:
            progress(n, len(files), f)
        try:
            t = parse(f.path.read_bytes())
        except (OSError, TranscriptError) as exc:
            ev.failures.append(f"{f.path}: {exc}")
            continue
        pts = points(t, max(ev.windows))
        ev.files += 1
        if not pts:
            continue
        for p in policies:
            try:
                scored = asyncio.run(score_transcript(t, pts, p, ev.windows))
            except ValueError as exc:  # a transcript the replay cannot place (its cwd)
                ev.failures.append(f"{f.path}: {exc}")
                break
            ev.rows.extend(_rows(p, f, scored))
    ev.seconds = time.monotonic() - started
    return ev


def _rows(p: Policy, f: TranscriptFile, scored: Sequence[Scored]) -> list[Row]:
    return [
        Row(
            p.name,
            f.path.name,
            f.repo,
            f.half,
            s.point.number,
            s.point.boundary.line,
            s.point.boundary.trigger,
            s.counts,
        )
        for s in scored
    ]
