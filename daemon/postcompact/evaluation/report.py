"""`postcompact eval`'s output: tables on the terminal, the JSON summary, docs/eval.md and its plot.

First the cross-validated result (the selection procedure, each repository scored under the
configuration picked without it), then the in-sample tables, labelled as such: the
configurations were chosen on those same compactions.

Every figure is pooled: sums of counts over compactions, then the ratio (recall = covered needed
files / needed files over all of them), never a mean of per-compaction ratios.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from postcompact.evaluation import crossval
from postcompact.evaluation.crossval import CrossValidation, Interval
from postcompact.evaluation.learned import Learned
from postcompact.evaluation.measure import Counts
from postcompact.evaluation.policies import BASELINE, DEFAULT_POLICY, Policy
from postcompact.evaluation.run import Evaluation
from postcompact.restore.ranker import Model
from postcompact.v1 import postcompact_pb2 as pb

__all__ = [
    "BASELINE",
    "GENERATED_MARK",
    "Results",
    "insample_names",
    "markdown",
    "plot",
    "summary_json",
    "text_tables",
]

MIN_REPO_COMPACTIONS = 3  # the per-repository "worse" mark counts repositories with this many
BEST_SHOWN = 10  # configurations in the in-sample "best" table
INSAMPLE = "in-sample (the configurations were chosen on these same compactions)"
GENERATED_MARK = "<!-- everything below is written by `make eval` -->"


@dataclass(slots=True)
class Results:
    ev: Evaluation
    skipped: int = 0  # transcripts without a compaction (or that cannot be placed)
    resamples: int = 0
    cv: CrossValidation | None = None
    # The same procedure over every family, its tokens bounded on the pooled total only: for
    # comparison (docs/eval.md §3); None when every family measured is bounded.
    cv_all: CrossValidation | None = None
    # (policy, window) -> its recall and tokens over claude-code's: bootstrap 95% intervals
    intervals: dict[tuple[str, int], tuple[Interval | None, Interval | None]] = field(
        default_factory=dict
    )
    seconds: float = 0.0  # the whole run, reading to intervals
    # The learned family's models (learned.py), and the one on every repository at the alpha
    # the procedure ranks first among them: what `--write-model` writes.
    learned: Learned | None = None
    model: Model | None = None


# --- figures ----------------------------------------------------------------------------------


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def _ci(i: Interval | None) -> str:
    return f"[{i.lo:.2f}, {i.hi:.2f}]" if i is not None else "[-]"


def _ratio_ci(a: float, b: float, i: Interval | None) -> str:
    return f"{_ratio(a, b)} {_ci(i)}" if b else "-"


def _ci_json(i: Interval | None) -> list[float] | None:
    return [round(i.lo, 4), round(i.hi, 4)] if i is not None else None


def _figures(c: Counts) -> dict[str, Any]:
    return {
        "recall": round(c.recall, 4),
        "line_recall": round(c.line_recall, 4),
        "tokens_restored": c.tokens_restored,
        "wasted_tokens": c.wasted_tokens,
        "reread_tokens_avoided": c.reread_tokens_avoided,
        "net_tokens": c.net_tokens,
        "rereads_avoided": c.rereads_avoided,
        "failed_edits_avoided": c.failed_edits_avoided,
        "compactions": c.compactions,
        "needed_files": c.needed_files,
        "covered_files": c.covered_files,
        "files_restored": c.files_restored,
        "reads_first": c.reads,
        "edits_first": c.edits_first,
        "harness_lost": c.harness_lost,
        "harness_unpredicted": c.harness_unpredicted,
    }


def _has(ev: Evaluation, name: str) -> bool:
    return name in ev.counts


def _cv_counts(r: Results, window: int, cv: CrossValidation | None = None) -> Counts:
    cv = cv or r.cv
    assert cv is not None
    out = Counts()
    for c in crossval.held_out(r.ev.counts, cv.chosen):
        out.add(c[window])
    return out


def best_configurations(r: Results, window: int, k: int = BEST_SHOWN) -> list[str]:
    """The `k` configurations the procedure ranks first on every compaction (within claude-code's
    tokens, highest recall, then fewer tokens, then the name)."""
    ev = r.ev
    if r.cv is None:
        return []
    sums = {n: ev.pooled(n, window) for n in r.cv.candidates}
    limit = sums[BASELINE].tokens_restored
    ok = [n for n, c in sums.items() if c.tokens_restored <= limit]
    return sorted(ok, key=lambda n: crossval.rank(sums[n], n))[:k]


def insample_names(r: Results) -> list[str]:
    """The rows of the in-sample tables: the named policies, the procedure's pick, the best."""
    names = [p.name for p in r.ev.policies]
    if r.cv is not None:
        w = r.cv.window
        names += [n for n in [r.cv.pick, *best_configurations(r, w)] if n not in names]
    return list(dict.fromkeys(names))


