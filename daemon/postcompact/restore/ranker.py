"""The learned file ranking (`FileRanking.SCORED`; docs/eval.md §5): each candidate file ranked
by the value of restoring it per token spent.

A small logistic model gives the probability that the agent needs the file next and that
restoring the lines it saw covers that need; the rank is that probability over the tokens the
file would cost, `log p - alpha * log(1 + tokens)`: with a budget of tokens to fill, a file twice
as likely to be needed is worth restoring at up to twice the cost (`alpha` 1). The weights and
`alpha` are trained by `postcompact eval` on real sessions, under the same
leave-one-repository-out procedure that picks the default (evaluation/learned.py), and committed
in `ranking_model.json` beside this module; `make eval` checks them against a retrain.

Every feature is read from the agent's state as the daemon records it (RecordRead, RecordWrite,
an import's reads and writes) and stores it in both stores (the file's entry: its content, its
timestamp, its offset and limit; what was seen of it: `state/seen.py`), so a ranking is the same
after a restart or in another sandbox:

- `recency`: log(1 + the file's place among the candidates, most recently used first);
- `tokens`: log(1 + the rough tokens restoring it would cost: the lines seen of it, else what
  its entry holds, at 4 bytes a token and 2 tokens a line for the numbering);
- `span`: log(1 + the lines seen since the last compaction; 0 when none);
- `edited`: the agent edited or wrote the file since the last compaction;
- `whole`: the entry holds the whole file (read from line 1 without a limit, not a partial
  view).

Whether Claude Code's own rule would restore the file is no feature, on purpose: the sessions the
model learns from ran under Claude Code, which restored those files itself, so the agent seldom
re-read them and they look unneeded; a model that learned that would leave them out wherever
Claude Code does not restore them. They are left out of the training too (`Candidate.harness`).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from postcompact import core
from postcompact.state.seen import Seen

__all__ = [
    "FEATURES",
    "MODEL",
    "OBSERVER",
    "Candidate",
    "Model",
    "Scored",
    "committed",
    "features",
    "rank",
]

FEATURES = ("recency", "tokens", "span", "edited", "whole")
BYTES_PER_TOKEN = 4  # Claude Code's rough estimate
TOKENS_PER_LINE = 2  # the line numbers of a Read result ("    12\t")


@dataclass(frozen=True, slots=True)
class Model:
    """`bias` + `weights` (one per `FEATURES` name) give the log-odds of a need; `alpha` weighs
    the tokens against it. `about`: how it was trained (from `ranking_model.json`)."""

    bias: float
    weights: tuple[float, ...]
    alpha: float
    about: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def probability(self, x: Sequence[float]) -> float:
        z = self.bias + sum(w * v for w, v in zip(self.weights, x, strict=True))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "bias": self.bias,
            "weights": dict(zip(FEATURES, self.weights, strict=True)),
            "alpha": self.alpha,
            **self.about,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Model:
        weights = data["weights"]
        if list(data["features"]) != list(FEATURES) or set(weights) != set(FEATURES):
            raise ValueError(f"a ranking model must have the features {', '.join(FEATURES)}")
        about = {k: v for k, v in data.items() if k not in ("features", "bias", "weights", "alpha")}
        return cls(
            float(data["bias"]),
            tuple(float(weights[f]) for f in FEATURES),
            float(data["alpha"]),
            about,
        )


MODEL_FILE = "ranking_model.json"


@functools.cache
def committed() -> Model:
    """The model committed beside this module (read once)."""
    text = resources.files("postcompact.restore").joinpath(MODEL_FILE).read_text("utf-8")
    return Model.from_json(json.loads(text))


# `postcompact eval` replays rules with models trained on part of the corpus (its folds) and
# collects the features of every candidate to train on: both in-process, set around a replay.
MODEL: ContextVar[Model | None] = ContextVar("postcompact_ranking_model", default=None)
OBSERVER: ContextVar[Callable[[str, list[Candidate]], None] | None] = ContextVar(
    "postcompact_ranking_observer", default=None
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One candidate's features (`FEATURES` order) and what they were made from."""

    path: str
    x: tuple[float, ...]
    place: int  # 0-based, most recently used first
    tokens: int
    seen: Seen | None
    whole: bool
    harness: bool = False  # Claude Code's own rule restores it (restore/harness.py)


