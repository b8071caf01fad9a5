"""Resuming a session never drops a setting without a word (the harness author's two-process
test: the second process's roots and plans directory were ignored, and its SetPlan then failed).
A setting stated on resume must be the session's, or the open is refused naming it; one left out
is the session's; and a session can be joined by its id alone (attach)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest
from postcompact_client import Client, PostcompactError

from tests.daemon.conftest import RunningDaemon, new_session_id, short_dir


def _second(daemon: RunningDaemon) -> Client:
    """Another process's client: its own connection to the same daemon."""
    return Client(f"unix://{daemon.socket_path}", auto_start=False, timeout=30.0)


def _refused(call: object, *args: object, **kw: object) -> PostcompactError:
    with pytest.raises(PostcompactError) as exc:
        call(*args, **kw)  # type: ignore[operator]
    return exc.value


def test_settings_restated_on_resume_must_be_the_sessions(
    daemon: RunningDaemon, project: Path
) -> None:
    plans, home = short_dir("pcpl"), short_dir("pchm")
    (project / "src").mkdir(exist_ok=True)
    sid = new_session_id("resume")
    first = daemon.client.open_session(
        str(project),
        session_id=sid,
        roots=[".", str(plans)],
        plans_directory=str(plans),
        policy={"max_files": 3},
        profile="claude-code",
        home=str(home),
    )
    other = _second(daemon)
    try:
        # The same settings, restated (roots in another order): resumed.
        same = other.open_session(
            str(project),
            session_id=sid,
            roots=[str(plans), "."],
            plans_directory=str(plans),
            policy={"max_files": 3},
            profile="claude-code",
            home=str(home),
        )
        assert same.resumed
        # Left out: the session's.
        assert other.open_session(str(project), session_id=sid).resumed
        # Each setting that differs is refused, and named.
        cases: dict[str, dict[str, Any]] = {
            "roots": {"roots": ["src"]},
            "plans_directory": {"plans_directory": str(project / "plans")},
            "policy": {"policy": {"max_files": 9}},
            "profile": {"profile": "default"},
            "home": {"home": str(project)},
            "memory": {"memory_file_names": ["AGENTS.md"]},
        }
        for field, kw in cases.items():
            e = _refused(other.open_session, str(project), session_id=sid, **kw)
            assert (e.code, e.reason) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "SESSION_SETTINGS_MISMATCH",
            )
            assert e.metadata["fields"] == field, (field, e.metadata)
            assert field.split("_")[0] in e.message
        e = _refused(
            other.open_session, str(project), session_id=sid, roots=["src"], profile="default"
        )
        assert e.metadata["fields"] == "roots,profile"
        e = _refused(other.open_session, str(project / "src"), session_id=sid)
        assert (e.reason, e.metadata["fields"]) == ("SESSION_CWD_MISMATCH", "cwd")
        # Nothing refused changed the session.
        info = {i.session_id: i for i in daemon.client.list_sessions()}[sid]
        assert sorted(info.roots) == sorted([str(project), str(plans)])
        assert first.compact(skip_hooks=True).compaction == 1  # still max_files 3, claude-code
    finally:
        other.close()


def test_a_second_process_joins_by_id_and_works_with_the_sessions_settings(
    daemon: RunningDaemon, project: Path
) -> None:
    plans = short_dir("pcpj")
    sid = new_session_id("attach")
    daemon.client.open_session(str(project), session_id=sid, plans_directory=str(plans))
    other = _second(daemon)
    try:
        joined = other.attach_session(sid)
        assert joined.resumed
        assert joined.info is not None
        assert joined.info.cwd == str(project)
        # The plans directory is the session's: the second process's SetPlan there works.
        plan = plans / "shared.md"
        plan.write_text("# Shared plan\n")
        assert joined.set_plan(str(plan)) == str(plan)
        assert joined.read_file(str(plan)).content == b"# Shared plan\n"
        e = _refused(other.attach_session, new_session_id("nobody"))
        assert (e.code, e.reason) == (grpc.StatusCode.NOT_FOUND, "SESSION_NOT_FOUND")
    finally:
        other.close()
