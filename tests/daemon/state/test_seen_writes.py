"""What a write does to the span of lines seen (state/seen.py `after_write`; docs/eval.md §2): the
span carried over to the new content and widened by the lines the write changed — named by the
harness (`RecordWriteRequest.changed_lines`), else found by the core's line diff against what
the agent held. Through the real daemon, restored by the default profile's rule (the lines
seen); and the same on a transcript's import and replay (its Edits' `structuredPatch`)."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

import grpc
import pytest
from postcompact import core
from postcompact.transcript.parse import parse, patch_lines
from postcompact.transcript.replay import replay
from postcompact.v1 import postcompact_pb2 as pb
from postcompact_client import PostcompactError, Session
from postcompact_client.types import FileAttachment, Outcome

from tests.daemon.conftest import RunningDaemon, new_session_id, start_daemon
from tests.daemon.transcript_builder import Transcript


def _lines(n: int, tag: str = "line") -> str:
    return "".join(f"{tag} {i:05d}\n" for i in range(1, n + 1))


def _open(daemon: RunningDaemon, project: Path, tag: str) -> Session:
    return daemon.client.open_session(str(project), session_id=new_session_id(tag))


def _restored(s: Session, name: str) -> tuple[int, int, int, bool]:
    """(start_line, num_lines, total_lines, truncated) of `name` as Compact restores it."""
    resp = s.preview_compact(skip_hooks=True)
    (f,) = [a.file for a in resp.attachments if a.file is not None and a.file.path.endswith(name)]
    assert isinstance(f, FileAttachment)
    return f.start_line, f.num_lines, f.total_lines, f.truncated


def _write(s: Session, path: Path, text: str, **kw: Any) -> None:
    path.write_text(text)
    s.record_write(str(path), text, **kw)


def test_a_rewrite_with_more_lines_is_seen_whole(daemon: RunningDaemon, project: Path) -> None:
    """Issue 34's case: 8 lines written, then 14: the span was left at lines 1-9 ("lines 1-9
    of 15 ... truncated")."""
    path = project / "grow.py"
    s = _open(daemon, project, "grow")
    _write(s, path, _lines(8))
    _write(s, path, _lines(14))
    assert _restored(s, "grow.py") == (1, 15, 15, False)
    (d,) = [d for d in s.preview_compact(skip_hooks=True).decisions if d.name == str(path)]
    assert d.outcome == Outcome.RESTORED


def test_lines_an_edit_appends_after_what_was_read_are_seen(
    daemon: RunningDaemon, project: Path
) -> None:
    path = project / "tail.py"
    path.write_text(_lines(40))
    s = _open(daemon, project, "tail")
    s.read_file("tail.py")
    _write(s, path, _lines(40) + "added 1\nadded 2\n")
    assert _restored(s, "tail.py") == (1, 43, 43, False)
    # A range read, an edit inside it (the entry then holds the whole file), and lines added
    # after the range: the span reaches them.
    big = project / "big.py"
    big.write_text(_lines(300))
    s.read_file("big.py", offset=100, limit=21)
    inside = _lines(300).replace("line 00110\n", "line 00110 changed\n")
    _write(s, big, inside)
    assert _restored(s, "big.py")[:2] == (100, 21)
    _write(s, big, inside.replace("line 00124\n", "line 00124\nnew a\nnew b\nnew c\nnew d\n"))
    assert _restored(s, "big.py") == (100, 29, 305, False)  # lines 100-128


def test_an_edit_above_the_lines_seen_shifts_them(daemon: RunningDaemon, project: Path) -> None:
    path = project / "shift.py"
    text = _lines(400)
    path.write_text(text)
    s = _open(daemon, project, "shift")
    s.read_file("shift.py", offset=300, limit=21)
    text = text.replace("line 00310\n", "line 00310 changed\n")
    _write(s, path, text)  # inside the range: lines 300-320, the entry now the whole file
    # Five lines deleted above: the same lines, five up.
    text = "".join(
        line for line in text.splitlines(True) if not "line 00010" <= line < "line 00015"
    )
    _write(s, path, text)
    assert _restored(s, "shift.py") == (295, 21, 396, False)
    # Three inserted above: three down, and the span reaches up to what was inserted.
    _write(s, path, text.replace("line 00020\n", "line 00020\nx\ny\nz\n"))
    assert _restored(s, "shift.py") == (16, 303, 399, False)  # lines 16-318