def _policy(ev: Evaluation, name: str) -> Policy:
    return next(p for p in ev.measured() if p.name == name)


# --- the cross-validated result ---------------------------------------------------------------

_CV_HEAD = [
    "window",
    "rule",
    "compactions",
    "covered/needed",
    "recall",
    "vs claude-code [95%]",
    "tokens restored",
    "vs claude-code [95%]",
    "net tokens",
]


def _cv_rows(r: Results, which: CrossValidation | None = None) -> list[list[str]]:
    which = which or r.cv
    assert which is not None
    rows = []
    for w in sorted(r.ev.windows, reverse=True):
        cv, base = _cv_counts(r, w, which), r.ev.pooled(BASELINE, w)
        rec_ci, tok_ci = which.intervals.get(w, (None, None))
        for label, c in (("the procedure, each repository held out", cv), (BASELINE, base)):
            own = c is cv
            rows.append(
                [
                    str(w),
                    label,
                    str(c.compactions),
                    f"{c.covered_files}/{c.needed_files}",
                    f"{c.recall:.3f}",
                    _ratio_ci(c.recall, base.recall, rec_ci) if own else "1.00x",
                    str(c.tokens_restored),
                    _ratio_ci(c.tokens_restored, base.tokens_restored, tok_ci) if own else "1.00x",
                    str(c.net_tokens),
                ]
            )
    return rows


_FOLD_HEAD = [
    "held-out repository",
    "compactions",
    "picked on the other repositories",
    "held-out covered/needed",
    "held-out tokens",
    "claude-code covered/needed",
    "claude-code tokens",
]


def _fold_rows(r: Results, cv: CrossValidation | None = None) -> list[list[str]]:
    cv = cv or r.cv
    assert cv is not None
    w = cv.window
    rows = []
    for f in cv.folds:
        got = crossval.pooled(r.ev.column(f.pick, w), f.compactions)
        base = crossval.pooled(r.ev.column(BASELINE, w), f.compactions)
        rows.append(
            [
                f.repo,
                str(len(f.compactions)),
                f.pick,
                f"{got.covered_files}/{got.needed_files}",
                str(got.tokens_restored),
                f"{base.covered_files}/{base.needed_files}",
                str(base.tokens_restored),
            ]
        )
    return rows


def _tried(cv: CrossValidation) -> str:
    fams = ", ".join(f"{name} {n}" for name, n in cv.families.items())
    return (
        f"{len(cv.candidates)} configurations of {len(cv.families)} rule families ({fams}); "
        "choosing among them is tuning too"
    )


def _stability(cv: CrossValidation) -> str:
    picks = Counter(f.candidate or f.pick for f in cv.folds)
    same = picks.get(cv.pick, 0)
    trained = any(f.candidate and f.candidate != f.pick for f in cv.folds)
    return (
        f"{len(picks)} different picks over {len(cv.folds)} folds; the all-repository pick in "
        f"{same} of them"
        + ("; a learned configuration read with its fold's model" if trained else "")
    )


