"""`postcompact eval`'s output: tables on the terminal, the JSON summary, docs/eval.md and its plot.

Every figure is pooled: sums of counts over compactions, then the ratio (recall = covered needed
files / needed files over all of them), never a mean of per-compaction ratios.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from postcompact.evaluation.measure import Counts
from postcompact.evaluation.policies import DEFAULT_POLICY
from postcompact.evaluation.run import Evaluation

__all__ = ["BASELINE", "markdown", "plot", "summary_json", "text_tables"]

BASELINE = "claude-code"
MIN_REPO_COMPACTIONS = 3  # the per-repository goal counts repositories with at least this many


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


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
    }


def summary_json(ev: Evaluation, window: int) -> str:
    """The one JSON object `--json` prints last: pooled figures per policy at `window`."""
    out = {
        "default": DEFAULT_POLICY,
        "window": window,
        "files": ev.files,
        "policies": {p.name: _figures(ev.pooled(p.name, window)) for p in ev.policies},
    }
    return json.dumps(out, sort_keys=False)


def _pooled_rows(ev: Evaluation, window: int, half: str | None = None) -> list[list[str]]:
    base = ev.pooled(BASELINE, window, half=half) if _has(ev, BASELINE) else None
    rows = []
    for p in ev.policies:
        c = ev.pooled(p.name, window, half=half)
        rows.append(
            [
                p.name,
                str(c.compactions),
                f"{c.covered_files}/{c.needed_files}",
                f"{c.recall:.3f}",
                _ratio(c.recall, base.recall) if base else "-",
                f"{c.line_recall:.3f}",
                str(c.tokens_restored),
                _ratio(c.tokens_restored, base.tokens_restored) if base else "-",
                str(c.wasted_tokens),
                str(c.reread_tokens_avoided),
                str(c.net_tokens),
                f"{c.rereads_avoided}/{c.reads}",
                f"{c.failed_edits_avoided}/{c.edits_first}",
            ]
        )
    return rows


_POOLED_HEAD = [
    "policy",
    "compactions",
    "covered/needed",
    "recall",
    "vs claude-code",
    "line recall",
    "tokens restored",
    "vs claude-code",
    "wasted tokens",
    "re-read tokens avoided",
    "net tokens",
    "re-reads avoided",
    "failed edits avoided",
]


def _has(ev: Evaluation, name: str) -> bool:
    return any(p.name == name for p in ev.policies)


def _text(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def _md(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _repo_rows(ev: Evaluation, window: int) -> list[list[str]]:
    names = [p.name for p in ev.policies]
    shown = [n for n in (BASELINE, DEFAULT_POLICY) if n in names] or names[:2]
    rows = []
    for repo in ev.repos:
        base = ev.pooled(shown[0], window, repo=repo)
        row = [repo, ev.half_of_repo(repo), str(base.compactions), str(base.needed_files)]
        for n in shown:
            c = ev.pooled(n, window, repo=repo)
            row += [f"{c.recall:.2f}", str(c.tokens_restored)]
        if len(shown) == 2:
            c = ev.pooled(shown[1], window, repo=repo)
            worse = c.recall < base.recall and base.compactions >= MIN_REPO_COMPACTIONS
            row.append("worse" if worse else "")
        rows.append(row)
    return rows


def _repo_head(ev: Evaluation) -> list[str]:
    names = [p.name for p in ev.policies]
    shown = [n for n in (BASELINE, DEFAULT_POLICY) if n in names] or names[:2]
    head = ["repository", "half", "compactions", "needed"]
    for n in shown:
        head += [f"{n} recall", f"{n} tokens"]
    if len(shown) == 2:
        head.append(f"{shown[1]} worse (>= {MIN_REPO_COMPACTIONS} compactions)")
    return head


def text_tables(ev: Evaluation) -> str:
    out = []
    for w in sorted(ev.windows, reverse=True):
        out.append(f"pooled, window {w} ({ev.files} transcripts):")
        out.append(_text(_POOLED_HEAD, _pooled_rows(ev, w)))
        out.append("")
    w = max(ev.windows)
    for half in ("tune", "test"):
        out.append(f"the {half} half, window {w}:")
        out.append(_text(_POOLED_HEAD, _pooled_rows(ev, w, half)))
        out.append("")
    out.append(f"per repository, window {w}:")
    out.append(_text(_repo_head(ev), _repo_rows(ev, w)))
    return "\n".join(out)


def _compaction_rows(ev: Evaluation, window: int) -> list[list[str]]:
    names = [n for n in (BASELINE, DEFAULT_POLICY) if _has(ev, n)]
    by_key: dict[tuple[str, int], dict[str, Counts]] = {}
    meta: dict[tuple[str, int], tuple[str, int, str]] = {}
    for r in ev.rows:
        if r.policy in names:
            by_key.setdefault((r.file, r.boundary), {})[r.policy] = r.counts[window]
            meta[(r.file, r.boundary)] = (r.repo, r.line, r.trigger)
    rows = []
    for key in sorted(by_key):
        _repo, line, trigger = meta[key]
        row = [key[0], str(key[1]), str(line), trigger]
        for n in names:
            c = by_key[key].get(n, Counts())
            row += [f"{c.covered_files}/{c.needed_files}", str(c.tokens_restored)]
        rows.append(row)
    return rows


def plot(ev: Evaluation, path: Path) -> None:
    """Recall (window 30 and 10) against tokens restored, one point per policy (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=110)
    for w, marker in zip(sorted(ev.windows, reverse=True), ("o", "s"), strict=False):
        xs, ys = [], []
        for p in ev.policies:
            c = ev.pooled(p.name, w)
            xs.append(c.tokens_restored / max(c.compactions, 1))
            ys.append(c.recall)
            if w == max(ev.windows):
                ax.annotate(p.name, (xs[-1], ys[-1]), textcoords="offset points", xytext=(5, 4))
        ax.scatter(xs, ys, marker=marker, label=f"window {w}")
    ax.set_xlabel("tokens restored per compaction (files, notes, index; rough estimate)")
    ax.set_ylabel("recall (covered needed files / needed files, pooled)")
    ax.set_title(f"Restoration recall against cost, {ev.files} real Claude Code transcripts")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def markdown(ev: Evaluation, plot_name: str, intro: str) -> str:
    """docs/eval.md's figures (after `intro`, the hand-written part kept above the marker)."""
    w = max(ev.windows)
    parts = [intro.rstrip(), "", GENERATED_MARK, ""]
    parts.append(
        f"Generated by `make eval` from {ev.files} transcripts "
        f"({len(ev.rows) // max(len(ev.policies), 1)} compactions) in {ev.seconds:.0f} s."
    )
    parts.append("")
    for window in sorted(ev.windows, reverse=True):
        parts += [f"### Pooled, window {window}", "", _md(_POOLED_HEAD, _pooled_rows(ev, window))]
        parts.append("")
    parts += [f"![recall against tokens restored]({plot_name})", ""]
    for half in ("tune", "test"):
        parts += [f"### The {half} half, window {w}", ""]
        parts += [_md(_POOLED_HEAD, _pooled_rows(ev, w, half)), ""]
    parts += [f"### Per repository, window {w}", "", _md(_repo_head(ev), _repo_rows(ev, w)), ""]
    parts += ["### Policies", ""]
    parts += [_md(["policy", "profile and fields", "what it is"], _policy_rows(ev)), ""]
    names = [n for n in (BASELINE, DEFAULT_POLICY) if _has(ev, n)]
    head = ["transcript", "compaction", "line", "trigger"]
    for n in names:
        head += [f"{n} covered/needed", f"{n} tokens"]
    parts += [f"### Per compaction, window {w}", "", _md(head, _compaction_rows(ev, w)), ""]
    if ev.failures:
        parts += ["### Transcripts not read", ""]
        parts += [f"- {f}" for f in ev.failures]
        parts.append("")
    return "\n".join(parts)


def _policy_rows(ev: Evaluation) -> list[list[str]]:
    return [[p.name, f"`{p.spec}`", p.about] for p in ev.policies]


GENERATED_MARK = "<!-- everything below is written by `make eval` -->"
