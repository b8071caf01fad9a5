"""Compact end to end: a daemon subprocess on a Unix socket, driven by the Python client."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from postcompact import render
from postcompact_client import Session, rendered_text
from postcompact_client.types import (
    AttachmentKind,
    CompactResponse,
    Decision,
    DeferredToolsDelta,
    InvokedSkills,
    Outcome,
    Subject,
)
from postcompact_client.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import (
    V1_POLICY,
    RunningDaemon,
    file_of,
    new_session_id,
    payload_of,
    short_dir,
    start_daemon,
    text_of,
)

EIGHT = [
    "src/utils/format.ts",
    "tests/unit/format.test.ts",
    "src/types/index.ts",
    "README.md",
    "src/config/default.ts",
    "src/utils/validation.ts",
    "CONTRIBUTING.md",
    ".eslintrc.js",
]


def _write(root: Path, rel: str, text: str) -> str:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return str(p)


def _decision(resp: CompactResponse, suffix: str) -> Decision:
    (d,) = [d for d in resp.decisions if d.name.endswith(suffix)]
    return d


def test_design_chapter_example(daemon: RunningDaemon, project: Path) -> None:
    """The design chapter's example: 4 files all restored; 8 files → the 5 newest; re-reading
    format.ts puts it first."""
    for rel in EIGHT:
        _write(project, rel, f"// {rel}\nexport {{}};\n")
    # Claude Code's file rule (V1_POLICY): the chapter's example is about it.
    four = daemon.client.open_session(
        str(project), session_id=new_session_id("four"), policy=V1_POLICY
    )
    for rel in EIGHT[:4]:
        four.read_file(rel)
    resp = four.compact()
    assert [file_of(a).display_path for a in resp.attachments] == list(reversed(EIGHT[:4]))
    assert resp.compaction == 1

    eight = daemon.client.open_session(
        str(project), session_id=new_session_id("eight"), policy=V1_POLICY
    )
    for rel in EIGHT:
        eight.read_file(rel)
    preview = eight.preview_compact()
    assert [file_of(a).display_path for a in preview.attachments] == [
        ".eslintrc.js",
        "CONTRIBUTING.md",
        "src/utils/validation.ts",
        "src/config/default.ts",
        "README.md",
    ]
    (fmt,) = [d for d in preview.decisions if d.name.endswith("format.ts")]
    assert fmt.outcome == Outcome.DROPPED_BY_RANK
    eight.read_file("src/utils/format.ts", offset=1, limit=1000)  # re-read: a new timestamp
    resp = eight.compact()
    assert file_of(resp.attachments[0]).display_path == "src/utils/format.ts"
    assert _decision(resp, "README.md").outcome == Outcome.DROPPED_BY_RANK
    # Restored files are in the cache again: reading one unchanged returns the stub.
    again = eight.read_file("src/utils/format.ts")
    assert again.unchanged
    assert again.text.decode() == render.FILE_UNCHANGED_STUB


def test_partial_compaction_tail_visibility(session: Session, project: Path) -> None:
    session.read_file("src/a.py")
    session.read_file("src/b.py")
    session.read_file("README.md")
    tail = [
        pb.ConversationMessage(
            role=pb.ROLE_ASSISTANT,
            content=[
                pb.ContentBlock(
                    tool_use=pb.ToolUse(
                        id="u1", name="Read", input_json=json.dumps({"file_path": "src/a.py"})
                    )
                ),
                pb.ContentBlock(
                    tool_use=pb.ToolUse(
                        id="u2", name="Read", input_json=json.dumps({"file_path": "src/b.py"})
                    )
                ),
            ],
        ),
        pb.ConversationMessage(
            role=pb.ROLE_USER,
            content=[
                pb.ContentBlock(tool_result=pb.ToolResult(tool_use_id="u1", content=b"1\talpha")),
                pb.ContentBlock(
                    tool_result=pb.ToolResult(
                        tool_use_id="u2", content=render.FILE_UNCHANGED_STUB.encode()
                    )
                ),
            ],
        ),
    ]
    resp = session.compact(kind=pb.COMPACT_KIND_PARTIAL, preserved_messages=tail)
    assert sorted(file_of(a).display_path for a in resp.attachments) == ["README.md", "src/b.py"]
    assert _decision(resp, "src/a.py").outcome == Outcome.EXCLUDED_VISIBLE_IN_TAIL
    text = rendered_text(resp)
    assert "<system-reminder>\nCalled the Read tool with the following input: " in text
    assert "1\tprint('b')\n2\t" in text


def test_each_restored_byte_crosses_the_socket_once(session: Session, project: Path) -> None:
    """By default a file's text is only in its rendered_text: no raw copy, no joined copy."""
    marker = "UNIQUE-MARKER-7f3a"
    _write(project, "src/m.py", f"x = '{marker}'\n")
    session.read_file("src/m.py")
    session.set_plan(_write(project, "plan.md", f"plan {marker}\n"))
    session.record_skill("s", content=f"skill {marker}")
    for lean, full in (
        (session.preview_compact(), session.preview_compact(include_content=True)),
        (session.compact(), session.preview_compact(include_content=True)),
    ):
        # As the daemon sent them (to_pb() gives back the message decoded).
        assert lean.to_pb().SerializeToString().count(marker.encode()) == 3  # file, plan, skill
        assert full.to_pb().SerializeToString().count(marker.encode()) == 6  # and each raw copy
        assert rendered_text(lean) == rendered_text(full)
        assert rendered_text(lean).count(marker) == 3
        (f,) = [a.file for a in full.attachments if a.file is not None]
        assert f.content == f"x = '{marker}'\n".encode()


