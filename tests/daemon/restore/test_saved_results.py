"""Saved tool results, uploads and downloads after a compaction, through the real daemon
(Claude Code 2.1.333 on; docs/claude-code.md §3, docs/profiles.md): under `claude-code` a saved
tool result is never restored whole, one of Claude Code's projects folder is named in a
too-large note after the five files, within the 50,000-token budget, and stays a candidate;
uploads, downloads and `artifact-files` folders are left out. `claude-code-2.1.88` keeps the
old rule (only `tool-results/artifact-*` is left out)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from postcompact_client import Session
from postcompact_client.types import (
    AttachmentKind,
    CompactFileReference,
    CompactResponse,
    Outcome,
    Placement,
    PreviewCompactResponse,
)

from tests.daemon.conftest import (
    RunningDaemon,
    file_of,
    new_session_id,
    payload_of,
    set_mtime,
    short_dir,
    text_of,
)

T0 = 1_780_000_000_000  # file mtimes: a minute apart from here, oldest first
NOTE = (
    "Note: {path} was read before the last conversation was summarized, but the contents are "
    "too large to include. Use Read tool if you need to access it."
)


@pytest.fixture
def world() -> Iterator[Path]:
    """A folder holding the project (`project/`) and Claude Code's home (`home/`)."""
    root = short_dir("pcsaved")
    (root / "project").mkdir()
    (root / "home" / ".claude").mkdir(parents=True)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _write(path: Path, text: str, minute: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    set_mtime(path, T0 + minute * 60_000)
    return path


def _restored(resp: CompactResponse | PreviewCompactResponse) -> list[str]:
    """The files restored and the notes, in order (a note as `note <path>`)."""
    out = []
    for a in resp.attachments:
        if a.kind == AttachmentKind.FILE:
            out.append(file_of(a).path)
        elif a.kind == AttachmentKind.COMPACT_FILE_REFERENCE:
            out.append(f"note {payload_of(a, CompactFileReference).path}")
    return out


def _outcome(resp: CompactResponse | PreviewCompactResponse, path: Path) -> Outcome:
    (d,) = [d for d in resp.decisions if d.name == str(path)]
    return d.outcome


def _open(daemon: RunningDaemon, world: Path, profile: str) -> Session:
    """A session of the project whose roots hold Claude Code's folder of the home too."""
    return daemon.client.open_session(
        str(world / "project"),
        session_id=new_session_id("saved"),
        roots=[str(world / "project"), str(world / "home" / ".claude")],
        home=str(world / "home"),
        profile=profile,
    )


def test_a_saved_tool_result_is_named_after_the_five_files(
    daemon: RunningDaemon, world: Path
) -> None:
    project, home = world / "project", world / "home"
    saved = home / ".claude/projects/-p/0000-session/tool-results"
    files = [_write(project / f"src/f{i}.py", f"F{i} = {i}\n", i) for i in range(6)]
    older = _write(saved / "older.txt", "an older saved result\n", 10)
    newer = _write(saved / "Newer.TXT", "a newer saved result\n", 11)
    artifact = _write(saved / "artifact-5f3a.txt", "a saved artifact\n", 12)
    copy = _write(saved / "Project-File-notes.txt", "a project file's copy\n", 13)
    outside = _write(project / "logs/Tool-Results/run.txt", "not Claude Code's folder\n", 14)
    s = _open(daemon, world, "claude-code")
    for path in [*files, older, newer, artifact, copy, outside]:
        s.read_file(str(path))

    resp = s.preview_compact(skip_hooks=True)
    five = [str(p) for p in reversed(files[1:])]
    assert _restored(resp) == [*five, f"note {newer}", f"note {older}"]
    notes = [a for a in resp.attachments if a.kind == AttachmentKind.COMPACT_FILE_REFERENCE]
    assert [a.placement for a in notes] == [Placement.SYSTEM, Placement.SYSTEM]
    assert text_of(notes[0]) == NOTE.format(path=newer)
    assert payload_of(notes[0], CompactFileReference).display_path == str(
        Path("..") / newer.relative_to(world)
    )
    for path in (artifact, copy, outside):
        assert _outcome(resp, path) == Outcome.EXCLUDED_ARTIFACT
    assert _outcome(resp, files[0]) == Outcome.DROPPED_BY_RANK

    # Claude Code 2.1.88's rule: a saved result is a file like any other.
    old = _open(daemon, world, "claude-code-2.1.88")
    for path in [*files, older, newer]:
        old.read_file(str(path))
    assert _restored(old.preview_compact(skip_hooks=True)) == [
        str(newer),
        str(older),
        *five[:3],
    ]


def test_saved_result_notes_take_their_share_of_the_file_budget_and_are_not_read(
    daemon: RunningDaemon, world: Path
) -> None:
    saved = world / "home/.claude/projects/-p/0000-session/tool-results"
    result = _write(saved / "b1.txt", "a saved result\n", 1)
    s = _open(daemon, world, "claude-code")
    s.read_file(str(result))
    assert _restored(s.preview_compact(skip_hooks=True)) == [f"note {result}"]
    tight = s.preview_compact(skip_hooks=True, policy={"file_token_budget": 20})
    assert _restored(tight) == []
    assert _outcome(tight, result) == Outcome.DROPPED_BY_BUDGET
    result.unlink()  # not read: named all the same, as Claude Code names it
    assert _restored(s.preview_compact(skip_hooks=True)) == [f"note {result}"]


def test_a_saved_result_stays_a_candidate_after_the_compaction(
    daemon: RunningDaemon, world: Path
) -> None:
    saved = world / "home/.claude/projects/-p/0000-session/tool-results"
    named = _write(saved / "named.txt", "a saved result\n", 1)
    beyond = [_write(saved / f"r{i}.txt", f"result {i}\n", 2 + i) for i in range(5)]
    s = _open(daemon, world, "claude-code")
    for path in [named, *beyond]:
        s.read_file(str(path))
    first = s.compact(skip_hooks=True)
    assert _restored(first) == [f"note {p}" for p in reversed(beyond)]
    assert _outcome(first, named) == Outcome.DROPPED_BY_RANK
    # Claude Code keeps a path-only entry of every saved result: the next compaction names the
    # same ones, the oldest still left beyond the five.
    second = s.compact(skip_hooks=True)
    assert _restored(second) == _restored(first)
    assert _outcome(second, named) == Outcome.DROPPED_BY_RANK


def test_uploads_downloads_and_artifact_files_are_never_restored(
    daemon: RunningDaemon, world: Path
) -> None:
    project, home = world / "project", world / "home"
    kept = _write(project / "src/app.py", "APP = 1\n", 0)
    left_out = [
        _write(home / ".claude/uploads/0000/brief.txt", "an upload\n", 1),
        _write(home / ".claude/Uploads/0001/other.txt", "an upload, any case\n", 2),
        _write(project / "out/Artifact-Files/report.md", "an artifact's file\n", 3),
        _write(project / "dl/connector-downloads/sheet.csv", "a connector download\n", 4),
    ]
    s = _open(daemon, world, "claude-code")
    for path in [kept, *left_out]:
        s.read_file(str(path))
    resp = s.preview_compact(skip_hooks=True)
    assert _restored(resp) == [str(kept)]
    for path in left_out:
        assert _outcome(resp, path) == Outcome.EXCLUDED_ARTIFACT

    old = _open(daemon, world, "claude-code-2.1.88")
    for path in [kept, *left_out]:
        old.read_file(str(path))
    assert _restored(old.preview_compact(skip_hooks=True)) == [
        *(str(p) for p in reversed(left_out)),
        str(kept),
    ]


def test_complement_mode_leaves_saved_results_and_uploads_to_postcompact(
    daemon: RunningDaemon, world: Path
) -> None:
    """Claude Code 2.1.333 on restores neither whole: complement mode no longer counts them as
    restored by the harness, and the default profile's own rule restores them."""
    project, home = world / "project", world / "home"
    app = _write(project / "src/app.py", "APP = 1\n", 0)
    upload = _write(home / ".claude/uploads/0000/brief.txt", "an upload\n", 1)
    result = _write(home / ".claude/projects/-p/0000-session/tool-results/b1.txt", "saved\n", 2)
    s = _open(daemon, world, "default")
    for path in (app, upload, result):
        s.read_file(str(path))
    resp = s.preview_compact(skip_hooks=True, policy={"complement": "claude_code"})
    assert _outcome(resp, app) == Outcome.RESTORED_BY_HARNESS
    assert _outcome(resp, upload) == Outcome.RESTORED
    assert _outcome(resp, result) == Outcome.RESTORED
