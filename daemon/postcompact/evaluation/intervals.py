"""Bootstrap 95% intervals over compactions (docs/eval.md §3), with numpy.

A resample draws as many compactions as there are, with replacement (a fixed seed: the same
figures every run); each ratio is computed on the resample with the same compactions on both
sides (paired), and the interval is the 2.5th to 97.5th percentile of the resamples' ratios.
For the cross-validated procedure the whole procedure is re-run on each resample (every fold
picks again on the resample's compactions), so its interval holds the pick's own variation.
Compactions of one session or repository are not independent: the intervals are, if anything,
too narrow.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from postcompact.evaluation.crossval import CrossValidation, FoldTable, Interval, Table
from postcompact.evaluation.measure import Counts

__all__ = ["RESAMPLES", "SEED", "loro_intervals", "paired", "weights"]

RESAMPLES = 2_000
SEED = 34  # issue 34

_Array = npt.NDArray[np.float64]


def weights(n: int, resamples: int = RESAMPLES, seed: int = SEED) -> _Array:
    """(resamples, n): how many times each of n compactions is drawn in each resample."""
    rng = np.random.default_rng(seed)
    if n == 0:
        return np.zeros((resamples, 0))
    return rng.multinomial(n, np.full(n, 1.0 / n), size=resamples).astype(np.float64)


def _interval(ratios: _Array) -> Interval | None:
    ok = np.isfinite(ratios)
    if not ok.any():
        return None
    lo, hi = np.percentile(ratios[ok], [2.5, 97.5])
    return Interval(float(lo), float(hi), int((~ok).sum()))


def _divide(a: _Array, b: _Array) -> _Array:
    with np.errstate(divide="ignore", invalid="ignore"):
        out: _Array = a / b
    return out


def _vectors(column: Sequence[Counts]) -> tuple[_Array, _Array, _Array]:
    cov = np.array([c.covered_files for c in column], dtype=np.float64)
    need = np.array([c.needed_files for c in column], dtype=np.float64)
    tok = np.array([c.tokens_restored for c in column], dtype=np.float64)
    return cov, need, tok


def paired(
    a: Sequence[Counts], b: Sequence[Counts], w: _Array
) -> tuple[Interval | None, Interval | None]:
    """`a`'s pooled recall and tokens over `b`'s, on the resamples `w` (each compaction's
    counts under a and under b drawn together)."""
    a_cov, a_need, a_tok = (w @ v for v in _vectors(a))
    b_cov, b_need, b_tok = (w @ v for v in _vectors(b))
    recall = _divide(_divide(a_cov, a_need), _divide(b_cov, b_need))
    return _interval(recall), _interval(_divide(a_tok, b_tok))


def _matrices(table: Table, names: Sequence[str]) -> tuple[_Array, _Array, _Array]:
    """(configurations, compactions) each: covered, needed, tokens."""
    vectors = [_vectors(table[n]) for n in names]
    cov, need, tok = (np.stack(m) for m in zip(*vectors, strict=True))
    return cov, need, tok


def loro_intervals(
    table: FoldTable,
    repos: Sequence[str],
    cv: CrossValidation,
    w: _Array,
    scored: FoldTable | None = None,
) -> tuple[Interval | None, Interval | None]:
    """The cross-validated procedure's recall and tokens over the baseline's, the procedure
    (every fold's pick, `crossval.pick` vectorised) re-run on each resample: picked on `table`
    (the selection window; per fold, the columns its candidates read), scored on `scored`
    (another window; default: `table`). A trained configuration keeps its fold's model: the
    resamples re-pick, they do not re-train."""
    scored = scored or table
    rows = np.arange(w.shape[0])
    held = np.zeros((3, w.shape[0]))  # covered, needed, tokens of the held-out compactions
    for repo in sorted(set(repos)):
        fold_table = table(repo)
        names = sorted(fold_table)  # ties go to the first name: as `crossval.pick` breaks them
        base = names.index(cv.baseline)
        select = _matrices(fold_table, names)
        outcome = _matrices(scored(repo), names)
        mask = np.array([r == repo for r in repos])
        t_cov, t_need, t_tok = (w[:, ~mask] @ m[:, ~mask].T for m in select)
        recall = np.where(t_need > 0, _divide(t_cov, np.where(t_need > 0, t_need, 1.0)), 0.0)
        score = np.where(t_tok <= t_tok[:, base : base + 1], recall, -1.0)
        best = score == score.max(axis=1, keepdims=True)
        tokens = np.where(best, t_tok, np.inf)
        best &= tokens == tokens.min(axis=1, keepdims=True)
        chosen = np.where(w[:, ~mask].sum(axis=1) > 0, best.argmax(axis=1), base)
        for k, m in enumerate(outcome):
            held[k] += (w[:, mask] @ m[:, mask].T)[rows, chosen]
    every = scored(None)
    b_cov, b_need, b_tok = (w @ v for v in _vectors(every[cv.baseline]))
    recall = _divide(_divide(held[0], held[1]), _divide(b_cov, b_need))
    return _interval(recall), _interval(_divide(held[2], b_tok))
