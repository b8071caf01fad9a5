"""`postcompact import` and `postcompact replay` (docs/transcripts.md, docs/parity.md)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from postcompact import profiles
from postcompact.errors import PostcompactError
from postcompact.exitcodes import EXIT_FAILURE, EXIT_NOT_RUNNING, EXIT_USAGE
from postcompact.transcript.disk import DiskBudgetExceeded
from postcompact.transcript.parse import TranscriptError, parse
from postcompact.transcript.replay import BoundaryResult, cleanup_on_sigterm, replay
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["add_parsers", "cmd_import", "cmd_replay", "transcript_files"]


def _err(message: str) -> None:
    print(f"postcompact: {message}", file=sys.stderr)


def add_parsers(sub: Any, add_common: Any) -> None:
    p = sub.add_parser(
        "import", help="build a session on the running daemon from a Claude Code transcript"
    )
    add_common(p)
    p.add_argument("transcript", type=Path, help="a Claude Code transcript (.jsonl)")
    p.add_argument(
        "--cwd",
        type=Path,
        help="where the transcript's working directory is on this machine (default: .)",
    )
    p.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="SRC=DST",
        help="map a further transcript path prefix to a local directory (repeatable)",
    )
    p.add_argument("--session-id", default="", help="default: the transcript's own session id")
    p.add_argument("--profile", choices=[r for r in profiles.NAMES if "_" not in r])
    p.add_argument("--replace", action="store_true", help="replace a session with that id")
    p.add_argument("--json", action="store_true", help="print the response as JSON")

    p = sub.add_parser(
        "replay",
        help="postcompact's decisions at each compaction of transcripts, beside Claude Code's",
    )
    p.add_argument("transcripts", nargs="+", type=Path, help=".jsonl files or directories")
    p.add_argument(
        "--profile",
        default="claude-code",
        choices=[r for r in profiles.NAMES if "_" not in r],
        help="the profile whose rules decide (default claude-code)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per boundary and line")


def transcript_files(paths: list[Path]) -> Iterator[Path]:
    """The .jsonl files named, or found (sorted) in the directories named."""
    for p in paths:
        if p.is_dir():
            yield from sorted(x for x in p.rglob("*.jsonl") if x.is_file())
        else:
            yield p


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SystemExit(f"postcompact: cannot read {path}: {exc.strerror or exc}") from None


# --- import -----------------------------------------------------------------------------------


def cmd_import(args: argparse.Namespace, connection: Any) -> int:
    import grpc
    from google.protobuf import json_format

    data = _read(args.transcript)
    cwd = os.path.abspath(str(args.cwd or "."))
    req = pb.ImportTranscriptRequest(
        transcript=data, cwd=cwd, session_id=args.session_id, replace=args.replace
    )
    for m in args.map:
        source, sep, target = m.partition("=")
        if not sep or not source or not target:
            _err(f"--map takes SRC=DST, got {m!r}")
            return EXIT_USAGE
        req.path_map.add(source=source, target=os.path.abspath(target))
    if args.profile:
        req.profile = profiles.parse(args.profile)
    try:
        resp = connection.stub.ImportTranscript(req, timeout=120.0)
    except grpc.RpcError as exc:
        code = exc.code()
        if code == grpc.StatusCode.UNAVAILABLE:
            _err("the daemon is not running (start it with `postcompact start`)")
            return EXIT_NOT_RUNNING
        _err(f"import failed: {code.name}: {exc.details()}")
        return EXIT_FAILURE
    if args.json:
        print(json.dumps(json_format.MessageToDict(resp), indent=2))
        return 0
    print(
        f"imported {args.transcript} as session {resp.session_id}: {resp.records} records, "
        f"{resp.events} events, {len(resp.boundaries)} compactions, "
        f"{resp.session.cached_entries} files held"
    )
    for b in resp.boundaries:
        restored = ", ".join(f"{x.kind} {x.path}" for x in b.restored) or "nothing"
        print(f"  line {b.line} ({b.trigger}): restored {restored}")
    for w in resp.warnings:
        print(f"  warning: {w}")
    return 0


# --- replay -----------------------------------------------------------------------------------


def _table(path: Path, r: BoundaryResult) -> list[str]:
    equal = {True: "equal", False: "different", None: "not recorded"}[r.equal]
    lines = [f"{path.name}: boundary {r.uuid} (line {r.line}, {r.trigger}) — {equal}"]
    if r.claude_code is not None:
        cc = ", ".join(f"{x.kind} {x.path}" for x in r.claude_code) or "nothing"
        lines.append(f"  Claude Code restored: {cc}")
    lines.append("  postcompact:")
    files = [d for d in r.decisions if d["subject"] == "file"]
    for d in sorted(files, key=lambda d: (d["rank"] == 0, d["rank"])):
        rank = str(d["rank"]) if d["rank"] else "-"
        lines.append(f"    {rank:>3}  {d['outcome']:<26} {d['tokens']:>6}  {d['path']}")
        if d["detail"]:
            lines.append(f"         {d['detail']}")
    for p in r.approximate:
        lines.append(f"  estimated size (known only in part): {p}")
    return lines


def cmd_replay(args: argparse.Namespace) -> int:
    """A transcript that cannot be replayed (a bad value, one over a limit or the budget, the
    disk budget) is one line naming it and exit 2; the others are still replayed."""
    profile = profiles.parse(args.profile)
    files = list(transcript_files(args.transcripts))
    if not files:
        _err("no .jsonl transcripts found")
        return EXIT_USAGE
    cleanup_on_sigterm()
    status = 0
    for n, path in enumerate(files, start=1):
        if len(files) > 1:
            print(f"[{n}/{len(files)}] {path.name}", file=sys.stderr, flush=True)
        try:
            t = parse(_read(path))
            results = asyncio.run(replay(t, profile=profile))
        except (TranscriptError, DiskBudgetExceeded) as exc:
            _err(f"{path}: {exc}")
            status = EXIT_USAGE
            continue
        except PostcompactError as exc:  # a live call's limit (TOO_MANY_AGENTS, ...)
            _err(f"{path}: {exc.reason}: {exc.message}")
            status = EXIT_USAGE
            continue
        except ValueError as exc:  # its working directory cannot be placed
            _err(f"{path}: {exc}")
            status = EXIT_FAILURE
            continue
        for r in results:
            if args.json:
                print(json.dumps(r.as_json(), ensure_ascii=False), flush=True)
            else:
                print("\n".join(_table(path, r)), flush=True)
    return status
