"""`postcompact eval` (docs/eval.md)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from postcompact.evaluation import crossval, report
from postcompact.evaluation.corpus import TranscriptFile, transcript_files
from postcompact.evaluation.policies import BASELINE, FAMILIES, NAMED, Policy, parse_policy
from postcompact.evaluation.policies import configurations as family_configurations
from postcompact.evaluation.run import Evaluation, InputError, evaluate, load
from postcompact.exitcodes import EXIT_FAILURE, EXIT_USAGE
from postcompact.transcript.replay import cleanup_on_sigterm

__all__ = ["add_parser", "cmd_eval"]

DEFAULT_WINDOW = 30
SHORT_WINDOW = 10
DEFAULT_WORKERS = 2


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "eval",
        help="measure restoration policies on Claude Code transcripts (recall, tokens, ...)",
        description=(
            "For every compaction of the transcripts: what each policy restores (replayed "
            "in-process), against the files the agent read or edited in the next tool calls; "
            "the selection procedure over the rule families, cross-validated leaving one "
            "repository out (docs/eval.md)."
        ),
    )
    p.add_argument("transcripts", nargs="+", type=Path, help=".jsonl files or directories")
    p.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="NAME[=PROFILE[:FIELD=VALUE,...]]",
        help=f"a policy to measure (repeatable; default: all of {', '.join(NAMED)})",
    )
    p.add_argument(
        "--family",
        action="append",
        default=[],
        metavar="NAME",
        help="a rule family the procedure chooses among (repeatable; claude-code always; "
        f"default without --policy: all of {', '.join(FAMILIES)}; with --policy: none)",
    )
    p.add_argument(
        "--window",
        type=int,
        default=DEFAULT_WINDOW,
        help=f"tool calls after a compaction that count as its need (default {DEFAULT_WINDOW}; "
        f"{SHORT_WINDOW} is reported too); the procedure selects at this window",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=min(DEFAULT_WORKERS, os.cpu_count() or 1),
        help=f"processes replaying (default {DEFAULT_WORKERS}, at most the CPUs)",
    )
    p.add_argument("--json", action="store_true", help="print the pooled figures as JSON, last")
    p.add_argument("--markdown", type=Path, help="rewrite this file's figures (docs/eval.md)")
    p.add_argument("--plot", type=Path, help="write the recall/tokens plot here (PNG)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _err(message: str) -> None:
    print(f"postcompact: {message}", file=sys.stderr)


def _progress(n: int, total: int, f: TranscriptFile) -> None:
    print(f"[{n}/{total}] {f.path.name}", file=sys.stderr, flush=True)


def cmd_eval(args: argparse.Namespace) -> int:
    started = time.monotonic()
    if args.window < 1:
        _err(f"--window must be at least 1, got {args.window}")
        return EXIT_USAGE
    if args.workers < 1:
        _err(f"--workers must be at least 1, got {args.workers}")
        return EXIT_USAGE
    try:
        policies: list[Policy] = [parse_policy(a) for a in args.policy] or list(NAMED.values())
    except ValueError as exc:
        _err(str(exc))
        return EXIT_USAGE
    names = [p.name for p in policies]
    if len(set(names)) != len(names):
        _err(f"a policy name is given twice: {', '.join(names)}")
        return EXIT_USAGE
    unknown = [f for f in args.family if f not in FAMILIES]
    if unknown:
        _err(f"unknown family {unknown[0]!r} (known: {', '.join(FAMILIES)})")
        return EXIT_USAGE
    families: list[str] = list(dict.fromkeys(args.family))
    if not families and not args.policy:
        families = list(FAMILIES)
    if families and BASELINE not in families:
        families.insert(0, BASELINE)
    configurations = family_configurations(families) if families else []
    missing = [str(p) for p in args.transcripts if not p.exists()]
    if missing:
        _err(f"no such file or directory: {', '.join(missing)}")
        return EXIT_USAGE
    files = list(transcript_files(args.transcripts))
    if not files:
        _err("no .jsonl transcripts found")
        return EXIT_USAGE
    windows = sorted({args.window, min(SHORT_WINDOW, args.window)})
    cleanup_on_sigterm()  # a SIGTERM unwinds: the replay trees are removed (run._pooled)
    try:
        corpus = load(files, max(windows))
    except InputError as exc:
        _err(str(exc))
        return EXIT_USAGE
    for why in corpus.unplaceable:
        _err(f"skipped: {why}")
    skipped = len(corpus.without_compaction) + len(corpus.unplaceable)
    if corpus.without_compaction:
        _err(f"{len(corpus.without_compaction)} transcripts without a compaction skipped")
    if not corpus.loaded:
        _err(f"no transcript of the {len(files)} holds a main-thread compaction to score")
        return EXIT_USAGE
    try:
        ev = evaluate(
            corpus,
            policies,
            configurations,
            windows,
            None if args.quiet else _progress,
            workers=args.workers,
        )
    except ValueError as exc:  # two policies of one name
        _err(str(exc))
        return EXIT_USAGE
    for failure in ev.failures:
        _err(failure)
    if not ev.compactions:
        _err(f"no compaction of the {len(files)} transcripts could be scored")
        return EXIT_USAGE if ev.failures else EXIT_FAILURE
    results = _results(ev, families, args.window, skipped)
    results.seconds = time.monotonic() - started
    print(report.text_tables(results))
    if args.plot:
        report.plot(results, args.plot)
    if args.markdown:
        intro = _intro(args.markdown)
        plot_name = args.plot.name if args.plot else ""
        args.markdown.write_text(report.markdown(results, plot_name, intro) + "\n")
    if args.json:
        print(report.summary_json(results, args.window))
    return 0


def _results(ev: Evaluation, families: list[str], window: int, skipped: int) -> report.Results:
    """The cross-validation (when there are families) and every interval, on the table."""
    from postcompact.evaluation import intervals  # numpy: only `eval` needs it

    w = intervals.weights(len(ev.compactions))
    out = report.Results(ev, skipped=skipped, resamples=intervals.RESAMPLES)
    repos = [k.repo for k in ev.compactions]
    if families:
        bounded = [f for f in families if FAMILIES[f].bounded]
        out.cv = _crossval(ev, bounded, repos, window, w)
        if len(bounded) < len(families):
            out.cv_all = _crossval(ev, families, repos, window, w)
    if BASELINE in ev.counts:
        for name in report.insample_names(out):
            for wd in ev.windows:
                out.intervals[(name, wd)] = intervals.paired(
                    ev.column(name, wd), ev.column(BASELINE, wd), w
                )
    return out


def _crossval(
    ev: Evaluation, families: list[str], repos: list[str], window: int, w: Any
) -> crossval.CrossValidation:
    """The procedure over the configurations of `families`, left one repository out, with the
    intervals at every window."""
    from postcompact.evaluation import intervals

    names = [c.name for c in family_configurations(families)]
    table = {n: ev.column(n, window) for n in names}
    cv = crossval.loro(table, repos, BASELINE, window)
    for wd in ev.windows:
        scored = {n: ev.column(n, wd) for n in names}
        cv.intervals[wd] = intervals.loro_intervals(table, repos, cv, w, scored)
    cv.families = {f: len(FAMILIES[f].configurations()) for f in families}
    return cv


def _intro(path: Path) -> str:
    """The hand-written part of the markdown file: everything above the generated marker."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return "# Restoration quality"
    head, _, _ = text.partition(report.GENERATED_MARK)
    return head
