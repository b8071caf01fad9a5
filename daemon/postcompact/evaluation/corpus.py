"""The transcripts `postcompact eval` reads, and the repository each comes from (docs/eval.md).

A directory may carry an `INDEX.json` naming each file's source repository
(`{"files": [{"file": NAME, "source_repo": "owner/name"}, ...]}`); otherwise the repository is
read from the file name (`owner__name__...jsonl`), else the file's own name stands for it.
The repository is the unit the cross-validation holds out (`crossval`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TranscriptFile", "transcript_files"]


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    path: Path
    repo: str


def _index(directory: Path) -> dict[str, str]:
    try:
        data = json.loads((directory / "INDEX.json").read_text())
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    out: dict[str, str] = {}
    for entry in files if isinstance(files, list) else []:
        if isinstance(entry, dict):
            name, repo = entry.get("file"), entry.get("source_repo")
            if isinstance(name, str) and isinstance(repo, str) and repo:
                out[name] = repo
    return out


def _repo_from_name(path: Path) -> str:
    parts = path.name.split("__")
    return f"{parts[0]}/{parts[1]}" if len(parts) >= 3 and parts[0] and parts[1] else path.stem


def transcript_files(paths: Iterable[Path]) -> Iterator[TranscriptFile]:
    """Each `.jsonl` file named or inside a named directory (sorted), with its repository."""
    for p in paths:
        if p.is_dir():
            index = _index(p)
            for f in sorted(p.rglob("*.jsonl")):
                yield TranscriptFile(f, index.get(f.name) or _repo_from_name(f))
        else:
            yield TranscriptFile(p, _index(p.parent).get(p.name) or _repo_from_name(p))