def test_the_lines_a_harness_names_widen_what_was_seen(
    daemon: RunningDaemon, project: Path
) -> None:
    """A range read holds only that range: the daemon has nothing to diff, so without the
    write's changed lines the span keeps its numbers; with them it reaches them."""
    path = project / "named.py"
    text = _lines(800)
    path.write_text(text)
    s = _open(daemon, project, "named")
    s.read_file("named.py", offset=100, limit=21)
    new = text.replace("line 00600\n", "line 00600\nadd 1\nadd 2\nadd 3\n")
    _write(s, path, new, changed_lines=[(601, 603)])
    assert _restored(s, "named.py") == (100, 504, 804, False)  # lines 100-603
    # A deletion only (no line named): nothing widened; the entry is whole now, so the diff
    # carries the span (lines below the deletion move up).
    _write(s, path, new.replace("line 00050\n", ""), changed_lines=[])
    assert _restored(s, "named.py") == (99, 504, 803, False)
    # Unnamed on a range read: the span stays.
    other = project / "other.py"
    other.write_text(text)
    s.read_file("other.py", offset=100, limit=21)
    _write(s, other, new)
    assert _restored(s, "other.py")[:2] == (100, 21)


@pytest.mark.parametrize(
    ("ranges", "field", "why"),
    [
        ([(0, 2)], "changed_lines.ranges[0]", "first must be >= 1"),
        ([(1, 2), (5, 4)], "changed_lines.ranges[1]", "last must be >= first"),
        ([(3, 12)], "changed_lines.ranges[0]", "past the 11 lines"),
    ],
)
def test_changed_lines_that_are_not_lines_of_the_content_are_refused(
    daemon: RunningDaemon, project: Path, ranges: list[tuple[int, int]], field: str, why: str
) -> None:
    path = project / "bad.py"
    path.write_text(_lines(100))
    s = _open(daemon, project, "bad")
    s.read_file("bad.py", offset=40, limit=11)
    with pytest.raises(PostcompactError) as err:
        s.record_write(str(path), _lines(10), changed_lines=ranges)
    assert (err.value.code, err.value.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_CHANGED_LINES",
    )
    assert err.value.metadata == {"field": field}
    assert why in err.value.message
    assert _restored(s, "bad.py")[:2] == (40, 11)  # nothing recorded
    # The last line may be the empty one after the final newline (line 11 of ten lines).
    s.record_write(str(path), _lines(10), changed_lines=[(3, 11)])


def test_too_many_changed_ranges_are_refused(daemon: RunningDaemon, project: Path) -> None:
    path = project / "many.py"
    path.write_text(_lines(20_002))
    s = _open(daemon, project, "many")
    many = [(i, i) for i in range(1, 20_002, 2)]
    with pytest.raises(PostcompactError) as err:
        s.record_write(str(path), _lines(20_002), changed_lines=many)
    assert (err.value.code, err.value.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "TOO_MANY_CHANGED_LINES",
    )
    assert err.value.metadata == {"field": "changed_lines.ranges", "limit": "10000"}


def test_the_span_a_write_left_survives_a_kill_9(base: Path, project: Path) -> None:
    """What a write left is stored with the file's row (the seen columns): after a kill -9 the
    span is the same; and an entry whose file changed while the daemon was down holds no
    verified content, so a write has nothing to diff: its span keeps its numbers."""
    path, other = project / "kept.py", project / "other.py"
    for p in (path, other):
        p.write_text(_lines(400))
    d = start_daemon(runtime_dir=base)
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("seen-w-kill"))
        s.read_file("kept.py", offset=300, limit=21)
        _write(s, path, _lines(400).replace("line 00310\n", "line 00310 changed\n"))
        _write(s, path, path.read_text().replace("line 00020\n", "line 00020\nx\ny\nz\n"))
        s.read_file("other.py", offset=100, limit=21)
        _write(s, other, _lines(400).replace("line 00110\n", "line 00110 changed\n"))
        d.stop(signal.SIGKILL)
        other.write_text(_lines(400).replace("line 00002\n", "line 00002 changed on disk\n"))
        d = start_daemon(runtime_dir=base)
        s = d.client.session(s.session_id)
        assert _restored(s, "kept.py") == (21, 303, 404, False)  # lines 21-323
        # A diff against the unverified entry's empty content would count every line changed.
        _write(s, other, other.read_text().replace("line 00115\n", "line 00115 changed\n"))
        assert _restored(s, "other.py")[:2] == (100, 21)
    finally:
        d.stop()