@dataclass(frozen=True, slots=True)
class Scored:
    candidate: Candidate
    probability: float
    score: float

    def explain(self) -> str:
        """The decision trace's account of the rank: the score and the features behind it."""
        c = self.candidate
        parts = [f"{_ordinal(c.place + 1)} most recently used", f"~{c.tokens:,} tokens"]
        if c.seen is not None and c.seen.first > 0:
            parts.append(f"lines {c.seen.first}-{c.seen.last} seen")
        if c.seen is not None and c.seen.edited:
            parts.append("edited")
        parts.append("read whole" if c.whole else "read in part")
        if c.harness:
            parts.append("Claude Code's rule restores it")
        return (
            f"ranked by value per token: p(needed)={self.probability:.2f}, "
            f"score {self.score:.2f} ({', '.join(parts)})"
        )


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _span_tokens(state: core.FileState, seen: Seen | None) -> int:
    """The rough tokens of restoring `state`'s file: its lines seen when known, else the entry."""
    content = state.content
    total = content.count(b"\n") + 1 if content else 0
    lines, size = total, len(content)
    if seen is not None and seen.first > 0 and total:
        # The entry holds lines base..base+total-1 of the file (a range read: from its offset).
        base = max(1, state.offset or 1)
        first, last = max(seen.first, base), min(seen.last, base + total - 1)
        span = max(1, last - first + 1)
        if span < total:
            size = len(content) * span // total
            lines = span
    return size // BYTES_PER_TOKEN + TOKENS_PER_LINE * lines


def features(
    ranked: Sequence[tuple[str, int, core.FileState | None]],
    seen: Mapping[str, Seen],
    harness: Collection[str] = (),
) -> list[Candidate | None]:
    """Each candidate's features, `ranked` most recently used first (None: a candidate with no
    entry, a path-only note kept from a previous compaction: ranked last); `harness`: the files
    Claude Code's own rule restores."""
    out: list[Candidate | None] = []
    for place, (path, _, state) in enumerate(ranked):
        if state is None:
            out.append(None)
            continue
        got = seen.get(path)
        whole = (state.offset or 1) == 1 and state.limit is None and not state.partial_view
        tokens = _span_tokens(state, got)
        span = got.last - got.first + 1 if got is not None and got.first > 0 else 0
        x = (
            math.log1p(place),
            math.log1p(tokens),
            math.log1p(span),
            1.0 if got is not None and got.edited else 0.0,
            1.0 if whole else 0.0,
        )
        out.append(Candidate(path, x, place, tokens, got, whole, path in harness))
    return out


def rank(
    candidates: Sequence[tuple[str, int, core.FileState | None]],
    seen: Mapping[str, Seen],
    harness: Collection[str] = (),
    agent_id: str = "",
) -> tuple[list[tuple[str, int, core.FileState | None]], dict[str, Scored]]:
    """`candidates` (most recently used first) ordered by value per token, highest first (ties
    keep the most recently used first), and each one's score for the decision trace."""
    model = MODEL.get() or committed()
    got = features(candidates, seen, frozenset(harness))
    observer = OBSERVER.get()
    if observer is not None:
        observer(agent_id, [c for c in got if c is not None])
    scored: dict[str, Scored] = {}
    keys: list[float] = []
    for c in got:
        if c is None:
            keys.append(math.inf)
            continue
        p = model.probability(c.x)
        score = (math.log(p) if p > 0 else -math.inf) - model.alpha * c.x[1]
        scored[c.path] = Scored(c, p, score)
        keys.append(-score)
    order = sorted(range(len(candidates)), key=lambda i: keys[i])  # stable: ties keep MRU
    return [candidates[i] for i in order], scored
