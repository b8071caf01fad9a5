"""`postcompact eval` (docs/eval.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from postcompact.evaluation import crossval, learned, report
from postcompact.evaluation.corpus import TranscriptFile, transcript_files
from postcompact.evaluation.policies import BASELINE, FAMILIES, NAMED, Policy, parse_policy
from postcompact.evaluation.policies import configurations as family_configurations
from postcompact.evaluation.run import Corpus, Evaluation, InputError, evaluate, load
from postcompact.exitcodes import EXIT_FAILURE, EXIT_USAGE
from postcompact.restore import ranker
from postcompact.transcript.replay import cleanup_on_sigterm

__all__ = ["add_parser", "cmd_eval"]

DEFAULT_WINDOW = 30
SHORT_WINDOW = 10
DEFAULT_WORKERS = 2
KNOWN_FAMILIES = (*FAMILIES, learned.FAMILY)


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
        f"default without --policy: all of {', '.join(KNOWN_FAMILIES)}; with --policy: none)",
    )
    p.add_argument(
        "--write-model",
        type=Path,
        metavar="FILE",
        help="write the learned ranking's model the procedure trains on every repository here "
        "(the committed one: daemon/postcompact/restore/ranking_model.json)",
    )
    p.add_argument(
        "--check-model",
        action="store_true",
        help="exit 1 when the committed ranking model differs from the one trained here",
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
    unknown = [f for f in args.family if f not in KNOWN_FAMILIES]
    if unknown:
        _err(f"unknown family {unknown[0]!r} (known: {', '.join(KNOWN_FAMILIES)})")
        return EXIT_USAGE
    families: list[str] = list(dict.fromkeys(args.family))
    if not families and not args.policy:
        families = list(KNOWN_FAMILIES)
    if families and BASELINE not in families:
        families.insert(0, BASELINE)
    if (args.write_model or args.check_model) and learned.FAMILY not in families:
        _err(f"--write-model and --check-model need the {learned.FAMILY} family")
        return EXIT_USAGE
    fixed = [f for f in families if f in FAMILIES]
    configurations = family_configurations(fixed) if fixed else []
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
    fit = None
    if learned.FAMILY in families:
        fit = _learn(corpus, ev, args)
    results = _results(ev, families, args.window, skipped, fit)
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
    if fit is not None:
        return _model_out(results, args)
    return 0


def _learn(corpus: Corpus, ev: Evaluation, args: argparse.Namespace) -> learned.Learned:
    """The learned family: its examples (one replay of every scored transcript), its models
    (on every repository, and per held-out repository on the others), their rules replayed
    into `ev`'s table."""
    failed = {f.split(": ", 1)[0] for f in ev.failures}
    items = [x for x in corpus.loaded if str(x.file.path) not in failed]
    quiet = args.quiet
    if not quiet:
        print(f"learned: collecting the features of {len(items)} transcripts", file=sys.stderr)
    data = learned.examples(((x.file.repo, x.transcript, x.points) for x in items), args.window)
    fit = learned.fit(data, [x.file.repo for x in items])
    if not quiet:
        print(
            f"learned: {len(data)} candidates, {sum(e.label for e in data)} needed and "
            f"covered; {len(fit.folds) + 1} models; replaying their rules",
            file=sys.stderr,
        )
    more = evaluate(
        corpus,
        [],
        fit.policies(),
        ev.windows,
        None if quiet else _progress,
        workers=args.workers,
    )
    for name, column in more.counts.items():
        ev.counts[name] = column
    ev.configurations.extend(learned.learned_policy(n, m) for n, m in fit.everything.items())
    ev.extra.extend(p for p in fit.policies() if p.name not in fit.everything)
    return fit


def _model_out(results: report.Results, args: argparse.Namespace) -> int:
    """The learned model trained on every repository, at the alpha the procedure ranks first
    among the family's configurations: written (--write-model) and checked against the
    committed one (--check-model)."""
    model = results.model
    assert model is not None
    if args.write_model:
        args.write_model.write_text(json.dumps(model.as_json(), indent=2) + "\n")
        print(f"learned: the model written to {args.write_model}", file=sys.stderr)
    if args.check_model:
        have = ranker.committed()
        if (have.bias, have.weights, have.alpha) != (model.bias, model.weights, model.alpha):
            _err(
                "the committed ranking model (restore/ranking_model.json) differs from the one "
                "trained here: run `make eval-model` and commit it"
            )
            return EXIT_FAILURE
        print("learned: the committed ranking model equals the retrain", file=sys.stderr)
    return 0


def _results(
    ev: Evaluation,
    families: list[str],
    window: int,
    skipped: int,
    fit: learned.Learned | None = None,
) -> report.Results:
    """The cross-validation (when there are families) and every interval, on the table."""
    from postcompact.evaluation import intervals  # numpy: only `eval` needs it

    w = intervals.weights(len(ev.compactions))
    out = report.Results(ev, skipped=skipped, resamples=intervals.RESAMPLES)
    repos = [k.repo for k in ev.compactions]
    if families:
        bounded = [f for f in families if f == learned.FAMILY or FAMILIES[f].bounded]
        out.cv = _crossval(ev, bounded, repos, window, w, fit)
        if len(bounded) < len(families):
            out.cv_all = _crossval(ev, families, repos, window, w, fit)
    if fit is not None:
        out.learned = fit
        best = min(fit.everything, key=lambda n: crossval.rank(ev.pooled(n, window), n))
        out.model = fit.everything[best]
    if BASELINE in ev.counts:
        for name in report.insample_names(out):
            for wd in ev.windows:
                out.intervals[(name, wd)] = intervals.paired(
                    ev.column(name, wd), ev.column(BASELINE, wd), w
                )
    return out


def _crossval(
    ev: Evaluation,
    families: list[str],
    repos: list[str],
    window: int,
    w: Any,
    fit: learned.Learned | None,
) -> crossval.CrossValidation:
    """The procedure over the configurations of `families`, left one repository out, with the
    intervals at every window. The learned family's configurations read, in each fold, their
    model trained without the held-out repository."""
    from postcompact.evaluation import intervals

    fixed = [c.name for c in family_configurations([f for f in families if f in FAMILIES])]
    trained = fit is not None and learned.FAMILY in families

    def names(repo: str | None) -> dict[str, str]:
        out = {n: n for n in fixed}
        if trained:
            assert fit is not None
            out.update(fit.table_names(repo))
        return out

    def table(wd: int) -> crossval.FoldTable:
        return lambda repo: {c: ev.column(col, wd) for c, col in names(repo).items()}

    columns = {
        col: ev.column(col, window)
        for r in [None, *sorted(set(repos))]
        for col in names(r).values()
    }
    cv = crossval.loro(columns, repos, BASELINE, window, names)
    for wd in ev.windows:
        cv.intervals[wd] = intervals.loro_intervals(table(window), repos, cv, w, table(wd))
    cv.families = {
        f: len(learned.ALPHAS) if f == learned.FAMILY else len(FAMILIES[f].configurations())
        for f in families
    }
    return cv


def _intro(path: Path) -> str:
    """The hand-written part of the markdown file: everything above the generated marker."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return "# Restoration quality"
    head, _, _ = text.partition(report.GENERATED_MARK)
    return head
