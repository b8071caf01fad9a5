"""The daemon as file-read backend: ReadFile numbering and dedup stub, CheckWrite, CheckStale,
sub-agent isolation and merge, skills."""

from __future__ import annotations

import os
from pathlib import Path

from postcompact_client import Session, pb
from postcompact_client.types import WriteCheck

from tests.daemon.conftest import RunningDaemon, evict_from_page_cache, new_session_id, set_mtime

STUB = (
    "File unchanged since last read. The content from the earlier Read tool_result in this "
    "conversation is still current — refer to that instead of re-reading."
)
# Claude Code's file-read reminder, which ends every Read result under the default policy.
MALWARE = (
    "\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be "
    "considered malware. You CAN and SHOULD provide analysis of malware, what it is doing. But "
    "you MUST refuse to improve or augment the code. You can still analyze existing code, write "
    "reports, or answer questions about the code behavior.\n</system-reminder>\n"
)
NOT_READ = "File has not been read yet. Read it first before writing to it."
MODIFIED = (
    "File has been modified since read, either by the user or by a linter. Read it again before "
    "attempting to write it."
)


def test_read_file_numbers_lines_and_records_state(session: Session, project: Path) -> None:
    r = session.read_file("docs/notes.txt")
    assert r.path == str(project / "docs/notes.txt")
    assert not r.unchanged
    assert r.text.decode() == "1\tone\n2\ttwo\n3\tthree\n4\tfour\n5\tfive" + MALWARE
    assert r.content == b"one\ntwo\nthree\nfour\nfive"
    assert (r.start_line, r.num_lines, r.total_lines) == (1, 5, 5)
    ranged = session.read_file("docs/notes.txt", offset=2, limit=2)
    assert ranged.text.decode() == "2\ttwo\n3\tthree" + MALWARE
    assert ranged.content == b"two\nthree"
    assert session.check_write("docs/notes.txt").result == WriteCheck.ALLOWED


def test_unchanged_stub_same_range_only(session: Session) -> None:
    first = session.read_file("src/a.py")
    assert not first.unchanged
    again = session.read_file("src/a.py")
    assert again.unchanged
    assert again.text.decode() == STUB
    assert again.content == b""
    assert not session.read_file("src/a.py", offset=2).unchanged
    assert session.read_file("src/a.py", offset=2).unchanged
    assert not session.read_file("src/a.py", offset=2, limit=1).unchanged


def test_no_stub_after_the_file_changed(session: Session, project: Path) -> None:
    session.read_file("src/b.py")
    (project / "src/b.py").write_text("print('changed')\n")
    set_mtime(project / "src/b.py", 4_000_000_000_000)
    r = session.read_file("src/b.py")
    assert not r.unchanged
    assert r.text.decode() == "1\tprint('changed')\n2\t" + MALWARE


def test_read_file_follows_the_malware_reminder_policy(
    daemon: RunningDaemon, project: Path
) -> None:
    off = pb.RestorePolicy(malware_reminder=False)
    s = daemon.client.open_session(str(project), session_id=new_session_id("mw"), policy=off)
    r = s.read_file("docs/notes.txt")
    assert r.text.decode() == "1\tone\n2\ttwo\n3\tthree\n4\tfour\n5\tfive"
    assert r.tokens == (len(r.text.decode()) + 2) // 4


def test_no_stub_for_a_partial_view_or_a_write(session: Session, project: Path) -> None:
    session.record_read("README.md", b"# demo", timestamp_ms=1, offset=1, partial_view=True)
    assert not session.read_file("README.md").unchanged
    session.record_write("src/a.py", (project / "src/a.py").read_bytes())
    assert not session.read_file("src/a.py").unchanged  # a write entry has no offset


def test_claude_code_2_1_88_profile_stores_mtime(daemon: RunningDaemon, project: Path) -> None:
    s = daemon.client.open_session(
        str(project), session_id=new_session_id(), profile="claude-code-2.1.88"
    )
    set_mtime(project / "src/a.py", 1_700_000_000_123)
    r = s.read_file("src/a.py")
    assert r.timestamp_ms == 1_700_000_000_123
    assert s.read_file("src/a.py").unchanged
    set_mtime(project / "src/a.py", 1_700_000_000_999)
    assert not s.read_file("src/a.py").unchanged


