"""The restoration pipeline in-process: real files in a temp dir, real Session/AgentState.

One test per pipeline rule (docs/claude-code.md §3; docs/profiles.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from postcompact import _core, render
from postcompact.restore.catalog import apply_catalog
from postcompact.restore.context import CompactContext
from postcompact.restore.hooks import HookSpec
from postcompact.restore.pipeline import run_compact
from postcompact.state import AgentState, Change, InvokedSkill, Session
from postcompact.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import text_of, v1_policy

MIB = 1024 * 1024


class World:
    def __init__(self, tmp_path: Path, profile: pb.Profile.ValueType = pb.PROFILE_DEFAULT):
        self.root = tmp_path / "proj"
        self.root.mkdir(parents=True)
        self.change = Change()  # what the last compaction named for the store
        self.home = tmp_path / "home"
        self.home.mkdir()
        self.plans = tmp_path / "plans"
        self.plans.mkdir()
        self.outside = tmp_path / "outside"
        self.outside.mkdir()
        self.session = Session(
            session_id="s1",
            cwd=str(self.root),
            home=str(self.home),
            roots=[str(self.root)],
            memory_paths=frozenset({str(self.root / "CLAUDE.md")}),
            plans_directory=str(self.plans),
            # Claude Code's file rule under the default profile too (the mechanisms tested here).
            policy=v1_policy() if profile == pb.PROFILE_DEFAULT else pb.RestorePolicy(),
            profile=profile,
            created_at_ms=0,
            last_active_ms=0,
        )
        self.main = self.agent("")

    def agent(self, agent_id: str) -> AgentState:
        a = AgentState(agent_id=agent_id, files=self.session.new_cache(100, 25 * MIB))
        self.session.agents[agent_id] = a
        return a

    def write(self, rel: str, text: str | bytes) -> str:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, str):
            path.write_text(text)
        else:
            path.write_bytes(text)
        return str(path)

    def read(self, rel_or_abs: str, ts: int, agent: AgentState | None = None) -> str:
        path = rel_or_abs if os.path.isabs(rel_or_abs) else str(self.root / rel_or_abs)
        try:
            content = Path(path).read_bytes()
        except OSError:
            content = b"gone"
        (agent or self.main).files.set(path, _core.FileState(content, ts, 1, None, False))
        return path

    async def compact(
        self,
        agent: AgentState | None = None,
        *,
        kind: pb.CompactKind.ValueType = pb.COMPACT_KIND_FULL,
        preserved: Sequence[pb.ConversationMessage] = (),
        policy: pb.RestorePolicy | None = None,
        preview: bool = False,
        hooks: Sequence[HookSpec] = (),
        additional: Sequence[str] = (),
        skip_hooks: bool = False,
        deny: Sequence[str] = (),
        include_content: bool = False,
        hash_contents: bool = True,
    ) -> pb.CompactResponse:
        req = pb.CompactRequest(
            session_id="s1",
            agent_id=(agent or self.main).agent_id,
            kind=kind,
            preserved_messages=preserved,
            policy=policy or pb.RestorePolicy(),
            additional_context=additional,
            skip_hooks=skip_hooks,
            include_content=include_content,
        )
        ctx = CompactContext.of(
            self.session,
            req,
            daemon_policy=pb.RestorePolicy(),
            hooks=hooks,
            deny_globs=deny,
            preview=preview,
            hash_contents=hash_contents,
        )
        result = await run_compact(ctx, self.session, agent or self.main, req)
        self.change = Change()
        result.apply(agent or self.main, self.change)
        return result.response


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def restored(resp: pb.CompactResponse) -> list[str]:
    return [
        os.path.basename(a.file.path) for a in resp.attachments if a.kind == pb.ATTACHMENT_KIND_FILE
    ]


def outcome(resp: pb.CompactResponse, name: str) -> pb.Decision:
    hits = [d for d in resp.decisions if d.name == name or os.path.basename(d.name) == name]
    assert len(hits) == 1, (name, resp.decisions)
    return hits[0]


def kinds(resp: pb.CompactResponse) -> list[pb.AttachmentKind.ValueType]:
    return [a.kind for a in resp.attachments]


def joined(resp: pb.CompactResponse) -> str:
    """The text to inject (clients join it: the response does not carry it)."""
    return "\n".join(text_of(a) for a in resp.attachments)


def totals(resp: pb.CompactResponse, category: str) -> pb.CategoryTotals:
    return next(t for t in resp.totals if t.category == category)


# --- docs/profiles.md ----------------------------------------------------------------------

FOUR = ["src/utils/format.ts", "tests/unit/format.test.ts", "src/types/index.ts", "README.md"]
EIGHT = [
    *FOUR,
    "src/config/default.ts",
    "src/utils/validation.ts",
    "CONTRIBUTING.md",
    ".eslintrc.js",
]


def _session_reads(world: World, files: Sequence[str]) -> None:
    for i, rel in enumerate(files):
        world.write(rel, f"// {rel}\nexport const v{i} = {i};\n")
        world.read(rel, 10 * (i + 1))


async def test_design_chapter_four_files_all_restored(world: World) -> None:
    _session_reads(world, FOUR)
    resp = await world.compact()
    assert restored(resp) == ["README.md", "index.ts", "format.test.ts", "format.ts"]
    assert all(d.outcome == pb.OUTCOME_RESTORED for d in resp.decisions)
    assert [d.rank for d in resp.decisions] == [1, 2, 3, 4]


async def test_design_chapter_eight_files_top_five(world: World) -> None:
    _session_reads(world, EIGHT)
    resp = await world.compact()
    assert restored(resp) == [
        ".eslintrc.js",
        "CONTRIBUTING.md",
        "validation.ts",
        "default.ts",
        "README.md",
    ]
    for rel, rank in (("src/types/index.ts", 6), ("tests/unit/format.test.ts", 7)):
        d = outcome(resp, str(world.root / rel))
        assert (d.outcome, d.rank) == (pb.OUTCOME_DROPPED_BY_RANK, rank)
    d = outcome(resp, str(world.root / "src/utils/format.ts"))
    assert (d.outcome, d.rank) == (pb.OUTCOME_DROPPED_BY_RANK, 8)
    assert totals(resp, "files").dropped == 3


async def test_design_chapter_reread_format_restored_first(world: World) -> None:
    _session_reads(world, EIGHT)
    world.read("src/utils/format.ts", 100)  # "re-read it to refresh its timestamp"
    resp = await world.compact()
    assert restored(resp) == [
        "format.ts",
        ".eslintrc.js",
        "CONTRIBUTING.md",
        "validation.ts",
        "default.ts",
    ]
    assert outcome(resp, "README.md").outcome == pb.OUTCOME_DROPPED_BY_RANK


# --- files ---------------------------------------------------------------------------------------


async def test_rendered_file_attachment_is_byte_identical(world: World) -> None:
    path = world.write("a.ts", "const a = 1;\n")
    world.read("a.ts", 1)
    resp = await world.compact()
    (att,) = resp.attachments
    assert list(att.blocks) == render.file_blocks(path, "const a = 1;\n", total_lines=2)
    assert text_of(att).startswith(
        "<system-reminder>\nCalled the Read tool with the following input: "
        + json.dumps({"file_path": path}, separators=(",", ":"))
        + "\n</system-reminder>\n<system-reminder>\nResult of calling the Read tool:\n"
        "1\tconst a = 1;\n2\t\n\n<system-reminder>\nWhenever you read a file"
    )
    assert att.tokens == _core.estimate(text_of(att))
    assert att.file.display_path == "a.ts"
    assert (att.file.total_lines, att.file.num_lines, att.file.truncated) == (2, 2, False)
    assert att.file.content == b""  # without include_content the text is only in rendered_text
    no_reminder = await world.compact(policy=pb.RestorePolicy(malware_reminder=False))
    assert "malware" not in joined(no_reminder)


async def test_plan_and_memory_files_are_excluded(world: World) -> None:
    world.write("CLAUDE.md", "# memory")
    world.write("a.ts", "a")
    plan = world.plans / "plan.md"
    plan.write_text("1. step")
    world.main.plan_file_path = str(plan)
    world.read("CLAUDE.md", 30)
    world.read(str(plan), 20)
    world.read("a.ts", 10)
    resp = await world.compact()
    assert restored(resp) == ["a.ts"]
    assert outcome(resp, "CLAUDE.md").outcome == pb.OUTCOME_EXCLUDED_MEMORY_FILE
    assert outcome(resp, str(plan)).outcome == pb.OUTCOME_EXCLUDED_PLAN_FILE
    assert outcome(resp, "a.ts").rank == 1  # exclusions are not ranked
    assert totals(resp, "files").dropped == 0


def _read_use(tool_id: str, file_path: str) -> pb.ConversationMessage:
    use = pb.ToolUse(id=tool_id, name="Read", input_json=json.dumps({"file_path": file_path}))
    return pb.ConversationMessage(role=pb.ROLE_ASSISTANT, content=[pb.ContentBlock(tool_use=use)])


def _result(tool_id: str, content: str) -> pb.ConversationMessage:
    res = pb.ToolResult(tool_use_id=tool_id, content=content.encode())
    return pb.ConversationMessage(role=pb.ROLE_USER, content=[pb.ContentBlock(tool_result=res)])


async def test_partial_tail_visibility_with_stub_two_pass_rule(world: World) -> None:
    for rel in ("src/a.ts", "src/b.ts", "src/c.ts"):
        world.write(rel, rel)
        world.read(rel, 1)
    tail = [
        _read_use("t1", "src/a.ts"),  # relative: expanded against the session cwd
        _result("t1", "1\tsrc/a.ts"),
        _read_use("t2", str(world.root / "src/b.ts")),
        _result("t2", render.FILE_UNCHANGED_STUB),  # a stub: b.ts's content is not visible
        pb.ConversationMessage(
            role=pb.ROLE_ASSISTANT,
            content=[pb.ContentBlock(tool_use=pb.ToolUse(id="t3", name="Grep", input_json="{}"))],
        ),
        _read_use("t4", "src/../src/missing.ts"),
    ]
    resp = await world.compact(kind=pb.COMPACT_KIND_PARTIAL, preserved=tail)
    assert sorted(restored(resp)) == ["b.ts", "c.ts"]
    assert outcome(resp, "a.ts").outcome == pb.OUTCOME_EXCLUDED_VISIBLE_IN_TAIL
    # A FULL compaction keeps no messages: the same list is ignored.
    for rel in ("src/a.ts", "src/b.ts", "src/c.ts"):
        world.read(rel, 1)
    full = await world.compact(kind=pb.COMPACT_KIND_FULL, preserved=tail)
    assert sorted(restored(full)) == ["a.ts", "b.ts", "c.ts"]


async def test_stable_sort_by_timestamp_ties_keep_mru_order(world: World) -> None:
    for rel in ("x.ts", "y.ts", "z.ts", "old.ts", "new.ts"):
        world.write(rel, rel)
    world.read("old.ts", 5)
    world.read("x.ts", 50)  # x, y, z tie; MRU order is z, y, x
    world.read("y.ts", 50)
    world.read("z.ts", 50)
    world.read("new.ts", 90)
    resp = await world.compact(policy=pb.RestorePolicy(max_files=3))
    assert restored(resp) == ["new.ts", "z.ts", "y.ts"]
    assert (outcome(resp, "x.ts").outcome, outcome(resp, "x.ts").rank) == (
        pb.OUTCOME_DROPPED_BY_RANK,
        4,
    )
    assert outcome(resp, "old.ts").rank == 5


async def test_max_files_zero_restores_nothing(world: World) -> None:
    world.write("a.ts", "a")
    world.read("a.ts", 1)
    resp = await world.compact(policy=pb.RestorePolicy(max_files=0))
    assert restored(resp) == []
    assert outcome(resp, "a.ts").outcome == pb.OUTCOME_DROPPED_BY_RANK


async def test_reread_returns_current_disk_content(world: World) -> None:
    world.write("a.ts", "old content\n")
    world.write("b.ts", "b\n")
    world.read("a.ts", 2)
    world.read("b.ts", 1)
    world.write("a.ts", "new content\n")  # modified after it was recorded
    resp = await world.compact(include_content=True)
    att = resp.attachments[0]
    assert att.file.content == b"new content\n"
    assert "1\tnew content" in text_of(att)
    assert "old content" not in joined(resp)


def _lines(n: int, width: int = 60) -> str:
    return "".join(f"{i:05d} " + "x" * (width - 6) + "\n" for i in range(1, n + 1))


async def test_oversize_truncate_head(world: World) -> None:
    text = _lines(200)  # 200 * 61 chars ≈ 3050 tokens
    path = world.write("big.ts", text)
    world.read("big.ts", 1)
    resp = await world.compact(
        policy=pb.RestorePolicy(max_tokens_per_file=500), include_content=True
    )
    (att,) = resp.attachments
    head = att.file.content.decode()
    assert att.file.truncated
    assert text.startswith(head + "\n")  # a head, cut at a line boundary
    shown = head.count("\n") + 1
    marker = render.file_truncation_marker(path, shown_lines=shown, total_lines=201)
    assert f"at line {shown} of 201" in marker
    assert f"offset {shown + 1}" in marker
    assert list(att.blocks) == render.file_blocks(
        path, head, total_lines=201, truncation_marker=marker
    )
    # Under the default profile the cap bounds the attachment as the model sees it (the Read
    # call, the numbered lines, the wrappers, the marker), and it is the longest head that fits.
    assert att.tokens == _core.estimate("\n".join(att.blocks)) <= 500
    longer = "\n".join(text.split("\n")[: shown + 1])
    marker2 = render.file_truncation_marker(path, shown_lines=shown + 1, total_lines=201)
    blocks2 = render.file_blocks(path, longer, total_lines=201, truncation_marker=marker2)
    assert _core.estimate("\n".join(blocks2)) > 500
    assert (att.file.num_lines, att.file.total_lines) == (shown, 201)
    d = outcome(resp, "big.ts")
    assert d.outcome == pb.OUTCOME_TRUNCATED
    assert d.tokens == att.tokens
    # The cache holds what the model saw: lines 1..shown.
    ((key, state),) = world.main.files.snapshot()
    assert (key, state.content, state.offset, state.limit) == (path, head.encode(), 1, shown)


async def test_oversize_reference(world: World) -> None:
    path = world.write("big.ts", _lines(200))
    world.read("big.ts", 1)
    policy = pb.RestorePolicy(max_tokens_per_file=500, oversize=pb.OVERSIZE_POLICY_REFERENCE)
    resp = await world.compact(policy=policy)
    (att,) = resp.attachments
    assert att.kind == pb.ATTACHMENT_KIND_COMPACT_FILE_REFERENCE
    assert text_of(att) == (
        f"<system-reminder>\nNote: {path} was read before the last conversation was "
        "summarized, but the contents are too large to include. Use Read tool if you need to "
        "access it.\n</system-reminder>"
    )
    assert (att.file_reference.path, att.file_reference.display_path) == (path, "big.ts")
    assert outcome(resp, "big.ts").outcome == pb.OUTCOME_REFERENCED
    assert len(world.main.files) == 0  # referenced files are not re-seeded


async def test_file_over_size_cap_is_oversize(world: World) -> None:
    text = _lines(100)  # 6100 bytes, ~1500 tokens: within the token cap
    world.write("wide.ts", text)
    world.read("wide.ts", 1)
    resp = await world.compact(
        policy=pb.RestorePolicy(max_file_size_bytes=1000), include_content=True
    )
    (att,) = resp.attachments
    assert att.file.truncated
    assert len(att.file.content) <= 1000
    assert text.startswith(att.file.content.decode() + "\n")
    assert att.file.total_lines == 101
    world.read("wide.ts", 1)
    ref = await world.compact(
        policy=pb.RestorePolicy(max_file_size_bytes=1000, oversize=pb.OVERSIZE_POLICY_REFERENCE)
    )
    assert kinds(ref) == [pb.ATTACHMENT_KIND_COMPACT_FILE_REFERENCE]


async def test_json_files_use_the_per_type_rate(world: World) -> None:
    world.write("data.json", '{"k": "' + "v" * 1500 + '"}\n')  # ~760 tokens at 2 per token
    world.read("data.json", 1)
    resp = await world.compact(policy=pb.RestorePolicy(max_tokens_per_file=600))
    assert outcome(resp, "data.json").outcome == pb.OUTCOME_TRUNCATED


async def test_first_fit_budget_binds(world: World) -> None:
    world.write("a.ts", "a" * 400)
    world.write("b.ts", "b" * 4000)
    world.write("c.ts", "c" * 400)
    world.read("c.ts", 1)
    world.read("b.ts", 2)
    world.read("a.ts", 3)
    resp = await world.compact(policy=pb.RestorePolicy(file_token_budget=600))
    assert restored(resp) == ["a.ts", "c.ts"]  # b does not fit; the later, smaller c still does
    d = outcome(resp, "b.ts")
    assert (d.outcome, d.rank) == (pb.OUTCOME_DROPPED_BY_BUDGET, 2)
    assert d.tokens > 1000
    assert "600-token file budget" in d.detail
    assert totals(resp, "files").dropped == 1
    assert totals(resp, "files").attachments == 2


async def test_budget_cost_is_the_serialised_attachment_message(world: World) -> None:
    path = world.write("a.ts", "line\n" * 100)
    world.read("a.ts", 1)
    message = {
        "attachment": {
            "type": "file",
            "filename": path,
            "content": {
                "type": "text",
                "file": {
                    "filePath": path,
                    "content": "line\n" * 100,
                    "numLines": 101,
                    "startLine": 1,
                    "totalLines": 101,
                },
            },
            "displayPath": "a.ts",
        },
        "type": "attachment",
        "uuid": "x" * 36,
        "timestamp": "y" * 24,
    }
    cost = _core.estimate(json.dumps(message, separators=(",", ":"), ensure_ascii=False))
    fits = await world.compact(policy=pb.RestorePolicy(file_token_budget=cost))
    assert restored(fits) == ["a.ts"]
    world.read("a.ts", 1)
    short = await world.compact(policy=pb.RestorePolicy(file_token_budget=cost - 1))
    assert outcome(short, "a.ts").outcome == pb.OUTCOME_DROPPED_BY_BUDGET


async def test_reseed_with_restored_files_only(tmp_path: Path) -> None:
    for profile in (pb.PROFILE_DEFAULT, pb.PROFILE_CLAUDE_CODE):
        world = World(tmp_path / str(profile), profile)
        a = world.write("a.ts", "a\n")
        world.write("b.ts", "b\n")
        world.write("gone.ts", "g")
        world.read("gone.ts", 9)
        os.remove(world.root / "gone.ts")
        world.read("a.ts", 3)
        world.read("b.ts", 2)
        world.main.nested_memory.add("/x/CLAUDE.md")
        before = _now()
        resp = await world.compact(policy=pb.RestorePolicy(max_files=2))
        assert restored(resp) == ["a.ts"]  # gone.ts unreadable, b.ts beyond max_files
        ((key, state),) = world.main.files.snapshot()
        assert (key, state.content, state.offset, state.limit, state.partial_view) == (
            a,
            b"a\n",
            1,
            None,
            False,
        )
        mtime = os.stat(a).st_mtime_ns // 1_000_000
        if profile == pb.PROFILE_CLAUDE_CODE:
            assert state.timestamp == mtime
        else:
            assert state.timestamp >= before
        assert world.main.nested_memory == set()
        assert resp.compaction == 1 == world.main.compactions


def _now() -> int:
    import time

    return time.time_ns() // 1_000_000


async def test_unreadable_denied_binary_decisions(world: World) -> None:
    world.write("ok.ts", "ok")
    world.write(".env", "SECRET=1")
    world.write("img.png", "not really")
    world.write("blob.txt", b"ab\0cd")
    world.write("custom.secret", "s")
    (world.root / "dir").mkdir()
    (world.outside / "x.ts").write_text("outside")
    (world.root / "link.ts").symlink_to(world.outside / "x.ts")
    for i, rel in enumerate(
        ["ok.ts", ".env", "img.png", "blob.txt", "custom.secret", "dir", "link.ts", "gone.ts"]
    ):
        world.read(rel, i)
    resp = await world.compact(policy=pb.RestorePolicy(max_files=10), deny=["*.secret"])
    assert restored(resp) == ["ok.ts"]
    assert outcome(resp, ".env").outcome == pb.OUTCOME_DENIED
    assert outcome(resp, "custom.secret").outcome == pb.OUTCOME_DENIED
    assert outcome(resp, "img.png").outcome == pb.OUTCOME_BINARY
    assert outcome(resp, "blob.txt").outcome == pb.OUTCOME_BINARY
    for name, kind in (("dir", "directory"), ("link.ts", "outside_roots"), ("gone.ts", "missing")):
        d = outcome(resp, name)
        assert d.outcome == pb.OUTCOME_UNREADABLE
        assert d.detail.startswith(kind)
    assert totals(resp, "files").dropped == 7


# --- tasks, plan, plan mode ------------------------------------------------------------------


def _task(task_id: str, status: pb.TaskStatus.ValueType, **kw: object) -> pb.Task:
    kw.setdefault("task_type", "local_agent")
    kw.setdefault("description", f"job {task_id}")
    kw.setdefault("output_file_path", f"/tasks/{task_id}.output")
    return pb.Task(task_id=task_id, status=status, **kw)  # type: ignore[arg-type]


async def test_task_status_rules(world: World) -> None:
    tasks = [
        _task("run", pb.TASK_STATUS_RUNNING, progress_summary="half", agent_id="ag-run"),
        _task("done", pb.TASK_STATUS_COMPLETED, error="", agent_id="ag-done"),
        _task("bad", pb.TASK_STATUS_FAILED, error="boom"),
        _task("stop", pb.TASK_STATUS_KILLED),
        _task("wait", pb.TASK_STATUS_PENDING),
        _task("seen", pb.TASK_STATUS_COMPLETED, retrieved=True),
        _task("shell", pb.TASK_STATUS_RUNNING, task_type="local_bash"),
        _task("self", pb.TASK_STATUS_RUNNING, agent_id="sub"),
    ]
    for t in tasks:
        world.session.tasks[t.task_id] = t
    resp = await world.compact()
    got = [a.task_status.task_id for a in resp.attachments]
    # Local agents first, then the running shells this agent started (the main thread's here).
    assert got == ["run", "done", "bad", "stop", "self", "shell"]
    assert text_of(resp.attachments[-1]).startswith(
        '<system-reminder>\nBackground shell shell ("job shell") is still running'
    )
    texts = [text_of(a) for a in resp.attachments]
    assert texts[0] == render.wrap_system_reminder(
        render.task_status(
            task_id="run",
            task_type="local_agent",
            description="job run",
            status="running",
            delta_summary="half",
            output_file_path="/tasks/run.output",
        )
    )
    assert "Progress: half" in texts[0]
    assert "Delta: boom" in texts[2]
    assert "was stopped by the user" in texts[3]
    # A sub-agent is never reminded of its own task.
    sub = world.agent("sub")
    sub_resp = await world.compact(sub)
    assert [a.task_status.task_id for a in sub_resp.attachments] == ["run", "done", "bad", "stop"]
    assert totals(resp, "tasks").attachments == 6


async def test_plan_and_plan_mode(world: World) -> None:
    plan = world.plans / "brave-plan.md"
    plan.write_text("1. refactor\n2. test")
    world.main.plan_file_path = str(plan)
    resp = await world.compact()
    assert kinds(resp) == [pb.ATTACHMENT_KIND_PLAN_FILE_REFERENCE]  # not in plan mode
    assert text_of(resp.attachments[0]) == render.wrap_system_reminder(
        render.plan_file_reference(str(plan), "1. refactor\n2. test")
    )
    assert resp.attachments[0].plan_file_reference.plan_content == b""  # only with the flag
    resp = await world.compact(include_content=True)
    assert resp.attachments[0].plan_file_reference.plan_content == b"1. refactor\n2. test"

    world.main.mode = pb.PERMISSION_MODE_PLAN
    resp = await world.compact()
    assert kinds(resp) == [pb.ATTACHMENT_KIND_PLAN_FILE_REFERENCE, pb.ATTACHMENT_KIND_PLAN_MODE]
    pm = resp.attachments[1]
    assert text_of(pm) == render.wrap_system_reminder(
        render.plan_mode(str(plan), plan_exists=True, is_sub_agent=False)
    )
    assert (pm.plan_mode.plan_exists, pm.plan_mode.is_sub_agent) == (True, False)

    plan.unlink()
    resp = await world.compact()
    assert kinds(resp) == [pb.ATTACHMENT_KIND_PLAN_MODE]
    assert "No plan file exists yet." in text_of(resp.attachments[0])

    sub = world.agent("sub")
    sub.mode = pb.PERMISSION_MODE_PLAN
    sub.plan_file_path = str(world.plans / "brave-plan-agent-sub.md")
    resp = await world.compact(sub)
    assert resp.attachments[0].plan_mode.is_sub_agent
    assert text_of(resp.attachments[0]) == render.wrap_system_reminder(
        render.plan_mode(sub.plan_file_path, plan_exists=False, is_sub_agent=True)
    )


async def test_plan_has_no_token_cap(world: World) -> None:
    plan = world.plans / "p.md"
    plan.write_text("step\n" * 20000)  # ~25K tokens, far over every cap
    world.main.plan_file_path = str(plan)
    resp = await world.compact(include_content=True)
    assert resp.attachments[0].plan_file_reference.plan_content == plan.read_bytes()


# --- skills ----------------------------------------------------------------------------------


def _skill(agent: AgentState, name: str, content: str, at: int) -> None:
    agent.skills[name] = InvokedSkill(name, f"/skills/{name}/SKILL.md", content.encode(), at)


async def test_skills_order_truncation_and_budget(world: World) -> None:
    big = "B" * 30000
    _skill(world.main, "old", "old rules", 1)
    _skill(world.main, "big", big, 2)
    _skill(world.main, "new", "new rules", 3)
    lean = await world.compact()
    assert [s.content for s in lean.attachments[0].invoked_skills.skills] == [b"", b"", b""]
    resp = await world.compact(include_content=True)
    assert text_of(resp.attachments[0]) == text_of(lean.attachments[0])
    (att,) = resp.attachments
    names = [s.name for s in att.invoked_skills.skills]
    assert names == ["new", "big", "old"]
    trunc = att.invoked_skills.skills[1]
    assert trunc.truncated
    assert trunc.content.decode() == big[:19900] + render.SKILL_TRUNCATION_MARKER
    assert text_of(att) == render.wrap_system_reminder(
        render.invoked_skills(
            [(s.name, s.path, s.content.decode()) for s in att.invoked_skills.skills]
        )
    )
    assert outcome(resp, "big").outcome == pb.OUTCOME_TRUNCATED
    assert outcome(resp, "big").tokens == 5000

    # A budget that binds: big is dropped, the older small skill still fits (first-fit).
    resp = await world.compact(policy=pb.RestorePolicy(skills_token_budget=1000))
    assert [s.name for s in resp.attachments[0].invoked_skills.skills] == ["new", "old"]
    assert outcome(resp, "big").outcome == pb.OUTCOME_DROPPED_BY_BUDGET
    assert totals(resp, "skills").dropped == 1
    # Truncation always starts from the original and skills are never cleared by compaction.
    assert world.main.skills["big"].content == big.encode()
    assert len(world.main.skills) == 3


async def test_skills_are_isolated_between_agents(world: World) -> None:
    sub = world.agent("sub")
    _skill(world.main, "main-skill", "m", 1)
    _skill(sub, "sub-skill", "s", 2)
    main_resp = await world.compact()
    sub_resp = await world.compact(sub)
    assert [s.name for s in main_resp.attachments[0].invoked_skills.skills] == ["main-skill"]
    assert [s.name for s in sub_resp.attachments[0].invoked_skills.skills] == ["sub-skill"]


# --- catalogue deltas ------------------------------------------------------------------------


def _catalog(world: World) -> None:
    apply_catalog(
        world.main,
        pb.SetCatalogRequest(
            deferred_tools=pb.DeferredTools(names=["mcp__b", "mcp__a"]),
            agent_types=pb.AgentTypes(
                agent_types=[
                    pb.AgentType(agent_type="Plan", when_to_use="plans"),
                    pb.AgentType(agent_type="explore", when_to_use="reads", tools=["Read"]),
                ],
                show_concurrency_note=True,
            ),
            mcp_servers=pb.McpServers(servers=[pb.McpServer(name="gh", instructions="Use gh.")]),
            skill_listing=pb.SkillListing(skills=[pb.SkillListingEntry(name="commit")]),
        ),
    )


async def test_deltas_full_compaction_reannounces_everything(world: World) -> None:
    _catalog(world)
    resp = await world.compact()
    assert kinds(resp) == [
        pb.ATTACHMENT_KIND_DEFERRED_TOOLS_DELTA,
        pb.ATTACHMENT_KIND_AGENT_LISTING_DELTA,
        pb.ATTACHMENT_KIND_MCP_INSTRUCTIONS_DELTA,
    ]  # and not the skill listing (docs/claude-code.md §5)
    tools, agents, mcp = resp.attachments
    assert list(tools.deferred_tools_delta.added_names) == ["mcp__a", "mcp__b"]
    assert text_of(tools) == render.wrap_system_reminder(
        render.deferred_tools_delta(["mcp__a", "mcp__b"], [])
    )
    assert agents.agent_listing_delta.is_initial
    assert list(agents.agent_listing_delta.added_types) == ["explore", "Plan"]
    assert text_of(agents) == render.wrap_system_reminder(
        render.agent_listing_delta(
            ["- explore: reads (Tools: Read)", "- Plan: plans (Tools: All tools)"],
            [],
            is_initial=True,
            show_concurrency_note=True,
        )
    )
    assert text_of(mcp) == render.wrap_system_reminder(
        render.mcp_instructions_delta(["## gh\nUse gh."], [])
    )
    assert totals(resp, "deltas").attachments == 3
    assert world.main.catalog.announced_tools == {"mcp__a", "mcp__b"}
    assert world.main.catalog.sent_skill_names == {"commit"}  # never reset


async def test_deltas_partial_compaction_diffs_against_the_tail(world: World) -> None:
    _catalog(world)
    earlier = pb.Attachment(
        kind=pb.ATTACHMENT_KIND_DEFERRED_TOOLS_DELTA,
        deferred_tools_delta=pb.DeferredToolsDelta(
            added_names=["mcp__a", "mcp__gone"], added_lines=["mcp__a", "mcp__gone"]
        ),
    )
    mcp_earlier = pb.Attachment(
        kind=pb.ATTACHMENT_KIND_MCP_INSTRUCTIONS_DELTA,
        mcp_instructions_delta=pb.McpInstructionsDelta(added_names=["gh"]),
    )
    tail = [
        pb.ConversationMessage(
            role=pb.ROLE_USER,
            content=[pb.ContentBlock(attachment=earlier), pb.ContentBlock(attachment=mcp_earlier)],
        )
    ]
    resp = await world.compact(kind=pb.COMPACT_KIND_PARTIAL, preserved=tail)
    assert kinds(resp) == [
        pb.ATTACHMENT_KIND_DEFERRED_TOOLS_DELTA,
        pb.ATTACHMENT_KIND_AGENT_LISTING_DELTA,
    ]
    delta = resp.attachments[0].deferred_tools_delta
    assert (list(delta.added_names), list(delta.removed_names)) == (["mcp__b"], ["mcp__gone"])
    assert resp.attachments[1].agent_listing_delta.is_initial  # the tail announced no agents
    assert world.main.catalog.announced_tools == {"mcp__a", "mcp__b"}


# --- hooks -----------------------------------------------------------------------------------


async def test_hooks_success_failure_timeout(world: World, tmp_path: Path) -> None:
    seen = tmp_path / "stdin.json"
    hooks = [
        HookSpec(
            f"cat > {seen}; "
            """printf '%s' '{"hookSpecificOutput": {"additionalContext": "from json"}}'"""
        ),
        HookSpec("echo plain text context"),
        HookSpec("""printf '%s' '{"additionalContext": "top level"}'"""),
        HookSpec("echo broken >&2; exit 3"),
        HookSpec("sleep 30", timeout_s=0.2),
    ]
    resp = await world.compact(hooks=hooks, additional=["from request"])
    (att,) = resp.attachments
    assert att.kind == pb.ATTACHMENT_KIND_HOOK_ADDITIONAL_CONTEXT
    assert list(att.hook_additional_context.content) == [
        "from json",
        "plain text context",
        "top level",
        "from request",
    ]
    assert text_of(att) == (
        "<system-reminder>\nSessionStart hook additional context: from json\nplain text "
        "context\ntop level\nfrom request\n</system-reminder>"
    )
    hook_outcomes = [d.outcome for d in resp.decisions if d.subject == pb.SUBJECT_HOOK]
    assert hook_outcomes == [
        pb.OUTCOME_HOOK_OK,
        pb.OUTCOME_HOOK_OK,
        pb.OUTCOME_HOOK_OK,
        pb.OUTCOME_HOOK_FAILED,
        pb.OUTCOME_HOOK_TIMED_OUT,
    ]
    failed = outcome(resp, "echo broken >&2; exit 3")
    assert "exit status 3" in failed.detail
    assert "broken" in failed.detail
    assert json.loads(seen.read_text()) == {
        "hook_event_name": "SessionStart",
        "source": "compact",
        "session_id": "s1",
        "cwd": str(world.root),
        "agent_id": "",
    }
    assert totals(resp, "hooks").dropped == 2

    skipped = await world.compact(hooks=hooks, skip_hooks=True, additional=["only this"])
    assert list(skipped.attachments[0].hook_additional_context.content) == ["only this"]
    assert not [d for d in skipped.decisions if d.subject == pb.SUBJECT_HOOK]


async def test_hook_attachment_comes_last(world: World) -> None:
    world.write("a.ts", "a")
    world.read("a.ts", 1)
    _skill(world.main, "s", "x", 1)
    resp = await world.compact(additional=["ctx"])
    assert kinds(resp) == [
        pb.ATTACHMENT_KIND_FILE,
        pb.ATTACHMENT_KIND_INVOKED_SKILLS,
        pb.ATTACHMENT_KIND_HOOK_ADDITIONAL_CONTEXT,
    ]
    assert joined(resp).endswith(
        "\n" + render.wrap_system_reminder(render.hook_additional_context(["ctx"]))
    )


# --- preview -----------------------------------------------------------------------------------


async def test_preview_changes_nothing(world: World) -> None:
    _session_reads(world, EIGHT)
    _catalog(world)
    world.main.catalog.announced_tools = {"stale"}
    world.main.nested_memory.add("/n/CLAUDE.md")
    _skill(world.main, "s", "x", 1)

    def state() -> object:
        cat = world.main.catalog
        return (
            [
                (k, v.content, v.timestamp, v.offset, v.limit)
                for k, v in world.main.files.snapshot()
            ],
            set(world.main.nested_memory),
            (set(cat.announced_tools), set(cat.announced_agent_types), set(cat.announced_mcp)),
            set(cat.sent_skill_names),
            world.main.compactions,
        )

    before = state()
    preview = await world.compact(preview=True)
    assert state() == before
    assert preview.compaction == 0
    real = await world.compact()
    assert real.compaction == 1
    assert joined(preview) == joined(real)
    assert list(preview.decisions) == list(real.decisions)
    assert state() != before


async def test_policy_layers_and_errors(world: World) -> None:
    from postcompact.errors import InvalidArgument

    world.session.policy = pb.RestorePolicy(max_files=1)
    for rel in ("a.ts", "b.ts"):
        world.write(rel, rel)
        world.read(rel, 1)
    resp = await world.compact()
    assert len(restored(resp)) == 1
    with pytest.raises(InvalidArgument) as err:
        await world.compact(policy=pb.RestorePolicy(file_token_budget=-1))
    assert err.value.reason == "NEGATIVE_BUDGET"
    assert "policy.file_token_budget" in err.value.message
    with pytest.raises(InvalidArgument) as err:
        await world.compact(policy=pb.RestorePolicy(max_tokens_per_skill=10))
    assert err.value.reason == "MARKER_TOO_LARGE"


async def test_exact_counter_caps_files_and_skills(world: World) -> None:
    path = world.write("big.ts", _lines(200))
    world.read("big.ts", 1)
    _skill(world.main, "s", "word " * 3000, 1)
    policy = pb.RestorePolicy(
        counter=pb.TOKEN_COUNTER_EXACT,
        encoding="cl100k_base",
        max_tokens_per_file=300,
        max_tokens_per_skill=200,
    )
    resp = await world.compact(policy=policy, include_content=True)
    file_att, skills_att = resp.attachments
    head = file_att.file.content.decode()
    shown = head.count("\n") + 1
    marker = render.file_truncation_marker(path, shown_lines=shown, total_lines=201)
    assert _core.count(head + marker, "cl100k_base") <= 300
    (skill,) = skills_att.invoked_skills.skills
    assert skill.truncated
    assert skill.content.decode().endswith(render.SKILL_TRUNCATION_MARKER)
    assert _core.count(skill.content.decode(), "cl100k_base") <= 200
    assert outcome(resp, "s").tokens == _core.count(skill.content.decode(), "cl100k_base")


@pytest.mark.parametrize(
    ("line_count", "blocks", "threads"),
    [(20, False, "loop"), (20, True, "one worker"), (6_000, False, "one each")],
)
async def test_where_rereads_run(
    world: World, monkeypatch: pytest.MonkeyPatch, line_count: int, blocks: bool, threads: str
) -> None:
    """Five small cached files are re-read on the event loop; when a read would wait for the
    disk, all five on one worker thread; five big ones as five parallel worker calls. The
    attachments come back in rank order every time."""
    import threading

    from postcompact import diskaccess
    from postcompact.restore import file_step as restore_files

    loop_thread = threading.get_ident()
    seen: list[tuple[bool, int]] = []
    files_per_call: list[int] = []
    original = restore_files.FileStep.restore_many

    def spy(
        self: restore_files.FileStep,
        ranked: Sequence[tuple[int, str]],
        read_at: int | None = None,
        previous: Mapping[str, bytes] | None = None,
        inline: bool = False,
        spans: Mapping[str, tuple[int, int | None]] | None = None,
        held: Mapping[str, bytes] | None = None,
    ) -> object:
        seen.append((inline, threading.get_ident()))
        files_per_call.append(len(ranked))
        if inline and blocks:
            raise diskaccess.WouldBlock  # as a page-cache miss would
        # Hold the thread a moment so that concurrent batches cannot reuse one pool thread.
        threading.Event().wait(0.05)
        return original(self, ranked, read_at, previous, inline=inline, spans=spans, held=held)

    monkeypatch.setattr(restore_files.FileStep, "restore_many", spy)
    body = "".join(f"line {i}\n" for i in range(line_count))
    paths = [world.read(world.write(f"f{i}.txt", body), ts=10 + i) for i in range(5)]
    policy = pb.RestorePolicy(max_tokens_per_file=10**9, file_token_budget=10**9)
    resp = await world.compact(policy=policy)
    assert [a.file.path for a in resp.attachments] == list(reversed(paths))
    workers = {ident for inline, ident in seen if not inline}
    if threads == "loop":
        assert seen == [(True, loop_thread)]
    elif threads == "one worker":
        assert seen[0] == (True, loop_thread)
        assert len(seen) == 2
        assert len(workers) == 1
        assert loop_thread not in workers
    else:
        # Five calls of one file each, all on worker threads. How many distinct threads serve
        # them is the pool's affair (threads busy elsewhere or idle ones reused), so only
        # "more than one" is asserted: the reads ran in parallel, not one after another.
        assert len(seen) == 5
        assert files_per_call == [1] * 5
        assert all(not inline for inline, _ in seen)
        assert len(workers) >= 2
        assert loop_thread not in workers


@pytest.mark.parametrize("hashing", [True, False])
async def test_changed_contents_are_hashed_only_for_a_state_database(
    world: World, hashing: bool
) -> None:
    """A re-read whose content changed gets its SHA-256 for the store (persist/sqlstore.py), unless
    the daemon keeps no state on disk; an unchanged one is never hashed."""
    import hashlib

    changed = world.read(world.write("changed.txt", "old\n"), ts=10)
    world.write("changed.txt", "new\n")
    same = world.read(world.write("same.txt", "same\n"), ts=11)
    await world.compact(hash_contents=hashing)
    expected = {changed: (b"new\n", hashlib.sha256(b"new\n").digest())} if hashing else {}
    assert {p: (c, d) for p, (c, d) in world.change.digests.items()} == expected
    assert same not in world.change.digests


@pytest.mark.parametrize(
    ("match_budget", "training", "picks"),
    [
        (pb.HARNESS_RULE_NONE, False, 0),
        (pb.HARNESS_RULE_NONE, True, 1),
        (pb.HARNESS_RULE_CLAUDE_CODE, False, 1),  # the budget is the pick's tokens
    ],
)
async def test_value_per_token_computes_claude_codes_pick_only_when_it_is_used(
    world: World,
    monkeypatch: pytest.MonkeyPatch,
    match_budget: pb.HarnessRule.ValueType,
    training: bool,
    picks: int,
) -> None:
    """The scored ranking has no use for Claude Code's own selection (a second file step per
    Compact) unless a matched budget needs it or the evaluation is training the model (which
    leaves those files out); training or not, the same files are restored."""
    from postcompact.restore import harness, pipeline, ranker

    calls: list[int] = []
    original = harness.claude_code_pick

    async def spy(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return await original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "claude_code_pick", spy)
    for i in range(3):
        world.read(world.write(f"f{i}.py", f"x = {i}\n" * (10 + 40 * i)), ts=10 + i)
    policy = pb.RestorePolicy(ranking=pb.FILE_RANKING_SCORED, match_budget=match_budget)
    token = ranker.OBSERVER.set(lambda agent, candidates: None) if training else None
    try:
        resp = await world.compact(policy=policy)
    finally:
        if token is not None:
            ranker.OBSERVER.reset(token)
    assert len(calls) == picks
    if match_budget == pb.HARNESS_RULE_NONE:
        restored = [a.file.path for a in resp.attachments if a.kind == pb.ATTACHMENT_KIND_FILE]
        assert sorted(restored) == sorted(str(world.root / f"f{i}.py") for i in range(3))
