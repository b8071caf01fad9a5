"""The selection procedure and its leave-one-repository-out estimate (docs/eval.md §3).

**The procedure**, on a set of compactions: among the candidate configurations (every grid
point of the rule families, `policies.FAMILIES`, claude-code's own rule among them) whose
pooled tokens restored there are at most claude-code's pooled tokens there, the one with the
highest pooled recall (at the selection window, 30); ties: fewer tokens, then the name. Since
claude-code is a candidate, the pick's recall on the compactions it was picked on is never below
claude-code's.

**Leave one repository out**: for each repository, the procedure picks on the compactions of
every other repository, and the held-out repository's compactions are scored under that pick;
the held-out counts, pooled over the folds, are the procedure's cross-validated figures. What
the procedure picks on all repositories is what the default should be.

Every configuration is replayed once per compaction (`run.evaluate`); the folds only select
from that table. Pure Python: the intervals (`intervals`) re-run the same rule on resamples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from postcompact.evaluation.measure import Counts

__all__ = [
    "CrossValidation",
    "Fold",
    "FoldNames",
    "FoldTable",
    "Interval",
    "held_out",
    "loro",
    "pick",
    "pooled",
    "rank",
]

Table = Mapping[str, Sequence[Counts]]  # configuration -> its counts at each compaction


@dataclass(frozen=True, slots=True)
class Interval:
    """A bootstrap 95% interval of a ratio; `undefined`: resamples where it had no value."""

    lo: float
    hi: float
    undefined: int = 0


@dataclass(frozen=True, slots=True)
class Fold:
    repo: str  # held out
    pick: str  # the column the procedure picked on the other repositories
    compactions: tuple[int, ...]  # the held-out compactions (indices into the table)
    # The candidate configuration it is (a trained one's column names its fold's model).
    candidate: str = ""


@dataclass(slots=True)
class CrossValidation:
    window: int  # the selection window
    baseline: str
    candidates: list[str]
    folds: list[Fold]
    pick: str  # on every compaction
    chosen: list[str]  # per compaction: the configuration its fold picked
    # window -> the intervals of the procedure's held-out recall and tokens over the baseline's
    intervals: dict[int, tuple[Interval | None, Interval | None]] = field(default_factory=dict)
    families: dict[str, int] = field(default_factory=dict)  # family -> configurations tried


def pooled(column: Sequence[Counts], indices: Iterable[int]) -> Counts:
    out = Counts()
    for i in indices:
        out.add(column[i])
    return out


def rank(c: Counts, name: str) -> tuple[Fraction, int, str]:
    """The procedure's order (smallest first): higher pooled recall, fewer tokens, the name."""
    recall = Fraction(c.covered_files, c.needed_files) if c.needed_files else Fraction(0)
    return (-recall, c.tokens_restored, name)


def pick(table: Table, indices: Sequence[int], baseline: str) -> str:
    """The procedure on the compactions `indices`: of the configurations of `table` whose
    pooled tokens are at most `baseline`'s, the highest pooled recall; then fewer tokens; then
    the name. No compactions: the baseline."""
    if not indices:
        return baseline
    sums = {name: pooled(column, indices) for name, column in table.items()}
    limit = sums[baseline].tokens_restored
    eligible = [n for n, c in sums.items() if c.tokens_restored <= limit]
    return min(eligible, key=lambda n: rank(sums[n], n))


# The candidates' columns of a fold: held out a repository (None: on every repository), each
# candidate configuration -> its counts at each compaction. A configuration that is trained (the
# learned family) reads, in a fold, the column of its model trained without the held-out
# repository; every other configuration reads the same column in every fold.
FoldTable = Callable[[str | None], Table]
# The same, candidate -> the name of the column it reads (what `Fold.pick` and `chosen` name).
FoldNames = Callable[[str | None], Mapping[str, str]]


def loro(
    table: Table,
    repos: Sequence[str],
    baseline: str,
    window: int,
    fold_names: FoldNames | None = None,
) -> CrossValidation:
    """Leave one repository out: `repos[i]` is compaction i's repository. `table` holds every
    column; `fold_names` says which column each candidate reads in a fold (default: its own)."""
    names_of = fold_names or (lambda _repo: {n: n for n in table})
    everything = list(range(len(repos)))
    folds = []
    chosen = [""] * len(repos)
    for repo in sorted(set(repos)):
        cols = names_of(repo)
        held = tuple(i for i in everything if repos[i] == repo)
        rest = [i for i in everything if repos[i] != repo]
        candidate = pick({c: table[col] for c, col in cols.items()}, rest, baseline)
        name = cols[candidate]
        folds.append(Fold(repo, name, held, candidate))
        for i in held:
            chosen[i] = name
    cols = names_of(None)
    every = pick({c: table[col] for c, col in cols.items()}, everything, baseline)
    return CrossValidation(window, baseline, sorted(cols), folds, cols[every], chosen)


def held_out(
    counts: Mapping[str, Sequence[Mapping[int, Counts]]], chosen: Sequence[str]
) -> list[Mapping[int, Counts]]:
    """Each compaction's counts (per window) under the configuration its fold picked."""
    return [counts[name][i] for i, name in enumerate(chosen)]