# --- transcripts ------------------------------------------------------------------------------


def _records(text: str, edited: str) -> list[dict[str, Any]]:
    """A Read of lines 100-120 of x.py, then an Edit adding three lines after line 600 (its
    structuredPatch as Claude Code records it); then a compaction."""
    t = Transcript()
    t.read("x.py", text, offset=100, limit=21)
    hunk = {
        "oldStart": 599,
        "oldLines": 4,
        "newStart": 599,
        "newLines": 7,
        "lines": [" l599", " l600", "+add 1", "+add 2", "+add 3", " l601", " l602"],
    }
    old, new = "l600\n", "l600\nadd 1\nadd 2\nadd 3\n"
    t.edit("x.py", text, old, new, patch=[hunk])
    assert text.replace(old, new) == edited
    t.compact()
    return t.records


def _x(n: int = 800) -> str:
    return "".join(f"l{i}\n" for i in range(1, n + 1))


def test_an_edit_s_hunks_are_its_changed_lines() -> None:
    hunks = [
        {"newStart": 3, "lines": [" a", "-b", "+B", "+C", " d", "\\ No newline at end of file"]},
        {"newStart": 20, "lines": [" x", "-y", " z"]},  # a deletion only: no line
        {"newStart": 30, "lines": ["+p", " q", "+r"]},
    ]
    assert patch_lines(hunks) == ((4, 5), (30, 30), (32, 32))
    assert patch_lines([]) is None  # a new file's Write
    assert patch_lines([{"lines": ["+a"]}]) is None  # not the shape: left to the diff
    text = _x()
    edited = text.replace("l600\n", "l600\nadd 1\nadd 2\nadd 3\n")
    data = "".join(json.dumps(r) + "\n" for r in _records(text, edited)).encode()
    (w,) = [e for e in parse(data).events if type(e).__name__ == "FileWritten"]
    assert w.changed == ((601, 603),)  # type: ignore[attr-defined]


def test_a_transcript_s_edit_widens_the_span_on_import(
    daemon: RunningDaemon, project: Path
) -> None:
    text = _x()
    edited = text.replace("l600\n", "l600\nadd 1\nadd 2\nadd 3\n")
    (project / "x.py").write_text(edited)
    records = _records(text, edited)[:-2]  # no compaction: the import's state is compacted here
    data = "".join(json.dumps(r) + "\n" for r in records)
    resp = daemon.client.import_transcript(
        data, cwd=str(project), session_id=new_session_id("imp"), profile="default"
    )
    s = daemon.client.session(resp.session_id)
    assert _restored(s, "x.py") == (100, 504, 804, False)  # lines 100-603


def test_a_transcript_s_edit_widens_the_span_on_replay() -> None:
    text = _x()
    edited = text.replace("l600\n", "l600\nadd 1\nadd 2\nadd 3\n")
    t = parse("".join(json.dumps(r) + "\n" for r in _records(text, edited)).encode())
    got: list[tuple[int, int, int]] = []

    def observe(_b: object, _s: object, _a: object, resp: pb.CompactResponse, _p: object) -> None:
        got.extend(
            (a.file.start_line, a.file.num_lines, a.file.total_lines)
            for a in resp.attachments
            if a.kind == pb.ATTACHMENT_KIND_FILE
        )

    asyncio.run(replay(t, profile=pb.PROFILE_DEFAULT, observe=observe))
    assert got == [(100, 504, 804)]
    assert core.line_diff(text.encode(), edited.encode()).changed == [(601, 603)]
