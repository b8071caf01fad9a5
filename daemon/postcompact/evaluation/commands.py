"""`postcompact eval` (docs/eval.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from postcompact.evaluation import report
from postcompact.evaluation.corpus import TranscriptFile, transcript_files
from postcompact.evaluation.policies import NAMED, Policy, parse_policy
from postcompact.evaluation.run import evaluate

__all__ = ["add_parser", "cmd_eval"]

EXIT_FAILURE = 1
EXIT_USAGE = 2
DEFAULT_WINDOW = 30
SHORT_WINDOW = 10


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "eval",
        help="measure restoration policies on Claude Code transcripts (recall, tokens, ...)",
        description=(
            "For every compaction of the transcripts: what each policy restores (replayed "
            "in-process), against the files the agent read or edited in the next tool calls."
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
        "--window",
        type=int,
        default=DEFAULT_WINDOW,
        help=f"tool calls after a compaction that count as its need (default {DEFAULT_WINDOW}; "
        f"{SHORT_WINDOW} is reported too)",
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
    if args.window < 1:
        _err(f"--window must be at least 1, got {args.window}")
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
    missing = [str(p) for p in args.transcripts if not p.exists()]
    if missing:
        _err(f"no such file or directory: {', '.join(missing)}")
        return EXIT_USAGE
    files = list(transcript_files(args.transcripts))
    if not files:
        _err("no .jsonl transcripts found")
        return EXIT_USAGE
    windows = sorted({args.window, min(SHORT_WINDOW, args.window)})
    ev = evaluate(files, policies, windows, None if args.quiet else _progress)
    for failure in ev.failures:
        _err(failure)
    print(report.text_tables(ev))
    if args.plot:
        report.plot(ev, args.plot)
    if args.markdown:
        intro = _intro(args.markdown)
        plot_name = args.plot.name if args.plot else ""
        args.markdown.write_text(report.markdown(ev, plot_name, intro) + "\n")
    if args.json:
        print(report.summary_json(ev, args.window))
    return EXIT_FAILURE if ev.failures and not ev.rows else 0


def _intro(path: Path) -> str:
    """The hand-written part of the markdown file: everything above the generated marker."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return "# Restoration quality"
    head, _, _ = text.partition(report.GENERATED_MARK)
    return head
