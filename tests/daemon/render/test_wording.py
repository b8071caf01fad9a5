"""The wording can be changed, and need not name Claude Code's tools (docs/profiles.md,
"Wording"): a `[templates]` section, per-session templates, the `neutral` preset, and the read
tool's name and path key for the kept tail and the restored Read call."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import grpc
import pytest
from postcompact import render
from postcompact_client import PostcompactError
from postcompact_client.types import CompactResponse, Outcome
from postcompact_client.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import RunningDaemon, new_session_id, short_dir, start_daemon

# Names of Claude Code's tools as its wording uses them.
CLAUDE_TOOLS = re.compile(
    r"\bRead tool\b|\bRead on\b|Read tool_result|\bEdit tool\b|\bWrite tool\b|TaskOutput|"
    r"SendMessage|TaskStop|ToolSearch|ExitPlanMode|Skill tool|Agent tool|\bCall Read\b"
)


def test_the_neutral_preset_names_no_claude_code_tool() -> None:
    for f in dataclasses.fields(render.Templates):
        text = getattr(render.NEUTRAL_TEMPLATES, f.name)
        assert not CLAUDE_TOOLS.search(text), (f.name, text)
    # ...while the default wording does (the check would see them).
    assert CLAUDE_TOOLS.search(render.DEFAULT_TEMPLATES.read_call)


def _restored_call(resp: CompactResponse) -> str:
    (att,) = [a for a in resp.attachments if a.file is not None]
    return att.blocks[0]


def test_a_config_preset_applies_to_every_session(project: Path) -> None:
    d = start_daemon(config_toml='[templates]\npreset = "neutral"\n')
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("neutral"))
        s.read_file("README.md")
        call = _restored_call(s.compact(skip_hooks=True))
        assert call.startswith("<system-reminder>\nA file read before the conversation")
        assert f'{{"filePath":"{project / "README.md"}"}}' in call
        assert not CLAUDE_TOOLS.search(call)
    finally:
        d.stop()
        shutil.rmtree(d.dir, ignore_errors=True)


def test_a_session_has_its_own_wording_kept_across_a_restart(project: Path) -> None:
    base = short_dir("pcw")
    d = start_daemon(runtime_dir=base)
    sid = new_session_id("own")
    wording = {"preset": "neutral", "read_call": "Again: {input_json}"}
    try:
        s = d.client.open_session(str(project), session_id=sid, templates=wording)
        s.read_file("README.md")
        assert _restored_call(s.compact(skip_hooks=True)).startswith("<system-reminder>\nAgain: {")
        other = d.client.open_session(str(project), session_id=new_session_id("plain"))
        other.read_file("README.md")
        assert "Called the Read tool" in _restored_call(other.compact(skip_hooks=True))
        # Restated differently on resume: refused, named.
        with pytest.raises(PostcompactError) as exc:
            d.client.open_session(str(project), session_id=sid, templates={"preset": "neutral"})
        assert exc.value.metadata["fields"] == "templates"
        assert d.client.open_session(str(project), session_id=sid, templates=wording).resumed
    finally:
        d.stop()
    d = start_daemon(runtime_dir=base)
    try:
        s = d.client.attach_session(sid)
        assert _restored_call(s.compact(skip_hooks=True)).startswith("<system-reminder>\nAgain: {")
    finally:
        d.stop()
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize(
    ("templates", "needle"),
    [
        ({"read_call": "{filename}"}, "allowed placeholders"),
        ({"no_such_template": "x"}, "unknown template"),
        ({"preset": "shakespeare"}, "unknown template preset"),
    ],
)
def test_bad_session_templates_are_refused(
    daemon: RunningDaemon, project: Path, templates: dict[str, str], needle: str
) -> None:
    with pytest.raises(PostcompactError) as exc:
        daemon.client.open_session(
            str(project), session_id=new_session_id("bad"), templates=templates
        )
    assert (exc.value.code, exc.value.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_TEMPLATES")
    assert needle in exc.value.message


def _tail(tool: str, key: str, path: Path) -> list[pb.ConversationMessage]:
    use = pb.ToolUse(id="t1", name=tool, input_json=json.dumps({key: str(path)}))
    result = pb.ToolResult(tool_use_id="t1", content=b"1\thello\n")
    return [
        pb.ConversationMessage(role=pb.ROLE_ASSISTANT, content=[pb.ContentBlock(tool_use=use)]),
        pb.ConversationMessage(role=pb.ROLE_USER, content=[pb.ContentBlock(tool_result=result)]),
    ]


def test_the_kept_tail_is_read_with_the_harness_tool_names(
    daemon: RunningDaemon, project: Path
) -> None:
    """OpenCode's read tool is `read` with `filePath`: under those templates a read still
    visible in the kept tail is not restored again; under Claude Code's it is not recognised."""
    readme = project / "README.md"
    tail = _tail("read", "filePath", readme)
    opencode = daemon.client.open_session(
        str(project),
        session_id=new_session_id("oc"),
        templates={"read_tool_name": "read", "read_path_key": "filePath"},
    )
    claude = daemon.client.open_session(str(project), session_id=new_session_id("cc"))
    outcomes = {}
    for name, s in (("opencode", opencode), ("claude", claude)):
        s.read_file("README.md")
        resp = s.compact(kind="partial", preserved_messages=tail, skip_hooks=True)
        (d,) = [d for d in resp.decisions if d.name == str(readme)]
        outcomes[name] = d.outcome
    assert outcomes == {
        "opencode": Outcome.EXCLUDED_VISIBLE_IN_TAIL,
        "claude": Outcome.RESTORED,
    }
