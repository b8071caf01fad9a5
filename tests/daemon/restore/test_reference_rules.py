"""Reference rules at their edges, through the real daemon: a change in the same clock tick as
the read is still a change (docs/claude-code.md §4); a re-read answered with the stub still
counts as a read for restoration under the default profile (docs/profiles.md); plan mode without
SetPlan names the plan file Claude Code's layout gives (docs/claude-code.md §8)."""

from __future__ import annotations

import os
import re
from pathlib import Path

from postcompact_client.types import AttachmentKind, PlanFileReference, WriteCheck

from tests.daemon.conftest import RunningDaemon, file_of, new_session_id, payload_of, text_of


def test_a_change_in_the_same_tick_as_the_read_is_seen(
    daemon: RunningDaemon, project: Path
) -> None:
    """Default profile: the entry's timestamp is the read time. A write landing in the same
    millisecond (mtimes are coarse) has an mtime no later than it; CheckWrite and CheckStale
    must still see it, from the mtime the read saw."""
    s = daemon.client.open_session(str(project), session_id=new_session_id("tick"))
    read = s.read_file("src/a.py")
    target = project / "src" / "a.py"
    target.write_text("alpha = 100\n")
    ns = read.timestamp_ms * 1_000_000  # the file's new mtime: the very millisecond of the read
    os.utime(target, ns=(ns, ns))
    check = s.check_write("src/a.py")
    assert check.result == WriteCheck.MODIFIED
    assert check.error_code == 7
    stale = s.check_stale(command="black .")
    assert stale.stale_paths == (str(target),)
    assert stale.hint


def test_an_unchanged_re_read_counts_for_restoration(daemon: RunningDaemon, project: Path) -> None:
    s = daemon.client.open_session(
        str(project),
        session_id=new_session_id("reread"),
        policy={"max_files": 1, "ranking": "recency"},
    )
    s.read_file("src/a.py")
    s.read_file("src/b.py")
    again = s.read_file("src/a.py")
    assert again.unchanged
    resp = s.preview_compact(skip_hooks=True)
    files = [file_of(a).path for a in resp.attachments if a.kind == AttachmentKind.FILE]
    assert files == [str(project / "src" / "a.py")]
    assert s.read_file("src/a.py").unchanged  # and the entry still answers the stub


def test_plan_mode_without_set_plan_names_a_plan_file(daemon: RunningDaemon, project: Path) -> None:
    plans = project / "plans"
    s = daemon.client.open_session(
        str(project), session_id=new_session_id("plan"), plans_directory=str(plans)
    )
    s.set_mode("plan")

    def plan_mode_text() -> str:
        resp = s.preview_compact(skip_hooks=True)
        (att,) = [a for a in resp.attachments if a.kind == AttachmentKind.PLAN_MODE]
        return text_of(att)

    text = plan_mode_text()
    found = re.search(r"create your plan at (\S+\.md) using the Write tool", text)
    assert found, text
    path = Path(found.group(1))
    assert path.parent == plans
    assert re.fullmatch(r"plan-[0-9a-f]{12}\.md", path.name)
    assert plan_mode_text() == text  # the same file at every compaction

    # The agent writes its plan there: the next compaction restores it as the plan.
    plans.mkdir()
    path.write_text("# Plan\n\n1. refactor\n")
    resp = s.compact(skip_hooks=True)
    plan = [a for a in resp.attachments if a.kind == AttachmentKind.PLAN_FILE_REFERENCE]
    assert plan
    assert payload_of(plan[0], PlanFileReference).plan_file_path == str(path)
    assert "1. refactor" in text_of(plan[0])

    sub = s.start_agent("helper/1")
    sub.set_mode("plan")
    preview = sub.preview_compact(skip_hooks=True)
    (att,) = [a for a in preview.attachments if a.kind == AttachmentKind.PLAN_MODE]
    sub_path = re.search(r"(\S+-agent-[0-9a-f]{12}\.md)", text_of(att))
    assert sub_path, text_of(att)  # an agent id that is not a plain name is hashed
    assert Path(sub_path.group(1)).parent == plans