def _pick_line(r: Results) -> str:
    assert r.cv is not None
    p = _policy(r.ev, r.cv.pick)
    return f"{p.name} ({p.spec})"


def _procedure_text(cv: CrossValidation) -> str:
    return (
        "The procedure: among the configurations of the rule families whose tokens are bounded "
        f"by claude-code's at every compaction ({', '.join(cv.families)}), those whose pooled "
        "tokens restored are at most claude-code's there, the highest pooled recall at window "
        f"{cv.window}; ties: fewer tokens, then the name. Leave one repository out: each of the "
        f"{len(cv.folds)} repositories is scored under what the procedure picks on the others; "
        "the held-out counts are pooled."
    )


def _worse_folds(r: Results, cv: CrossValidation) -> str:
    """The held-out repositories where the fold's pick covered fewer needed files than
    claude-code, as `repo (a/b against c/d)`."""
    out = []
    for f in cv.folds:
        got = crossval.pooled(r.ev.column(f.pick, cv.window), f.compactions)
        base = crossval.pooled(r.ev.column(BASELINE, cv.window), f.compactions)
        if got.covered_files < base.covered_files:
            out.append(
                f"{f.repo} ({got.covered_files}/{got.needed_files} against "
                f"{base.covered_files}/{base.needed_files})"
            )
    return ", ".join(out) or "none"


def _comparison_text(r: Results) -> str:
    """The unbounded procedure's figure, for comparison."""
    cv = r.cv_all
    assert cv is not None
    w = cv.window
    c, base = _cv_counts(r, w, cv), r.ev.pooled(BASELINE, w)
    rec_ci, tok_ci = cv.intervals.get(w, (None, None))
    return (
        f"For comparison, the same procedure over every family ({_tried(cv)}), whose "
        "fixed budgets bound the tokens on the pooled total only: held out, "
        f"{c.covered_files}/{c.needed_files}, {_ratio_ci(c.recall, base.recall, rec_ci)} "
        f"claude-code's recall at {_ratio_ci(c.tokens_restored, base.tokens_restored, tok_ci)} "
        f"its tokens (window {w}); on all repositories it picks `{cv.pick}`; the held-out "
        f"repositories where it covers fewer needed files than claude-code: {_worse_folds(r, cv)}."
    )


# --- Claude Code with the complement ---------------------------------------------------------

_COMPLEMENT_HEAD = [
    "rule",
    "covered/needed",
    "recall",
    "vs claude-code [95%]",
    "more covered",
    "tokens restored",
    "more tokens",
    "files covered per 10,000 more tokens",
    "left to Claude Code, not restored by it",
    "restored by Claude Code, not predicted",
]


def _complements(r: Results) -> list[str]:
    return [p.name for p in r.ev.policies if p.policy.complement == pb.HARNESS_RULE_CLAUDE_CODE]


def _complement_rows(r: Results, window: int) -> list[list[str]]:
    base = r.ev.pooled(BASELINE, window)
    rows = [
        [
            BASELINE,
            f"{base.covered_files}/{base.needed_files}",
            f"{base.recall:.3f}",
            "1.00x",
            "0",
            str(base.tokens_restored),
            "0",
            "-",
            "-",
            "-",
        ]
    ]
    for name in _complements(r):
        c = r.ev.pooled(name, window)
        rec_ci, _ = r.intervals.get((name, window), (None, None))
        more, extra = c.covered_files - base.covered_files, c.tokens_restored - base.tokens_restored
        rows.append(
            [
                name,
                f"{c.covered_files}/{c.needed_files}",
                f"{c.recall:.3f}",
                _ratio_ci(c.recall, base.recall, rec_ci),
                str(more),
                str(c.tokens_restored),
                str(extra),
                f"{10_000 * more / extra:.2f}" if extra > 0 else "-",
                str(c.harness_lost),
                str(c.harness_unpredicted),
            ]
        )
    return rows


