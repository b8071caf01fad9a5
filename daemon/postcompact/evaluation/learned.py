"""The learned ranking's family (docs/eval.md §5): train `restore/ranker.py`'s model on the
compactions of a set of repositories, as the selection procedure's folds need.

- **Examples**: every transcript replayed once under `COLLECT` (the default profile, ranking by
  the model, every candidate restored: its lines seen), the ranker reporting each main-thread
  candidate's features (`ranker.OBSERVER`); a candidate's label is whether the agent needed it
  in the first `window` tool calls after the compaction *and* the lines restored covered that
  need — what restoring it would have bought.
- **Training**: logistic regression by Newton's method with an L2 penalty `L2` on the weights
  (`BIAS_L2`, next to nothing, on the bias), in plain Python floats in a fixed order: the same
  examples give the same weights to the last bit, so a committed model can be checked against a
  retrain.
- **The family** (`learned`): the default profile's rule (the lines seen, up to 20 files of at
  most 5,000 tokens each, within Claude Code's tokens at each compaction) ranked by value per
  token, one configuration per `ALPHAS` value. In a fold, a configuration's model is trained on
  the fold's training repositories only (`Learned.fold_name`); on every repository, on all.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from postcompact.evaluation.measure import Restored, restored_of
from postcompact.evaluation.need import Point
from postcompact.evaluation.policies import Policy
from postcompact.restore import ranker
from postcompact.state import AgentState, Session
from postcompact.transcript.parse import Boundary, Transcript
from postcompact.transcript.paths import PathMap
from postcompact.transcript.replay import replay
from postcompact.v1 import postcompact_pb2 as pb

__all__ = [
    "ALPHAS",
    "COLLECT",
    "FAMILY",
    "L2",
    "Example",
    "Learned",
    "configuration_name",
    "examples",
    "fit",
    "learned_policy",
    "train",
]

FAMILY = "learned"
ALPHAS = (0.0, 0.5, 1.0, 1.5, 2.0)  # the weight of log(1 + tokens) against log p: the family's grid
L2 = 1.0
# The bias is barely penalised: enough that no examples, or labels all alike, still give a
# finite model (a fold may hold no needed file at all).
BIAS_L2 = 1e-6
NEWTON_STEPS = 100
NEWTON_TOLERANCE = 1e-12

# Every candidate restored (its lines seen), ranked by the model: its features and its cost.
COLLECT = pb.RestorePolicy(
    ranking=pb.FILE_RANKING_SCORED,
    restore_seen=True,
    max_files=100,
    file_token_budget=10_000_000,
    max_tokens_per_file=10_000_000,
    oversize=pb.OVERSIZE_POLICY_SKIP,
    match_budget=pb.HARNESS_RULE_NONE,
)


@dataclass(frozen=True, slots=True)
class Example:
    repo: str
    compaction: int  # index into the evaluation's compactions
    path: str
    x: tuple[float, ...]
    label: bool


def _labelled(
    point: Point, restored: Restored, carried: Mapping[str, set[int]], window: int
) -> dict[str, bool]:
    """Per candidate path: needed within `window` calls and covered by what was restored."""
    candidates = {p: set(lines) for p, lines in point.seen.items()}
    for p, lines in carried.items():
        candidates.setdefault(p, set()).update(lines)
    needed = point.needed(window, candidates)
    return {p: lines <= restored.lines.get(p, set()) for p, lines in needed.items()}


async def _collect(
    t: Transcript, points: Sequence[Point], window: int
) -> list[list[tuple[str, tuple[float, ...], bool]]]:
    """Per point of `t`: (path, features, label) of each main-thread candidate but those
    Claude Code's own rule restored there (their label is censored: the agent, holding them,
    seldom re-read them; `ranker`'s module doc)."""
    by_line = {p.boundary.line: p for p in points}
    captured: dict[str, list[ranker.Candidate]] = {}
    got: dict[int, tuple[list[ranker.Candidate], Restored, PathMap]] = {}

    async def observe(
        b: Boundary, session: Session, agent: AgentState, resp: pb.CompactResponse, paths: PathMap
    ) -> None:
        if not b.agent and b.line in by_line:
            got[b.line] = (captured.pop(agent.agent_id, []), restored_of(resp, paths), paths)

    token = ranker.OBSERVER.set(captured.__setitem__)
    try:
        await replay(t, profile=pb.PROFILE_DEFAULT, policy=COLLECT, observe=observe)
    finally:
        ranker.OBSERVER.reset(token)
    out: list[list[tuple[str, tuple[float, ...], bool]]] = []
    carried: dict[str, set[int]] = {}
    for point in points:
        cands, restored, paths = got.get(point.boundary.line, ([], Restored(), PathMap.under("/")))
        labels = _labelled(point, restored, carried, window)
        rows = []
        for c in cands:
            if c.harness:
                continue
            path = paths.original(c.path)
            rows.append((path, c.x, labels.get(path, False)))
        out.append(rows)
        carried = restored.lines
    return out


