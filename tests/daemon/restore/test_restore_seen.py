"""The default profile's file rule, chosen by `postcompact eval` (docs/eval.md): each file is
restored as the lines the agent saw of it since the last compaction, up to 20 files of at most
5,000 tokens each (a file over it is left out), in the tokens Claude Code's own rule spends at
that compaction; per request, other rankings and an index of the files left out. Through the
real daemon."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from postcompact_client import Session
from postcompact_client.types import (
    AttachmentKind,
    CompactResponse,
    Decision,
    FileAttachment,
    LeftOutFiles,
    Outcome,
    Placement,
    PreviewCompactResponse,
)

from tests.daemon.conftest import RunningDaemon, file_of, new_session_id, payload_of, start_daemon


def _lines(n: int, tag: str = "line") -> str:
    return "".join(f"{tag} {i:05d}\n" for i in range(1, n + 1))


def _open(
    daemon: RunningDaemon, project: Path, tag: str, policy: dict[str, object] | None = None
) -> Session:
    # These rules under recency, whose order the tests name (the learned ranking: test_ranker.py).
    return daemon.client.open_session(
        str(project),
        session_id=new_session_id(tag),
        policy={"ranking": "recency", **(policy or {})},
    )


def _files(resp: CompactResponse | PreviewCompactResponse) -> dict[str, FileAttachment]:
    return {Path(a.file.path).name: a.file for a in resp.attachments if a.file is not None}


def _decision(resp: CompactResponse | PreviewCompactResponse, name: str) -> Decision:
    (d,) = [d for d in resp.decisions if Path(d.name).name == name]
    return d


def test_the_lines_seen_come_back_from_the_first_to_the_last(
    daemon: RunningDaemon, project: Path
) -> None:
    (project / "big.py").write_text(_lines(1000))
    s = _open(daemon, project, "seen")
    s.read_file("big.py", offset=100, limit=51)
    s.read_file("big.py", offset=300, limit=21)
    resp = s.compact(skip_hooks=True, include_content=True)
    f = _files(resp)["big.py"]
    assert (f.start_line, f.num_lines, f.total_lines) == (100, 221, 1001)
    assert f.content.startswith(b"line 00100\n")
    assert f.content.endswith(b"line 00320")
    d = _decision(resp, "big.py")
    assert d.outcome == Outcome.RESTORED
    assert d.detail == "lines 100-320 of 1001: the lines seen since the last compaction"
    # What the agent now sees is what was restored: the next compaction brings the same back.
    again = _files(s.compact(skip_hooks=True, include_content=True))["big.py"]
    assert (again.start_line, again.num_lines) == (100, 221)


def test_a_head_seen_is_marked_as_a_head(daemon: RunningDaemon, project: Path) -> None:
    (project / "head.py").write_text(_lines(500))
    s = _open(daemon, project, "head")
    s.read_file("head.py", offset=1, limit=50)
    att = next(a for a in s.compact(skip_hooks=True).attachments if a.file is not None)
    f = file_of(att)
    assert (f.start_line, f.num_lines, f.truncated) == (1, 50, True)
    assert "truncated for compaction at line 50 of 501" in att.blocks[1]


def test_a_write_adds_every_line_of_a_file_not_held_and_what_it_changed_of_one_held(
    daemon: RunningDaemon, project: Path
) -> None:
    """A file the agent held nothing of was written whole: every line seen. A write of a file
    it read carries the span over and widens it by the lines the write changed (here named by
    the request; tests/daemon/state/test_seen_writes.py has the rest)."""
    path = project / "edit.py"
    text = _lines(800)
    path.write_text(text)
    s = _open(daemon, project, "edit")
    s.read_file("edit.py", offset=200, limit=11)
    new = text.replace("line 00600\n", "line 00600 changed\n")
    path.write_text(new)
    s.record_write(str(path), new, changed_lines=[(600, 600)])
    (project / "new.py").write_text(_lines(30, "new"))
    s.record_write(str(project / "new.py"), _lines(30, "new"))
    resp = s.compact(skip_hooks=True, include_content=True)
    f = _files(resp)
    assert (f["edit.py"].start_line, f["edit.py"].num_lines) == (200, 401)
    assert f["edit.py"].content.endswith(b"line 00600 changed")
    assert (f["new.py"].start_line, f["new.py"].num_lines, f["new.py"].truncated) == (1, 31, False)


def test_more_than_five_files_come_back_and_one_over_the_cap_is_left_out(
    daemon: RunningDaemon, project: Path
) -> None:
    """Claude Code restores four of the files whole and a note for the large one; the lines the
    agent saw of each file (a head of 6 lines) fit all eight in those tokens, and the large file
    is left out (over the 5,000-token cap)."""
    for i in range(8):
        (project / f"m{i}.py").write_text(_lines(60, f"m{i}"))
    (project / "huge.py").write_text(_lines(4000))
    s = _open(daemon, project, "many")
    for i in range(8):
        s.read_file(f"m{i}.py", offset=1, limit=6)
    s.read_file("huge.py")  # the most recent, but over the 5,000-token cap
    resp = s.compact(skip_hooks=True)
    assert sorted(_files(resp)) == sorted(f"m{i}.py" for i in range(8))
    d = _decision(resp, "huge.py")
    assert (d.outcome, d.rank, d.tokens) == (Outcome.DROPPED_OVER_CAP, 1, 0)
    assert "over the 5000-token cap" in d.detail
    assert all(a.tokens <= 5000 for a in resp.attachments if a.file is not None)
    # Read whole, the files cost what Claude Code's do: its four come back, no more.
    whole = _open(daemon, project, "many-whole")
    for i in range(8):
        whole.read_file(f"m{i}.py")
    whole.read_file("huge.py")
    assert len(_files(whole.compact(skip_hooks=True))) == 4


def test_the_index_names_the_files_left_out(daemon: RunningDaemon, project: Path) -> None:
    (project / "huge.py").write_text(_lines(4000))
    (project / "small.py").write_text(_lines(5))
    s = _open(daemon, project, "index", policy={"left_out_index": True})
    s.read_file("huge.py", offset=10, limit=3000)
    s.read_file("small.py")
    text = (project / "small.py").read_text()
    s.record_write(str(project / "small.py"), text.replace("line 00003", "line three"))
    s.read_file("huge.py", offset=10, limit=3000)
    resp = s.compact(skip_hooks=True)
    (idx,) = [a for a in resp.attachments if a.kind == AttachmentKind.LEFT_OUT_FILES]
    (entry,) = payload_of(idx, LeftOutFiles).files
    assert (entry.path, entry.first_line, entry.last_line, entry.edited) == (
        str(project / "huge.py"),
        10,
        3009,
        False,
    )
    assert f"- {project / 'huge.py'} (lines 10-3009 seen)" in idx.blocks[0]
    assert idx.placement == Placement.USER
    assert idx.tokens > 0
    assert "small.py" in _files(resp)
    # Without the policy field there is no index (the default leaves it out: docs/eval.md).
    plain = _open(daemon, project, "noindex")
    plain.read_file("huge.py")
    out = plain.compact(skip_hooks=True)
    assert not [a for a in out.attachments if a.kind == AttachmentKind.LEFT_OUT_FILES]


def test_edits_first_ranks_an_edited_file_above_newer_reads(
    daemon: RunningDaemon, project: Path
) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (project / name).write_text(_lines(10, name))
    s = _open(daemon, project, "edits", policy={"max_files": 1})
    s.read_file("a.py")
    s.record_write(str(project / "a.py"), _lines(10, "a.py"))
    s.read_file("b.py")
    s.read_file("c.py")
    assert list(_files(s.preview_compact(skip_hooks=True))) == ["c.py"]
    ranked = s.preview_compact(skip_hooks=True, policy={"ranking": "edits_first"})
    assert list(_files(ranked)) == ["a.py"]


def test_what_was_seen_survives_a_kill_9(base: Path, project: Path) -> None:
    (project / "big.py").write_text(_lines(1000))
    d = start_daemon(runtime_dir=base)
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("seen-kill"))
        s.read_file("big.py", offset=100, limit=51)
        s.read_file("big.py", offset=300, limit=21)
        d.stop(signal.SIGKILL)
        d = start_daemon(runtime_dir=base)
        f = _files(d.client.session(s.session_id).compact(skip_hooks=True))["big.py"]
        assert (f.start_line, f.num_lines) == (100, 221)  # not only the last range read
    finally:
        d.stop()


def test_a_cloned_sub_agent_starts_with_what_its_parent_saw(
    daemon: RunningDaemon, project: Path
) -> None:
    (project / "big.py").write_text(_lines(1000))
    s = _open(daemon, project, "clone")
    s.read_file("big.py", offset=100, limit=51)
    s.read_file("big.py", offset=300, limit=21)
    sub = s.start_agent("sub", mode="clone_parent")
    f = _files(sub.compact(skip_hooks=True))["big.py"]
    assert (f.start_line, f.num_lines) == (100, 221)


def test_a_range_that_ends_on_an_empty_line_keeps_it(daemon: RunningDaemon, project: Path) -> None:
    """A head seen (lines 1-10 of a longer file) whose last line is empty comes back with that
    line: only the empty "line" after the file's final newline is not a line to keep (it was
    dropped with it: "lines 1-10 ... kept lines 1-9")."""
    text = "".join("\n" if i == 10 else f"line {i:05d}\n" for i in range(1, 41))
    (project / "gap.md").write_text(text)
    s = _open(daemon, project, "gap")
    s.read_file("gap.md", offset=1, limit=10)
    resp = s.compact(skip_hooks=True, include_content=True)
    f = _files(resp)["gap.md"]
    assert (f.start_line, f.num_lines, f.truncated) == (1, 10, True)
    assert f.content == text.split("line 00011")[0].removesuffix("\n").encode()
    d = _decision(resp, "gap.md")
    assert d.detail.endswith("kept lines 1-10 of 41"), d.detail


def test_mtime_ranking_puts_the_newest_file_on_disk_first(
    daemon: RunningDaemon, project: Path
) -> None:
    """FILE_RANKING_MTIME orders by the file's modification time, not by when it was used: a
    file written lately ranks above files only read since (Claude Code's order), whatever the
    profile stamps entries with; a file that cannot be stat'ed ranks last."""
    for name in ("a.py", "b.py", "c.py", "gone.py"):
        (project / name).write_text(_lines(10, name))
    os.utime(project / "a.py", (2_000_000_000, 2_000_000_000))
    os.utime(project / "b.py", (1_000_000_000, 1_000_000_000))
    os.utime(project / "c.py", (1_500_000_000, 1_500_000_000))
    s = _open(daemon, project, "mtime", policy={"max_files": 2})
    for name in ("a.py", "b.py", "c.py", "gone.py"):
        s.read_file(name)
    (project / "gone.py").unlink()
    # By use: the last read first (gone.py's slot is lost to its failed re-read).
    assert list(_files(s.preview_compact(skip_hooks=True))) == ["c.py"]
    ranked = s.preview_compact(skip_hooks=True, policy={"ranking": "mtime"})
    assert list(_files(ranked)) == ["a.py", "c.py"]
    order = [(Path(d.name).name, d.rank) for d in ranked.decisions if d.rank]
    assert order == [("a.py", 1), ("c.py", 2), ("b.py", 3), ("gone.py", 4)]


def test_a_file_read_whole_within_claude_codes_cap_comes_back(
    daemon: RunningDaemon, project: Path
) -> None:
    """A 240-line design file (about 12,000 characters: 3,000-4,000 tokens as attached) read
    whole and re-read after the compaction: Claude Code restores it within its 5,000-token cap,
    and so does the default now (its 3,000-token cap left it out)."""
    text = "".join(f"{i:03d} " + "design note text " * 2 + "x" * 12 + "\n" for i in range(240))
    (project / "DESIGN.md").write_text(text)
    s = _open(daemon, project, "design")
    s.read_file("DESIGN.md")
    resp = s.compact(skip_hooks=True)
    d = _decision(resp, "DESIGN.md")
    assert d.outcome == Outcome.RESTORED, d.detail
    assert 3_000 < d.tokens <= 5_000
    f = _files(resp)["DESIGN.md"]
    assert (f.start_line, f.num_lines, f.truncated) == (1, 241, False)
    s.read_file("DESIGN.md")
    old_rule = {"max_tokens_per_file": 3000, "file_token_budget": 7000, "match_budget": "none"}
    before = s.preview_compact(skip_hooks=True, policy=old_rule)
    assert _decision(before, "DESIGN.md").outcome == Outcome.DROPPED_OVER_CAP