def _complement_text(r: Results) -> str:
    return (
        "Each complement is replayed beside Claude Code's own rule (the claude-code profile, "
        "replayed as `make parity-corpus` checks it): the model gets both restorations, so a "
        "needed file is covered when either holds its lines, and the tokens are both "
        "restorations' together. The last two columns check the complement's prediction of "
        "Claude Code's choice against that replay, summed over compactions: files it left to "
        "Claude Code that Claude Code did not restore whole (lost to both), and files Claude "
        "Code restored whole that it did not predict (restored twice, or near the cap and left "
        "to postcompact on purpose: docs/profiles.md)."
    )


# --- the in-sample tables ---------------------------------------------------------------------

_POOLED_HEAD = [
    "policy",
    "compactions",
    "covered/needed",
    "recall",
    "vs claude-code [95%]",
    "line recall",
    "tokens restored",
    "vs claude-code [95%]",
    "wasted tokens",
    "re-read tokens avoided",
    "net tokens",
    "re-reads avoided",
    "failed edits avoided",
]


def _pooled_rows(r: Results, window: int, names: Sequence[str]) -> list[list[str]]:
    ev = r.ev
    base = ev.pooled(BASELINE, window) if _has(ev, BASELINE) else None
    rows = []
    for name in names:
        c = ev.pooled(name, window)
        rec_ci, tok_ci = r.intervals.get((name, window), (None, None))
        label = name
        if r.cv is not None and name == r.cv.pick:
            label += " (the procedure's pick)"
        rows.append(
            [
                label,
                str(c.compactions),
                f"{c.covered_files}/{c.needed_files}",
                f"{c.recall:.3f}",
                _ratio_ci(c.recall, base.recall, rec_ci) if base else "-",
                f"{c.line_recall:.3f}",
                str(c.tokens_restored),
                _ratio_ci(c.tokens_restored, base.tokens_restored, tok_ci) if base else "-",
                str(c.wasted_tokens),
                str(c.reread_tokens_avoided),
                str(c.net_tokens),
                f"{c.rereads_avoided}/{c.reads}",
                f"{c.failed_edits_avoided}/{c.edits_first}",
            ]
        )
    return rows


def _named_rows(r: Results) -> list[str]:
    names = [p.name for p in r.ev.policies]
    if r.cv is not None and r.cv.pick not in names:
        names.append(r.cv.pick)
    return names


def _shown(r: Results) -> list[str]:
    """The policies of the per-repository and per-compaction tables."""
    out = [n for n in (BASELINE, DEFAULT_POLICY) if _has(r.ev, n)]
    if r.cv is not None:
        out.append(r.cv.pick)
    return list(dict.fromkeys(out)) or [p.name for p in r.ev.policies][:2]


def _repo_head(r: Results) -> list[str]:
    shown = _shown(r)
    head = ["repository", "compactions", "needed"]
    for n in shown:
        head += [f"{n} recall", f"{n} tokens"]
    if len(shown) > 1 and shown[0] == BASELINE:
        head.append(f"{shown[-1]} worse (>= {MIN_REPO_COMPACTIONS} compactions)")
    return head


def _repo_rows(r: Results, window: int) -> list[list[str]]:
    ev, shown = r.ev, _shown(r)
    rows = []
    for repo in ev.repos:
        first = ev.pooled(shown[0], window, repo=repo)
        row = [repo, str(first.compactions), str(first.needed_files)]
        for n in shown:
            c = ev.pooled(n, window, repo=repo)
            row += [f"{c.recall:.2f}", str(c.tokens_restored)]
        if len(shown) > 1 and shown[0] == BASELINE:
            c = ev.pooled(shown[-1], window, repo=repo)
            worse = c.recall < first.recall and first.compactions >= MIN_REPO_COMPACTIONS
            row.append("worse" if worse else "")
        rows.append(row)
    return rows