def test_claude_code_profile_stores_mtime_and_never_stubs(
    daemon: RunningDaemon, project: Path
) -> None:
    """Current Claude Code: the mtime is the timestamp, and a re-read of an unchanged file
    returns its text again (the "unchanged" stub is gone)."""
    s = daemon.client.open_session(str(project), session_id=new_session_id(), profile="claude-code")
    set_mtime(project / "src/a.py", 1_700_000_000_123)
    first = s.read_file("src/a.py")
    assert first.timestamp_ms == 1_700_000_000_123
    again = s.read_file("src/a.py")
    assert not again.unchanged
    assert again.text == first.text
    assert again.timestamp_ms == 1_700_000_000_123


def test_default_profile_stores_read_time(session: Session, project: Path) -> None:
    set_mtime(project / "src/a.py", 1_000_000)
    r = session.read_file("src/a.py")
    assert r.timestamp_ms > 1_000_000
    assert session.read_file("src/a.py").unchanged


def test_check_write_preconditions(session: Session, project: Path) -> None:
    not_read = session.check_write("src/a.py")
    assert (not_read.result, not_read.error_code, not_read.message) == (
        WriteCheck.NOT_READ,
        6,
        NOT_READ,
    )
    # a full read (no offset/limit) whose content still equals the disk: allowed despite mtime
    session.record_read("src/a.py", (project / "src/a.py").read_bytes(), timestamp_ms=1000)
    set_mtime(project / "src/a.py", 5000)
    assert session.check_write("src/a.py").result == WriteCheck.ALLOWED
    # a ranged read (offset 1) of a modified file: MODIFIED, even with equal content
    session.record_read(
        "src/b.py", (project / "src/b.py").read_bytes(), timestamp_ms=1000, offset=1
    )
    set_mtime(project / "src/b.py", 5000)
    modified = session.check_write("src/b.py")
    assert (modified.result, modified.error_code, modified.message) == (
        WriteCheck.MODIFIED,
        7,
        MODIFIED,
    )
    # a full read whose content differs from disk: MODIFIED
    session.record_read("README.md", b"old text", timestamp_ms=1000)
    set_mtime(project / "README.md", 5000)
    assert session.check_write("README.md").result == WriteCheck.MODIFIED
    # after the write is recorded, allowed again
    session.record_write("src/b.py", b"print('b')\n", timestamp_ms=5000)
    assert session.check_write("src/b.py").result == WriteCheck.ALLOWED
    # a partial view counts as not read
    session.record_read("docs/notes.txt", b"one", timestamp_ms=9_000_000_000_000, partial_view=True)
    assert session.check_write("docs/notes.txt").result == WriteCheck.NOT_READ
    # a new file may be written without a read
    assert session.check_write("src/new.py").result == WriteCheck.ALLOWED


def test_record_write_uses_the_file_mtime(session: Session, project: Path) -> None:
    set_mtime(project / "src/a.py", 1_650_000_000_000)
    session.record_write("src/a.py", (project / "src/a.py").read_bytes())
    assert session.check_write("src/a.py").result == WriteCheck.ALLOWED
    (project / "src/a.py").write_text("changed\n")
    set_mtime(project / "src/a.py", 1_650_000_000_001)
    assert session.check_write("src/a.py").result == WriteCheck.MODIFIED


def test_stale_hint(session: Session, project: Path) -> None:
    names = [f"f{i}.py" for i in range(7)]
    for n in names:
        (project / n).write_text(n)
        session.record_read(n, n, timestamp_ms=1000, offset=1)
    for n in names:
        set_mtime(project / n, 9000 if n != names[6] else 500)
    r = session.check_stale(command="ruff format .", started_at_ms=2000)
    assert sorted(r.stale_paths) == sorted(str(project / n) for n in names[:6])
    shown = [os.path.relpath(p, project) for p in r.stale_paths[:5]]
    assert r.hint == (
        f"[This command modified 6 files you've previously read: {', '.join(shown)} and 1 more. "
        "Call Read before editing.]"
    )
    unrelated = session.check_stale(command="ls -la")
    assert len(unrelated.stale_paths) == 6
    assert unrelated.hint == ""
    assert (
        session.check_stale(command="npx prettier --write .", started_at_ms=9000).stale_paths == ()
    )