def examples(
    items: Iterable[tuple[str, Transcript, Sequence[Point]]],
    window: int,
    progress: Callable[[int], None] | None = None,
) -> list[Example]:
    """Every candidate of every main-thread compaction of `items` ((repository, transcript,
    its points), in the evaluation's compaction order), with its label."""
    out: list[Example] = []
    index = 0
    for n, (repo, t, points) in enumerate(items, start=1):
        for rows in asyncio.run(_collect(t, points, window)):
            out.extend(Example(repo, index, path, x, label) for path, x, label in rows)
            index += 1
        if progress is not None:
            progress(n)
    return out


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """a x = b by Gaussian elimination with partial pivoting (a small, positive definite a)."""
    n = len(b)
    m = [[*row, rhs] for row, rhs in zip(a, b, strict=True)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= f * m[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def train(data: Sequence[Example], alpha: float, l2: float = L2) -> ranker.Model:
    """The model on `data` (module doc); `alpha` is carried into it, not fitted (the weights do
    not depend on it)."""
    k = len(ranker.FEATURES) + 1
    rows = [(1.0, *e.x) for e in data]
    ys = [1.0 if e.label else 0.0 for e in data]
    w = [0.0] * k
    for _ in range(NEWTON_STEPS):
        penalty = [BIAS_L2, *([l2] * (k - 1))]
        grad = [penalty[j] * w[j] for j in range(k)]
        hess = [[(penalty[i] if i == j else 0.0) for j in range(k)] for i in range(k)]
        for x, y in zip(rows, ys, strict=True):
            z = sum(wi * xi for wi, xi in zip(w, x, strict=True))
            p = 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
            g, h = p - y, p * (1.0 - p)
            for i in range(k):
                grad[i] += g * x[i]
                hi = h * x[i]
                for j in range(i, k):
                    hess[i][j] += hi * x[j]
        for i in range(k):
            for j in range(i):
                hess[i][j] = hess[j][i]
        step = _solve(hess, grad)
        w = [wi - si for wi, si in zip(w, step, strict=True)]
        if max(abs(s) for s in step) < NEWTON_TOLERANCE:
            break
    positives = sum(1 for e in data if e.label)
    about = {
        "l2": l2,
        "examples": len(data),
        "positives": positives,
        "repositories": len({e.repo for e in data}),
        "compactions": len({(e.repo, e.compaction) for e in data}),
    }
    return ranker.Model(_round(w[0]), tuple(_round(v) for v in w[1:]), alpha, about)


def _round(v: float) -> float:
    """Ten significant digits: what is committed and compared."""
    return float(f"{v:.10g}")


def learned_policy(name: str, model: ranker.Model) -> Policy:
    """The family's rule under `model` (its `alpha` included)."""
    return Policy(
        name,
        pb.PROFILE_DEFAULT,
        pb.RestorePolicy(ranking=pb.FILE_RANKING_SCORED),
        f"{FAMILY}: the default profile's rule ranked by value per token, model trained on "
        f"{model.about.get('repositories', '?')} repositories",
        model=model,
    )


def configuration_name(alpha: float) -> str:
    return f"{FAMILY}/alpha-{alpha:g}"


@dataclass(slots=True)
class Learned:
    """The family's configurations: per alpha the model on every repository, and per held-out
    repository the model on the others (their policies are replayed like any other)."""

    everything: dict[str, ranker.Model] = field(default_factory=dict)  # name -> model
    folds: dict[str, dict[str, ranker.Model]] = field(default_factory=dict)  # repo -> name -> m

    @staticmethod
    def fold_name(name: str, repo: str) -> str:
        return f"{name} without {repo}"

    def policies(self) -> list[Policy]:
        out = [learned_policy(n, m) for n, m in self.everything.items()]
        for repo, models in self.folds.items():
            out.extend(learned_policy(self.fold_name(n, repo), m) for n, m in models.items())
        return out

    def table_names(self, repo: str | None) -> dict[str, str]:
        """The family's configurations -> the column to read for them: held out `repo`, its
        fold's models (None: every repository's)."""
        if repo is None:
            return {n: n for n in self.everything}
        return {n: self.fold_name(n, repo) for n in self.folds[repo]}


def fit(data: Sequence[Example], repos: Sequence[str], alphas: Sequence[float] = ALPHAS) -> Learned:
    """The family: per alpha, a model on every repository and one per held-out repository."""
    out = Learned()
    model = train(data, alphas[0])
    out.everything = {configuration_name(a): replace(model, alpha=a) for a in alphas}
    for repo in sorted(set(repos)):
        model = train([e for e in data if e.repo != repo], alphas[0])
        out.folds[repo] = {configuration_name(a): replace(model, alpha=a) for a in alphas}
    return out
