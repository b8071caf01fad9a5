"""Sessions: create, resume, list, close, stats."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from postcompact_client import PostcompactError
from postcompact_client.types import Profile

from tests.daemon.conftest import RunningDaemon, new_session_id


def test_open_creates_an_id_and_resumes(daemon: RunningDaemon, project: Path) -> None:
    s = daemon.client.open_session(str(project))
    assert s.session_id
    assert not s.resumed
    assert s.info is not None
    assert s.info.cwd == str(project)
    assert list(s.info.roots) == [str(project)]
    assert list(s.info.agent_ids) == [""]
    assert s.info.profile == Profile.DEFAULT
    again = daemon.client.open_session(str(project), session_id=s.session_id)
    assert again.resumed
    assert again.session_id == s.session_id
    s.close()


def test_roots_relative_to_cwd_and_profile(daemon: RunningDaemon, project: Path) -> None:
    s = daemon.client.open_session(
        str(project), session_id=new_session_id(), roots=["src", "/opt/x"], profile="claude-code"
    )
    assert s.info is not None
    assert list(s.info.roots) == [str(project / "src"), "/opt/x"]
    assert s.info.profile == Profile.CLAUDE_CODE
    with pytest.raises(PostcompactError) as err:
        s.read_file("README.md")  # cwd itself is not a root here
    assert err.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert err.value.reason == "PATH_OUTSIDE_ROOTS"
    assert s.read_file("src/a.py").total_lines == 4


def test_memory_files_are_readable_outside_roots(daemon: RunningDaemon, project: Path) -> None:
    home = project / "home"
    (home / ".claude").mkdir(parents=True)
    s = daemon.client.open_session(
        str(project / "src"), session_id=new_session_id(), home=str(home)
    )
    # the default user memory file ~/.claude/CLAUDE.md may be recorded although outside the roots
    assert s.record_read("~/.claude/CLAUDE.md", "rules", timestamp_ms=1) == str(
        home / ".claude" / "CLAUDE.md"
    )
    with pytest.raises(PostcompactError) as err:
        s.record_read("~/.claude/other.md", "x", timestamp_ms=1)
    assert err.value.reason == "PATH_OUTSIDE_ROOTS"


def test_list_close_and_stats(daemon: RunningDaemon, project: Path) -> None:
    sid = new_session_id()
    s = daemon.client.open_session(str(project), session_id=sid)
    s.read_file("src/a.py")
    s.start_agent("helper").read_file("README.md")
    infos = {i.session_id: i for i in daemon.client.list_sessions()}
    assert infos[sid].cached_entries == 2
    assert infos[sid].cached_bytes == len(b"alpha = 1\nbeta = 2\ngamma = 3\n") + len(
        b"# demo\n\nhello\n"
    )
    stats = daemon.client.stats()
    assert stats.sessions >= 1
    assert stats.agents >= 2
    assert stats.cached_entries >= 2
    assert stats.uptime_ms >= 0
    s.close()
    assert sid not in {i.session_id for i in daemon.client.list_sessions()}
    with pytest.raises(PostcompactError) as err:
        s.read_file("src/a.py")
    assert err.value.code == grpc.StatusCode.NOT_FOUND
    assert err.value.reason == "SESSION_NOT_FOUND"
    assert err.value.metadata == {"session_id": sid}


def test_compaction_count(daemon: RunningDaemon, project: Path) -> None:
    s = daemon.client.open_session(str(project), session_id=new_session_id())
    s.read_file("src/a.py")
    preview = s.preview_compact()
    assert preview.compaction == 0
    first = s.compact()
    assert first.compaction == 1
    assert [a.file.path for a in first.attachments if a.file is not None] == [
        str(project / "src/a.py")
    ]
    infos = {i.session_id: i for i in daemon.client.list_sessions()}
    assert infos[s.session_id].compactions == 1