def test_stale_hint_single_file(session: Session, project: Path) -> None:
    session.record_read("src/a.py", "alpha", timestamp_ms=1000, offset=1)
    set_mtime(project / "src/a.py", 9000)
    r = session.check_stale(command="cargo fmt")
    assert r.hint == (
        "[This command modified 1 file you've previously read: src/a.py. Call Read before editing.]"
    )


def test_sub_agents_fresh_clone_and_merge(session: Session, project: Path) -> None:
    session.record_read("src/a.py", "alpha", timestamp_ms=100, offset=1)
    fresh = session.start_agent("fresh", "fresh")
    forked = session.start_agent("forked", "clone_parent")
    assert fresh.check_write("src/a.py").result == WriteCheck.NOT_READ
    set_mtime(project / "src/a.py", 50)
    assert forked.check_write("src/a.py").result == WriteCheck.ALLOWED
    # the fork's later reads do not leak into the parent
    forked.record_read("src/b.py", "b", timestamp_ms=300, offset=1)
    set_mtime(project / "src/b.py", 50)
    assert session.check_write("src/b.py").result == WriteCheck.NOT_READ
    # merge: strictly newer wins, missing entries are added
    fresh.record_read("src/a.py", "older", timestamp_ms=90, offset=1)
    fresh.record_read("README.md", "r", timestamp_ms=500, offset=1)
    merged = session.merge_file_state("fresh")
    assert (merged.merged, merged.kept) == (1, 1)
    set_mtime(project / "README.md", 50)
    assert session.check_write("README.md").result == WriteCheck.ALLOWED
    merged = session.merge_file_state("forked")
    assert (merged.merged, merged.kept) == (1, 2)
    stats = {s.session_id: s for s in session.client.list_sessions()}[session.session_id]
    assert sorted(stats.agent_ids) == ["", "forked", "fresh"]


def test_skills_overwrite_by_name(session: Session) -> None:
    assert session.record_skill("review", path="/s/review.md", content="v1") == 1
    assert session.record_skill("lint", path="/s/lint.md", content="x") == 2
    assert session.record_skill("review", path="/s/review.md", content="v2") == 2
    sub = session.start_agent("sub")
    assert sub.record_skill("other", content="y") == 1  # per agent


def test_plan_mode_and_tasks(session: Session, project: Path) -> None:
    assert session.set_plan("plan.md") == str(project / "plan.md")
    default = session.set_plan("")  # the default plan file, in the plans directory
    assert default.endswith(".md")
    assert default != str(project / "plan.md")
    session.set_mode("plan")
    session.upsert_task({"task_id": "t1", "task_type": "local_agent", "status": "running"})
    session.upsert_task({"task_id": "t1", "task_type": "local_agent", "status": "completed"})


def test_reads_that_would_wait_for_the_disk_still_answer(session: Session, project: Path) -> None:
    """A file whose pages are not in the page cache is read on a worker thread (the event loop
    only reads cached bytes): whole, ranged, and re-read by Compact (the range last read, under
    the default profile), the answer is the same."""
    body = b"".join(b"cold line %d\n" % i for i in range(1200))  # within the per-file cap
    cold = project / "cold.txt"
    cold.write_bytes(body)
    evict_from_page_cache(cold)
    whole = session.read_file("cold.txt")
    assert (whole.content, whole.total_lines) == (body, 1201)
    evict_from_page_cache(cold)
    ranged = session.read_file("cold.txt", offset=1190, limit=5)
    assert ranged.content == b"".join(b"cold line %d\n" % i for i in range(1189, 1194)).rstrip()
    evict_from_page_cache(cold)
    resp = session.compact(include_content=True)
    restored = {a.file.path: a.file.content for a in resp.attachments if a.file is not None}
    assert restored[str(cold)] == ranged.content