def _compaction_head(r: Results) -> list[str]:
    head = ["transcript", "repository", "compaction", "line", "trigger"]
    for n in _shown(r):
        head += [f"{n} covered/needed", f"{n} tokens"]
    return head


def _compaction_rows(r: Results, window: int) -> list[list[str]]:
    ev, shown = r.ev, _shown(r)
    rows = []
    for i, k in sorted(enumerate(ev.compactions), key=lambda x: (x[1].file, x[1].number)):
        row = [k.file, k.repo, str(k.number), str(k.line), k.trigger]
        for n in shown:
            c = ev.counts[n][i][window]
            row += [f"{c.covered_files}/{c.needed_files}", str(c.tokens_restored)]
        rows.append(row)
    return rows


def _policy_rows(r: Results) -> list[list[str]]:
    return [[n, f"`{_policy(r.ev, n).spec}`", _policy(r.ev, n).about] for n in _named_rows(r)]


# --- output -----------------------------------------------------------------------------------


def _text(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def _md(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _corpus_line(r: Results) -> str:
    ev = r.ev
    skipped = f"; {r.skipped} transcripts without a compaction skipped" if r.skipped else ""
    return (
        f"{ev.files} transcripts, {len(ev.compactions)} compactions, {len(ev.repos)} "
        f"repositories{skipped}"
    )


def text_tables(r: Results) -> str:
    ev = r.ev
    w = max(ev.windows)
    out = [f"{_corpus_line(r)}; {len(ev.measured())} policies replayed in {r.seconds:.0f} s", ""]
    if r.cv is not None:
        out.append(f"CROSS-VALIDATED, leave one repository out: {_tried(r.cv)}.")
        out.append(_text(_CV_HEAD, _cv_rows(r)))
        out.append("")
        out.append(f"picked per fold ({_stability(r.cv)}):")
        out.append(_text(_FOLD_HEAD, _fold_rows(r)))
        out.append("")
        out.append(f"THE PROCEDURE ON ALL REPOSITORIES PICKS: {_pick_line(r)}")
        out.append("")
    if r.cv_all is not None:
        out.append(_comparison_text(r))
        out.append("")
    for window in sorted(ev.windows, reverse=True):
        out.append(f"{INSAMPLE}, pooled, window {window}:")
        out.append(_text(_POOLED_HEAD, _pooled_rows(r, window, _named_rows(r))))
        out.append("")
    if r.cv is not None:
        out.append(f"{INSAMPLE}: the procedure's {BEST_SHOWN} best configurations, window {w}:")
        out.append(_text(_POOLED_HEAD, _pooled_rows(r, w, best_configurations(r, w))))
        out.append("")
    out.append(f"{INSAMPLE}, per repository, window {w}:")
    out.append(_text(_repo_head(r), _repo_rows(r, w)))
    if _complements(r) and BASELINE in ev.counts:
        out.append("")
        out.append(f"Claude Code with the complement, window {w}:")
        out.append(_text(_COMPLEMENT_HEAD, _complement_rows(r, w)))
    return "\n".join(out)


def summary_json(r: Results, window: int) -> str:
    """The one JSON object `--json` prints last: pooled figures per policy at `window`, each
    configuration's, and the cross-validated result."""
    ev = r.ev
    policies = {}
    for p in ev.policies:
        fig = _figures(ev.pooled(p.name, window))
        rec_ci, tok_ci = r.intervals.get((p.name, window), (None, None))
        fig.update(recall_ratio_ci=_ci_json(rec_ci), tokens_ratio_ci=_ci_json(tok_ci))
        policies[p.name] = fig
    out: dict[str, Any] = {
        "default": DEFAULT_POLICY,
        "window": window,
        "files": ev.files,
        "skipped": r.skipped,
        "compactions": len(ev.compactions),
        "seconds": round(r.seconds, 1),
        "policies": policies,
        "configurations": {
            c.name: {
                k: v
                for k, v in _figures(ev.pooled(c.name, window)).items()
                if k in ("recall", "covered_files", "needed_files", "tokens_restored")
                or k == "net_tokens"
            }
            for c in ev.configurations
        },
    }
    if r.cv is not None:
        cv, base = _cv_counts(r, window), ev.pooled(BASELINE, window)
        rec_ci, tok_ci = r.cv.intervals.get(window, (None, None))
        pick = _policy(ev, r.cv.pick)
        out["crossval"] = {
            "selection_window": r.cv.window,
            "families": r.cv.families,
            "configurations": len(r.cv.candidates),
            "procedure": _figures(cv),
            "baseline": _figures(base),
            "recall_ratio": round(cv.recall / base.recall, 4) if base.recall else None,
            "recall_ratio_ci": _ci_json(rec_ci),
            "tokens_ratio": round(cv.tokens_restored / base.tokens_restored, 4)
            if base.tokens_restored
            else None,
            "tokens_ratio_ci": _ci_json(tok_ci),
            "resamples": r.resamples,
            "folds": [{"repo": f.repo, "pick": f.pick} for f in r.cv.folds],
            "pick": pick.name,
            "pick_spec": pick.spec,
        }
    if r.cv_all is not None:
        every, base = _cv_counts(r, window, r.cv_all), ev.pooled(BASELINE, window)
        rec_ci, tok_ci = r.cv_all.intervals.get(window, (None, None))
        out["crossval_every_family"] = {
            "families": r.cv_all.families,
            "procedure": _figures(every),
            "recall_ratio": round(every.recall / base.recall, 4) if base.recall else None,
            "recall_ratio_ci": _ci_json(rec_ci),
            "tokens_ratio": round(every.tokens_restored / base.tokens_restored, 4)
            if base.tokens_restored
            else None,
            "tokens_ratio_ci": _ci_json(tok_ci),
            "pick": r.cv_all.pick,
        }
    return json.dumps(out, sort_keys=False)


def plot(r: Results, path: Path) -> None:
    """Recall against tokens restored per compaction at the widest window: every configuration
    a small dot, the named policies and the procedure's pick labelled (in-sample), and the
    procedure's cross-validated figure (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ev = r.ev
    w = max(ev.windows)
    n = max(len(ev.compactions), 1)
    fig, ax = plt.subplots(figsize=(8.5, 6), dpi=110)
    if ev.configurations:
        cs = [ev.pooled(c.name, w) for c in ev.configurations]
        ax.scatter(
            [c.tokens_restored / n for c in cs],
            [c.recall for c in cs],
            s=6,
            color="0.6",
            label=f"the {len(cs)} configurations (in-sample)",
        )
    if _has(ev, BASELINE):
        ax.axvline(
            ev.pooled(BASELINE, w).tokens_restored / n,
            color="0.4",
            linestyle="--",
            linewidth=0.8,
            label="claude-code's tokens (the procedure's limit)",
        )
    # One label per point (names at the same point joined), nudged up past labels near it.
    at: dict[tuple[float, float], list[str]] = {}
    for name in _named_rows(r):
        c = ev.pooled(name, w)
        label = name if r.cv is None or name != r.cv.pick else f"{name} (pick)"
        at.setdefault((c.tokens_restored / n, c.recall), []).append(label)
    placed: list[tuple[float, float, int]] = []
    x_span = max((x for x, _ in at), default=1.0) or 1.0
    for (x, y), labels in sorted(at.items()):
        near = [k for px, py, k in placed if abs(px - x) < 0.08 * x_span and abs(py - y) < 0.01]
        lift = 1 + max(near, default=-1)
        placed.append((x, y, lift))
        ax.annotate(
            ", ".join(labels),
            (x, y),
            textcoords="offset points",
            xytext=(5, 4 + 9 * lift),
            size=7,
        )
    ax.scatter(
        [x for x, _ in at],
        [y for _, y in at],
        s=22,
        color="tab:blue",
        label="named policies and the pick (in-sample)",
    )
    if r.cv is not None:
        c = _cv_counts(r, w)
        ax.scatter(
            [c.tokens_restored / n],
            [c.recall],
            s=90,
            marker="*",
            color="tab:red",
            label="the procedure, each repository held out",
        )
    ax.set_xlabel("tokens restored per compaction (files, notes, index; rough estimate)")
    ax.set_ylabel(f"recall at window {w} (covered needed files / needed files, pooled)")
    ax.set_title(f"Restoration recall against cost, {ev.files} real Claude Code transcripts")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


def markdown(r: Results, plot_name: str, intro: str) -> str:
    """docs/eval.md's figures (after `intro`, the hand-written part kept above the marker)."""
    ev = r.ev
    w = max(ev.windows)
    parts = [intro.rstrip(), "", GENERATED_MARK, ""]
    parts.append(
        f"Generated by `make eval` from {_corpus_line(r)}, in {_minutes(r.seconds)} on "
        f"{ev.workers} worker processes: {len(ev.measured())} policies replayed once per "
        f"compaction, the folds selecting from that table, {r.resamples:,} bootstrap resamples."
    )
    parts.append("")
    if r.cv is not None:
        cv = r.cv
        parts += ["### Cross-validated: the procedure, each repository held out", ""]
        parts += [f"{_procedure_text(cv)} Tried: {_tried(cv)}.", ""]
        parts += [
            "Intervals: bootstrap 95% over compactions, "
            f"{r.resamples:,} resamples, the procedure re-run on each; at window "
            f"{min(ev.windows)} the folds keep the picks made at window {cv.window}.",
            "",
        ]
        parts += [_md(_CV_HEAD, _cv_rows(r)), ""]
        parts += [f"**On all {len(cv.folds)} repositories the procedure picks `{cv.pick}`**:", ""]
        parts += [f"`{_policy(ev, cv.pick).spec}`", ""]
        parts += [f"#### The pick of each fold ({_stability(cv)})", ""]
        parts += [_md(_FOLD_HEAD, _fold_rows(r)), ""]
    if r.cv_all is not None:
        parts += [_comparison_text(r), ""]
    if _complements(r) and BASELINE in ev.counts:
        parts += ["### Claude Code with the complement", ""]
        parts += [_complement_text(r), ""]
        for window in sorted(ev.windows, reverse=True):
            parts += [f"#### Window {window}", ""]
            parts += [_md(_COMPLEMENT_HEAD, _complement_rows(r, window)), ""]
    parts += ["### In-sample: the configurations were chosen on these same compactions", ""]
    for window in sorted(ev.windows, reverse=True):
        parts += [f"#### Pooled, window {window} (in-sample)", ""]
        parts += [_md(_POOLED_HEAD, _pooled_rows(r, window, _named_rows(r))), ""]
    if plot_name:
        parts += [f"![recall against tokens restored]({plot_name})", ""]
    if r.cv is not None:
        parts += [f"#### The procedure's {BEST_SHOWN} best configurations, window {w} (in-sample)"]
        parts += ["", _md(_POOLED_HEAD, _pooled_rows(r, w, best_configurations(r, w))), ""]
    parts += [f"#### Per repository, window {w} (in-sample)", ""]
    parts += [_md(_repo_head(r), _repo_rows(r, w)), ""]
    parts += ["#### Policies", ""]
    parts += [_md(["policy", "profile and fields", "what it is"], _policy_rows(r)), ""]
    parts += [f"#### Per compaction, window {w} (in-sample)", ""]
    parts += [_md(_compaction_head(r), _compaction_rows(r, w)), ""]
    if ev.failures:
        parts += ["#### Transcripts not scored", ""]
        parts += [f"- {f}" for f in ev.failures]
        parts.append("")
    return "\n".join(parts)