def test_skills_plan_tasks_and_deltas(session: Session, project: Path) -> None:
    session.record_skill("commit", path="/skills/commit/SKILL.md", content="Always run tests.")
    big = "x" * 30000
    session.record_skill("review", path="/skills/review/SKILL.md", content=big)
    sub = session.start_agent("helper")
    sub.record_skill("secret-sub-skill", content="not for main")
    session.upsert_task(
        pb.Task(
            task_id="t1",
            task_type="local_agent",
            description="index repo",
            status=pb.TASK_STATUS_RUNNING,
            output_file_path="/tmp/t1.output",
        )
    )
    listed = session.set_catalog(
        deferred_tools=["mcp__gh__pr", "mcp__gh__issue"],
        agent_types=[{"agent_type": "Explore", "when_to_use": "search the code"}],
        show_concurrency_note=True,
        mcp_servers={"gh": "Prefer gh over the web UI."},
        skill_listing=[("commit", "Make a commit")],
    )
    assert [a.kind for a in listed] == [
        AttachmentKind.DEFERRED_TOOLS_DELTA,
        AttachmentKind.AGENT_LISTING_DELTA,
        AttachmentKind.MCP_INSTRUCTIONS_DELTA,
        AttachmentKind.SKILL_LISTING,
    ]
    assert session.set_catalog(deferred_tools=["mcp__gh__pr", "mcp__gh__issue"]) == []

    resp = session.compact(skip_hooks=True)
    assert [a.kind for a in resp.attachments] == [
        AttachmentKind.TASK_STATUS,
        AttachmentKind.INVOKED_SKILLS,
        AttachmentKind.DEFERRED_TOOLS_DELTA,
        AttachmentKind.AGENT_LISTING_DELTA,
        AttachmentKind.MCP_INSTRUCTIONS_DELTA,
    ]
    tasks, skills, tools, agents, mcp = resp.attachments
    assert text_of(tasks).startswith(
        '<system-reminder>\nBackground agent "index repo" (t1) is still running.'
    )
    invoked = payload_of(skills, InvokedSkills).skills
    assert [s.name for s in invoked] == ["review", "commit"]
    assert invoked[0].content == b""  # the text is in rendered_text only
    assert render.SKILL_TRUNCATION_MARKER in text_of(skills)
    full = session.preview_compact(skip_hooks=True, include_content=True)
    content = payload_of(full.attachments[1], InvokedSkills).skills[0].content.decode()
    assert content.endswith(render.SKILL_TRUNCATION_MARKER)
    assert "secret-sub-skill" not in rendered_text(resp)
    added = payload_of(tools, DeferredToolsDelta).added_names
    assert added == ("mcp__gh__issue", "mcp__gh__pr")
    assert text_of(agents) == (
        "<system-reminder>\nAvailable agent types for the Agent tool:\n"
        "- Explore: search the code (Tools: All tools)\n\n"
        "Launch multiple agents concurrently whenever possible, to maximize performance; to do "
        "that, use a single message with multiple tool uses.\n</system-reminder>"
    )
    assert text_of(mcp) == render.wrap_system_reminder(
        render.mcp_instructions_delta(["## gh\nPrefer gh over the web UI."], [])
    )
    # The catalogue was re-announced by the compaction: nothing pending now.
    assert session.set_catalog(deferred_tools=["mcp__gh__pr", "mcp__gh__issue"]) == []
    totals = {t.category: t for t in resp.totals}
    assert totals["deltas"].attachments == 3
    assert totals["skills"].tokens == skills.tokens


def test_hooks_from_config(project: Path) -> None:
    base = short_dir("pch")
    config = (
        "[[hooks.session_start]]\n"
        "command = \"printf '%s' '{\\\"hookSpecificOutput\\\": "
        '{\\"additionalContext\\": \\"remember the invariants\\"}}\'"\n'
        "[[hooks.session_start]]\n"
        'command = "exit 7"\n'
        "[[hooks.session_start]]\n"
        'command = "sleep 30"\n'
        "timeout_s = 0.3\n"
    )
    d = start_daemon(config_toml=config, runtime_dir=base)
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("hooks"))
        resp = s.compact(additional_context=["and this"])
        (att,) = resp.attachments
        assert text_of(att) == (
            "<system-reminder>\nSessionStart hook additional context: remember the invariants\n"
            "and this\n</system-reminder>"
        )
        outcomes = [d.outcome for d in resp.decisions if d.subject == Subject.HOOK]
        assert outcomes == [
            Outcome.HOOK_OK,
            Outcome.HOOK_FAILED,
            Outcome.HOOK_TIMED_OUT,
        ]
        assert resp.compaction == 1
    finally:
        d.stop()
        shutil.rmtree(base, ignore_errors=True)
