"""EndAgent: a sub-agent ends without its session (issue: the 256th StartAgent failed with
TOO_MANY_AGENTS, and closing a sub-agent's handle closed the whole session)."""

from __future__ import annotations

import shutil
from pathlib import Path

import grpc
import pytest
from postcompact_client import PostcompactError
from postcompact_client.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import RunningDaemon, new_session_id, short_dir, start_daemon


def test_sub_agents_end_and_free_their_slots(project: Path) -> None:
    d = start_daemon(config_toml="[limits]\nmax_agents_per_session = 4\n")
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("end"))
        for round_ in range(5):  # many more sub-agents over time than the limit holds at once
            subs = [s.start_agent(f"sub-{round_}-{i}") for i in range(3)]  # + main = 4
            with pytest.raises(PostcompactError) as exc:
                s.start_agent(f"one-too-many-{round_}")
            assert exc.value.reason == "TOO_MANY_AGENTS"
            for i, sub in enumerate(subs):
                sub.record_read("README.md", "# demo\n", timestamp_ms=1)
                ended = sub.end_agent()
                assert (ended.cached_entries, ended.agents) == (1, 4 - i - 1)
        info = {i.session_id: i for i in d.client.list_sessions()}[s.session_id]
        assert list(info.agent_ids) == [""]
        assert s.read_file("README.md").content  # the session and its main thread live on
    finally:
        d.stop()
        shutil.rmtree(d.dir, ignore_errors=True)


def test_closing_a_sub_agents_handle_ends_only_that_agent(
    daemon: RunningDaemon, project: Path
) -> None:
    s = daemon.client.open_session(str(project), session_id=new_session_id("handle"))
    sub = s.start_agent("worker")
    sub.record_skill("review", content="be careful")
    sub.close()
    info = {i.session_id: i for i in daemon.client.list_sessions()}[s.session_id]
    assert list(info.agent_ids) == [""]
    with pytest.raises(PostcompactError) as exc:
        sub.read_file("README.md")
    assert (exc.value.code, exc.value.reason) == (grpc.StatusCode.NOT_FOUND, "AGENT_NOT_FOUND")
    # Started again under the same id, it starts from nothing (no skill, no file state).
    again = s.start_agent("worker")
    resp = again.compact(skip_hooks=True)
    assert not [a for a in resp.attachments if a.invoked_skills is not None]
    s.close()
    assert s.session_id not in {i.session_id for i in daemon.client.list_sessions()}


def test_the_main_thread_and_unknown_agents_cannot_end(
    daemon: RunningDaemon, project: Path
) -> None:
    s = daemon.client.open_session(str(project), session_id=new_session_id("main"))
    with pytest.raises(PostcompactError) as exc:
        s.end_agent()
    assert (exc.value.code, exc.value.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "MAIN_AGENT")
    with pytest.raises(PostcompactError) as exc:
        s.agent("nobody").end_agent()
    assert (exc.value.code, exc.value.reason) == (grpc.StatusCode.NOT_FOUND, "AGENT_NOT_FOUND")


def test_an_ended_agent_stays_ended_after_a_restart(project: Path) -> None:
    base = short_dir("pce")
    d = start_daemon(runtime_dir=base)  # the same directory, so the same state database
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("restart"))
        keep, gone = s.start_agent("keep"), s.start_agent("gone")
        for sub in (keep, gone):
            sub.record_read("README.md", "# demo\n", timestamp_ms=1)
            sub.record_skill("review", content="x")
        gone.end_agent()
        sid = s.session_id
    finally:
        d.stop()
    d = start_daemon(runtime_dir=base)
    try:
        info = {i.session_id: i for i in d.client.list_sessions()}[sid]
        assert sorted(info.agent_ids) == ["", "keep"]
        assert info.cached_entries == 1
    finally:
        d.stop()
        shutil.rmtree(base, ignore_errors=True)


def test_end_agent_is_not_retried_once_sent() -> None:
    """A repeat of an EndAgent that was applied fails (NOT_FOUND): clients retry it only when it
    was never sent, like CloseSession."""
    from postcompact_client._retry import is_idempotent

    assert not is_idempotent("EndAgent", pb.EndAgentRequest(session_id="s", agent_id="a"))
