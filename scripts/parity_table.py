"""Rewrite the generated tables of docs/parity.md from the shared transcripts (`make parity-table`).

For each transcript: how its disk was recreated (files known whole, known in part, refused for
their size, missing; resumes; long idle stretches; changes inferred from a Read after a shell
command) and, for each compaction, postcompact's claude-code decision beside what Claude Code
recorded. The text between the `<!-- generated: … -->` markers is replaced; the rest of the page
is prose kept by hand.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "daemon"))

from postcompact.transcript.disk import Disk  # noqa: E402
from postcompact.transcript.parse import (  # noqa: E402
    Boundary,
    FileRead,
    Resumed,
    parse,
)
from postcompact.transcript.replay import STALE_GAP_MS, replay  # noqa: E402
from postcompact.v1 import postcompact_pb2 as pb  # noqa: E402

DOC = ROOT / "docs" / "parity.md"


def corpus() -> Path:
    env = os.environ.get("POSTCOMPACT_TRANSCRIPTS")
    for c in ([Path(env)] if env else []) + [
        ROOT.parent / "shared" / "transcripts",
        Path("/work/shared/transcripts"),
    ]:
        if c.is_dir():
            return c
    raise SystemExit("no transcripts folder (set POSTCOMPACT_TRANSCRIPTS)")


def _short(name: str) -> str:
    return name.removesuffix(".jsonl").removesuffix("-full")


def disk_rows(folder: Path) -> list[str]:
    rows = [
        "| transcript | versions | files | whole | in part | size only | missing "
        "| resumes | idle ≥ 8 h | changes seen by a Read |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for path in sorted(folder.glob("*.jsonl")):
        t = parse(path.read_bytes())
        disk = Disk(0)
        changed = 0
        for e in t.events:
            before = None
            if isinstance(e, FileRead):
                f = disk.files.get(e.path)
                before = f.mtime_ms if f is not None else None
            disk.event(e)
            if isinstance(e, FileRead):
                f = disk.files[e.path]
                changed += f.mtime_ms is not None and f.mtime_ms != before
        files = disk.files.values()
        whole = sum(f.text is not None for f in files)
        part = sum(f.text is None and bool(f.lines) for f in files)
        size = sum(f.text is None and not f.lines and f.size_hint is not None for f in files)
        missing = sum(f.missing for f in files)
        resumes = sum(isinstance(e, Resumed) for e in t.events)
        times = sorted(r.time_ms for r in t.records if r.time_ms)
        gaps = sum(b - a >= STALE_GAP_MS for a, b in itertools.pairwise(times))
        versions = t.versions[0] if len(t.versions) == 1 else f"{t.versions[0]} to {t.versions[-1]}"
        rows.append(
            f"| {_short(path.name)} | {versions} | {len(disk.files)} | {whole} | {part} | {size} "
            f"| {missing} | {resumes} | {gaps} | {changed} |"
        )
    return rows


def _items(items: Sequence[object]) -> str:
    out = []
    for x in items:
        kind = getattr(x, "kind")  # noqa: B009
        name = re.split(r"[\\/]", getattr(x, "path"))[-1]  # noqa: B009
        out.append(("note " if kind == "reference" else "") + name)
    return ", ".join(out)


def boundary_rows(folder: Path) -> tuple[list[str], dict[str, int]]:
    index = json.loads((folder / "INDEX.json").read_text())
    rows = [
        "| transcript | line | version | trigger | Claude Code restored "
        "| postcompact (claude-code) | equal | agrees where determined | not determined |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    stats = {"boundaries": 0, "checked": 0, "equal": 0, "same_set": 0, "agree": 0}
    for f in index["files"]:
        t = parse((folder / f["file"]).read_bytes())
        results = asyncio.run(replay(t, profile=pb.PROFILE_CLAUDE_CODE))
        by = {c["uuid"]: c for c in f["compactions"]["list"]}
        bounds = {b.uuid: b for b in t.events if isinstance(b, Boundary)}
        for r in results:
            stats["boundaries"] += 1
            c = by.get(r.uuid)
            if c is None or not c["has_restored_file_attachments"] or not c["pre_segment_complete"]:
                continue
            assert r.claude_code is not None
            stats["checked"] += 1
            stats["equal"] += bool(r.equal)
            same = {(x.kind, x.path) for x in r.claude_code} == {
                (x.kind, x.path) for x in r.postcompact
            }
            stats["same_set"] += same
            dis = r.disagreements()
            stats["agree"] += not dis
            notes = []
            if r.stale:
                notes.append(f"{len(r.stale)} files last seen before an idle stretch")
            if r.approximate:
                notes.append(f"{len(r.approximate)} sizes estimated")
            undetermined = [
                x.path
                for x in r.claude_code
                if any(not r.determined(x.path, y.path) for y in r.claude_code if y is not x)
            ]
            if undetermined and not r.stale:
                notes.append(f"the order of {len(undetermined)} by mtime")
            rows.append(
                f"| {_short(f['file'])} | {bounds[r.uuid].line} | {c['version']} | {r.trigger} "
                f"| {_items(r.claude_code)} | {_items(r.postcompact)} "
                f"| {'yes' if r.equal else ('same files' if same else 'no')} "
                f"| {'yes' if not dis else 'NO: ' + '; '.join(dis)} "
                f"| {'; '.join(notes) or '—'} |"
            )
    return rows, stats


def evidence(folder: Path) -> tuple[int, int]:
    index = json.loads((folder / "INDEX.json").read_text())
    held = total = 0
    for f in index["files"]:
        t = parse((folder / f["file"]).read_bytes())
        by = {c["uuid"]: c for c in f["compactions"]["list"]}
        for r in asyncio.run(replay(t, profile=pb.PROFILE_CLAUDE_CODE_2_1_88)):
            c = by.get(r.uuid)
            if c is None or c["has_restored_file_attachments"] or not c["pre_segment_complete"]:
                continue
            whole = {x.path for x in r.postcompact if x.kind == "file"}
            total += len(r.edited_without_read)
            held += sum(p in whole for p in r.edited_without_read)
    return held, total


def replace(text: str, name: str, body: list[str]) -> str:
    start, end = f"<!-- generated: {name} -->", f"<!-- end: {name} -->"
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(text):
        raise SystemExit(f"docs/parity.md lacks the {start} … {end} markers")
    return pattern.sub(lambda _: "\n".join([start, *body, end]), text)


def main() -> int:
    folder = corpus()
    rows, stats = boundary_rows(folder)
    held, total = evidence(folder)
    summary = [
        f"- {stats['boundaries']} compactions in {len(list(folder.glob('*.jsonl')))} files; "
        f"{stats['checked']} have Claude Code's restoration recorded and a complete segment "
        "before them.",
        f"- claude-code profile: the same list (files, notes and order) in {stats['equal']} of "
        f"{stats['checked']}; the same files and notes in {stats['same_set']}; agreement on "
        f"everything the transcript determines in {stats['agree']}.",
        f"- Older transcripts (no recorded restoration), claude-code-2.1.88 profile: of the "
        f"{total} files edited after a compaction without a new Read, postcompact restores "
        f"{held} whole.",
    ]
    text = DOC.read_text()
    text = replace(text, "summary", summary)
    text = replace(text, "boundaries", rows)
    text = replace(text, "disks", disk_rows(folder))
    DOC.write_text(text)
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
