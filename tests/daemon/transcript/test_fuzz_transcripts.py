"""Hypothesis fuzz of the transcript parser, structure-aware (issue 37 part 1): transcripts made of
the records the parser reads (tool uses and their results, prompts, meta and command records,
attachments, compaction boundaries with preserved segments), their values drawn odd (NUL and lone
surrogates, paths over PATH_MAX, negative and huge integers, wrong types, malformed size and token
claims, uuid cycles and repeats).

In process, `parse` either returns or raises TranscriptError, and a replay of what it returns
raises nothing but a named refusal; over the real daemon, ImportTranscript never answers INTERNAL
or UNKNOWN and always carries a reason. Deterministic (`derandomize`); POSTCOMPACT_FUZZ_EXAMPLES
sets the number of examples (default 50).
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from postcompact.errors import PostcompactError
from postcompact.transcript.disk import DiskBudgetExceeded
from postcompact.transcript.parse import TranscriptError, parse
from postcompact.transcript.replay import replay
from postcompact_client import PostcompactError as ClientError

from tests.daemon.conftest import RunningDaemon, new_session_id

EXAMPLES = int(os.environ.get("POSTCOMPACT_FUZZ_EXAMPLES", "50"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
CWD = "/orig/app"
FORBIDDEN = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)

odd_text = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["", "\x00", "\ud800", "a\udfffb", "\x7f", "é", "😀", "../..", " " * 3]),
)
odd_int = st.one_of(
    st.integers(-5, 50),
    st.sampled_from([-(2**70), -1, 0, 1, 2**31, 2**63, 2**70, 10**30]),
)
odd_scalar = st.one_of(st.none(), st.booleans(), odd_int, odd_text, st.floats(allow_nan=False))
odd = st.recursive(
    odd_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(odd_text, inner, max_size=3)
    ),
    max_leaves=6,
)
paths = st.one_of(
    st.sampled_from(
        [
            f"{CWD}/a.ts",
            f"{CWD}/src/b.py",
            f"{CWD}/a\x00.ts",
            f"{CWD}/\ud800.ts",
            f"{CWD}/" + "p" * 5000,
            f"{CWD}/" + "n" * 300,
            "relative/x.ts",
            "C:\\Users\\u\\x.ts",
            "/",
            "",
            "/home/u/.claude/plans/p.md",
        ]
    ),
    odd,
)
# Mostly good ids (a bad one ends the parse at once, and the fuzz should get deep), some bad.
uuids = st.sampled_from(["u1", "u2", "u3", "u4", ""] * 8 + ["\ud800"])
tool_ids = st.sampled_from(["t1", "t2", "t3", "t\ud800"])
tools = st.sampled_from(
    [
        "Read",
        "Edit",
        "MultiEdit",
        "Write",
        "NotebookEdit",
        "Bash",
        "Agent",
        "TaskOutput",
        "KillShell",
        "ExitPlanMode",
        "Skill",
    ]
)
claims = st.sampled_from(
    [
        "File does not exist.",
        "File content (3.1MB) exceeds maximum allowed size (256KB).",
        "File content (1.2.3MB) exceeds maximum allowed size (256KB).",
        "File content (1e400GB) exceeds maximum allowed size (256KB).",
        "File content (1000GB) exceeds maximum allowed size (256KB).",
        f"File content ({'9' * 500} tokens) exceeds maximum allowed tokens (25000).",
        "File content (40000 tokens) exceeds maximum allowed tokens (25000).",
        "Command running in background with ID: b1. Output is being written to: /tmp/b1.output.",
    ]
)


@st.composite
def tool_input(draw: st.DrawFn) -> dict[str, Any]:
    inp: dict[str, Any] = {"file_path": draw(paths)}
    for key in ("offset", "limit", "content", "old_string", "new_string", "edits", "skill"):
        if draw(st.booleans()):
            inp[key] = draw(st.one_of(odd_int, odd))
    if draw(st.booleans()):
        inp["run_in_background"] = draw(st.one_of(st.just(True), odd))
    return inp


@st.composite
def tool_result_value(draw: st.DrawFn) -> Any:
    file = {
        "filePath": draw(paths),
        "content": draw(st.one_of(st.text(max_size=30), odd)),
        "numLines": draw(st.one_of(odd_int, odd)),
        "startLine": draw(st.one_of(odd_int, odd)),
        "totalLines": draw(st.one_of(odd_int, st.just(10**9), odd)),
    }
    return draw(
        st.one_of(
            st.fixed_dictionaries({"type": st.just("text"), "file": st.just(file)}),
            st.just({"type": "file_unchanged"}),
            st.fixed_dictionaries(
                {
                    "originalFile": st.one_of(st.text(max_size=20), odd),
                    "structuredPatch": st.one_of(
                        st.just([{"newStart": 2**70, "lines": ["+a"]}]),
                        st.just([{"newStart": 1, "lines": ["+a", " b", "-c"]}]),
                        odd,
                    ),
                }
            ),
            st.fixed_dictionaries(
                {"status": st.just("async_launched"), "agentId": odd_text, "task": odd}
            ),
            claims,
            odd,
        )
    )


def _base(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    r: dict[str, Any] = {
        "type": kind,
        "uuid": draw(uuids),
        "parentUuid": draw(uuids),
        "timestamp": draw(st.sampled_from(["2026-03-01T10:00:00.000Z", "", "not a time", 5])),
        "sessionId": "s-fuzz",
        "cwd": draw(st.sampled_from([CWD] * 12 + ["", "relative", f"{CWD}/\x00", "/" + "c" * 300])),
    }
    if draw(st.booleans()):
        r["isSidechain"] = True
        r["agentId"] = draw(st.sampled_from(["x1", "x2"] * 8 + ["\x01", "\ud800", 5]))
    if draw(st.booleans()):
        r["slug"] = draw(st.sampled_from(["plan-a"] * 8 + ["../up", "\ud800", "s" * 300]))
    if draw(st.booleans()):
        r["permissionMode"] = draw(st.one_of(st.sampled_from(["plan", "default"]), odd))
    return r


@st.composite
def record(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(
        st.sampled_from(["use", "result", "prompt", "meta", "attachment", "boundary", "odd"])
    )
    if kind == "use":
        r = _base(draw, "assistant")
        block: dict[str, Any] = {"type": "tool_use", "id": draw(tool_ids), "name": draw(tools)}
        block["input"] = draw(st.one_of(tool_input(), odd))
        r["message"] = {"role": "assistant", "content": [block]}
    elif kind == "result":
        r = _base(draw, "user")
        block = {
            "type": "tool_result",
            "tool_use_id": draw(tool_ids),
            "content": draw(
                st.one_of(claims, st.just([{"type": "text", "text": 5}]), st.text(max_size=20), odd)
            ),
            "is_error": draw(st.booleans()),
        }
        r["message"] = {"role": "user", "content": [block]}
        r["toolUseResult"] = draw(tool_result_value())
    elif kind in ("prompt", "meta"):
        r = _base(draw, "user")
        text = draw(
            st.one_of(
                st.just("<command-name>/fix</command-name>"),
                st.just("Base directory for this skill: /orig/app/.claude/skills/fix\n\nbody"),
                st.just(
                    "<task-notification><task-id>b1</task-id><status>completed</status>"
                    "<summary>done</summary></task-notification>"
                ),
                odd,
            )
        )
        r["message"] = {"role": "user", "content": text}
        if kind == "meta":
            r["isMeta"] = True
            r["sourceToolUseID"] = draw(st.one_of(tool_ids, odd))
    elif kind == "attachment":
        r = _base(draw, "attachment")
        att_kind = draw(
            st.sampled_from(
                [
                    "edited_text_file",
                    "plan_mode",
                    "deferred_tools_delta",
                    "agent_listing_delta",
                    "mcp_instructions_delta",
                    "skill_listing",
                    "invoked_skills",
                    "hook_success",
                    "file",
                    "compact_file_reference",
                ]
            )
        )
        att: dict[str, Any] = {"type": att_kind, "filename": draw(paths)}
        att["planFilePath"] = draw(paths)
        for key in ("addedNames", "addedLines", "removedNames", "addedTypes", "names"):
            if draw(st.booleans()):
                att[key] = draw(st.one_of(st.lists(odd_text, max_size=4), odd))
        att["skills"] = draw(
            st.one_of(
                st.just(5),
                st.lists(st.dictionaries(st.sampled_from(["name", "path", "content"]), odd)),
                odd,
            )
        )
        att["content"] = draw(st.one_of(st.just("- fix: fixes\n- other"), odd))
        att["hookName"] = draw(st.one_of(st.just("SessionStart:resume"), odd))
        r["attachment"] = att
    elif kind == "boundary":
        r = _base(draw, "system")
        r["subtype"] = "compact_boundary"
        meta: dict[str, Any] = {"trigger": draw(st.one_of(st.just("auto"), odd))}
        if draw(st.booleans()):
            many = draw(st.sampled_from([1, 3, 1000]))
            meta["preservedMessages"] = {
                "allUuids": draw(
                    st.one_of(st.lists(uuids, max_size=4).map(lambda u: u * many), odd)
                )
            }
        else:
            meta["preservedSegment"] = {"headUuid": draw(uuids), "tailUuid": draw(uuids)}
        r["compactMetadata"] = draw(st.one_of(st.just(meta), odd))
    else:
        r = _base(draw, draw(st.one_of(st.sampled_from(["user", "assistant", "system"]), odd)))
        r["message"] = draw(odd)
    return r


transcripts = st.lists(record(), min_size=1, max_size=12)


def _jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


@FUZZ
@given(transcripts)
def test_parse_and_replay_answer_a_named_refusal_or_nothing(records: list[Any]) -> None:
    try:
        t = parse(_jsonl(records))
    except TranscriptError:
        return
    failure: ValueError | None = None
    with tempfile.TemporaryDirectory(prefix="pcfz") as tree:
        try:
            asyncio.run(replay(t, tree=tree))
        except (TranscriptError, PostcompactError, DiskBudgetExceeded):
            pass
        except ValueError as exc:
            failure = exc
    # Only the ValueError about its working directory: every other one is a TranscriptError.
    assert failure is None or "cannot be placed" in str(failure), failure


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzzapp")
    (root / "a.ts").write_text("a\n")
    (root / "src").mkdir()
    (root / "src" / "b.py").write_text("b = 1\n")
    return root


@FUZZ
@given(transcripts)
def test_import_never_answers_internal(
    daemon: RunningDaemon, app: Path, records: list[Any]
) -> None:
    failure: ClientError | None = None
    try:
        daemon.client.import_transcript(
            _jsonl(records), cwd=str(app), session_id=new_session_id("fuzz")
        )
    except ClientError as err:
        failure = err
    if failure is not None:
        assert failure.code not in FORBIDDEN, failure
        assert failure.reason, failure
