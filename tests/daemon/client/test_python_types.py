"""The Python client's typed results (postcompact_client.types, docs/clients.md "What the calls
return"): every method answers the generated dataclasses, never a protobuf message, over a live
session that has reads, a skill, a plan, a task, a catalogue and a compaction; enums print their
names; real answers survive from_pb/to_pb unchanged; a number a newer daemon might send does not
fail the call; typed values go back in (a typed attachment in a preserved tail included); and
the committed types.py is what the generator writes now."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import inspect
import shutil
import sys
import tempfile
import typing
from collections.abc import Iterator, Mapping
from concurrent import futures
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message
from postcompact_client import (
    AsyncClient,
    Client,
    RetryPolicy,
    Session,
    join,
    pb,
    rendered_text,
    types,
)
from postcompact_client.types import (
    AgentMode,
    AttachmentKind,
    CompactKind,
    Outcome,
    OversizePolicy,
    PermissionMode,
    Placement,
    Profile,
    ProtoEnum,
    Role,
    Subject,
    TaskStatus,
    TokenCounter,
    WriteCheck,
)

from tests.daemon.conftest import RunningDaemon, file_of, new_session_id, payload_of
from tests.daemon.transcript.test_transcripts import _jsonl, _read

ROOT = Path(__file__).resolve().parents[3]

# Client methods that are plumbing, not calls answering a value (checked on their own below).
PLUMBING = {"call", "close", "health", "wait_for_health", "start_daemon"}


def assert_typed(value: object, where: str = "answer") -> None:
    """No protobuf message anywhere in `value` (through dataclasses, tuples, lists and mappings);
    every dataclass is one of postcompact_client.types, and every enum field holds its
    ProtoEnum."""
    assert not isinstance(value, Message), f"{where}: a protobuf {type(value).__name__}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        assert type(value).__module__ == "postcompact_client.types", f"{where}: {type(value)}"
        hints = typing.get_type_hints(type(value))
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            hint = hints[f.name]
            if isinstance(hint, type) and issubclass(hint, ProtoEnum):
                assert type(item) is hint, f"{where}.{f.name}: {type(item)}, not {hint}"
            assert_typed(item, f"{where}.{f.name}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            assert_typed(item, f"{where}[{i}]")
    elif isinstance(value, Mapping):
        for k, item in value.items():
            assert_typed(item, f"{where}[{k!r}]")


def public_methods(cls: type) -> set[str]:
    return {n for n, _ in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")}


def _world(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("alpha = 1\n")
    (root / "src" / "b.py").write_text("beta = 2\n")
    (root / "big.txt").write_text("word " * 40_000)  # over the cap: a reference under REFERENCE
    (root / "plans").mkdir()
    return root


def _fill(s: Session, root: Path) -> list[types.Attachment]:
    """Reads, a skill, a plan (and plan mode), a task and a catalogue: every attachment kind
    comes out of the next compaction or of the catalogue (returned)."""
    s.read_file("src/a.py")
    s.record_read("src/b.py", "beta = 2\n")
    s.record_read("big.txt", (root / "big.txt").read_text())
    s.record_skill("review", path="/skills/review/SKILL.md", content="Review the diff.")
    (root / "plans" / "p.md").write_text("# Plan\n\n1. step\n")
    s.set_plan(str(root / "plans" / "p.md"))
    s.set_mode(PermissionMode.PLAN)
    s.upsert_task(
        types.Task(
            task_id="t1",
            task_type="local_agent",
            description="index the repo",
            status=TaskStatus.RUNNING,
        )
    )
    return s.set_catalog(
        deferred_tools=["mcp__gh__pr"],
        agent_types=[types.AgentType(agent_type="Explore", when_to_use="search the code")],
        mcp_servers=[types.McpServer(name="gh", instructions="Prefer gh.")],
        skill_listing=[types.SkillListingEntry(name="commit", description="Make a commit")],
    )


@pytest.fixture
def root() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="pcty", dir="/tmp"))
    yield _world(d)
    shutil.rmtree(d, ignore_errors=True)


def test_every_method_answers_typed_values(daemon: RunningDaemon, root: Path) -> None:
    c = daemon.client
    sid = new_session_id("typed")
    s = c.open_session(str(root), session_id=sid, plans_directory=str(root / "plans"))
    listed = _fill(s, root)
    sub = s.start_agent("helper", mode=AgentMode.CLONE_PARENT)
    transcript = _jsonl(_read("t1", 1, "/orig/app/src/a.py", "alpha = 1\n"))
    answers: dict[str, Any] = {
        # Client
        "server_info": c.server_info(),
        "stats": c.stats(),
        "open_session": c.open_session(str(root), session_id=sid),
        "attach_session": c.attach_session(sid),
        "session": c.session(sid),
        "list_sessions": c.list_sessions(),
        "list_sessions_page": c.list_sessions_page(page_size=1),
        "import_transcript": c.import_transcript(
            transcript, cwd=str(root), session_id=new_session_id("imp"), profile="claude-code"
        ),
        "estimate_tokens": c.estimate_tokens("hello"),
        "estimate_tokens_batch": c.estimate_tokens_batch(["a", "bb"]),
        "count_tokens": c.count_tokens("hello"),
        "count_tokens_batch": c.count_tokens_batch(["a", "bb"]),
        "truncate_tokens": c.truncate_tokens("word " * 100, 5, counter=TokenCounter.ROUGH),
        "truncate_tokens_batch": c.truncate_tokens_batch(["word " * 100], 5),
        # Session
        "agent": s.agent("helper"),
        "start_agent": sub,
        "merge_file_state": s.merge_file_state("helper"),
        "read_file": s.read_file("src/a.py"),
        "record_read": s.record_read("src/b.py", "beta = 2\n"),
        "record_write": s.record_write("src/b.py", "beta = 3\n"),
        "check_write": s.check_write("src/a.py"),
        "check_stale": s.check_stale(),
        "record_skill": s.record_skill("commit", content="Commit."),
        "set_plan": s.set_plan(str(root / "plans" / "p.md")),
        "set_catalog": listed,
        "preview_compact": s.preview_compact(include_content=True),
        # Recency keeps the large file among the first (by value per token it would rank last).
        "compact": s.compact(
            include_content=True, policy={"oversize": "reference", "ranking": "recency"}
        ),
        "end_agent": sub.end_agent(),
    }
    s.set_mode("plan")  # the two calls that answer nothing
    s.upsert_task({"task_id": "t2", "status": "pending"})
    # Every method of Client and Session is here (a new one must be added, typed).
    nothing = {"set_mode", "upsert_task"}
    assert set(answers) | nothing | PLUMBING == public_methods(Client) | public_methods(Session)
    for name, value in answers.items():
        assert_typed(value, name)
        if isinstance(value, Session):
            assert_typed(value.info, f"{name}.info")
    want = {
        "server_info": types.GetServerInfoResponse,
        "stats": types.GetStatsResponse,
        "list_sessions_page": types.ListSessionsResponse,
        "import_transcript": types.ImportTranscriptResponse,
        "truncate_tokens": types.TruncateTokensResponse,
        "merge_file_state": types.MergeFileStateResponse,
        "read_file": types.ReadFileResponse,
        "check_write": types.CheckWriteResponse,
        "check_stale": types.CheckStaleResponse,
        "preview_compact": types.PreviewCompactResponse,
        "compact": types.CompactResponse,
        "end_agent": types.EndAgentResponse,
    }
    for name, cls in want.items():
        assert type(answers[name]) is cls, name
    assert all(type(x) is types.SessionInfo for x in answers["list_sessions"])
    assert all(type(x) is types.Attachment for x in answers["set_catalog"])
    assert all(type(x) is types.TruncateTokensResponse for x in answers["truncate_tokens_batch"])
    opened: Session = answers["open_session"]
    assert opened.resumed
    assert type(opened.info) is types.SessionInfo
    assert opened.info.session_id == sid
    assert answers["session"].info is None  # a handle made without a call knows nothing
    assert answers["check_write"].result is WriteCheck.ALLOWED
    assert answers["truncate_tokens"].truncated
    assert answers["end_agent"].agents == 1
    # The compaction, typed all the way down, with a decision per file.
    resp: types.CompactResponse = answers["compact"]
    kinds = {a.kind for a in resp.attachments}
    assert AttachmentKind.FILE in kinds
    assert AttachmentKind.COMPACT_FILE_REFERENCE in kinds
    restored = {d.name: d.outcome for d in resp.decisions if d.subject is Subject.FILE}
    assert restored[str(root / "src" / "a.py")] is Outcome.RESTORED
    assert restored[str(root / "big.txt")] is Outcome.REFERENCED
    assert "alpha = 1" in rendered_text(resp)
    assert join(resp).user_blocks  # join takes typed answers...
    assert join(listed).user_blocks == [b for a in listed for b in a.blocks]  # ...and a list
    # call() stays raw protobuf.
    raw = c.call("GetServerInfo", pb.GetServerInfoRequest())
    assert isinstance(raw, pb.GetServerInfoResponse)
    assert types.GetServerInfoResponse.from_pb(raw) == answers["server_info"]
    assert c.health() is True


def test_the_asyncio_client_answers_typed_values(daemon: RunningDaemon, root: Path) -> None:
    async def run() -> list[object]:
        async with AsyncClient(daemon.address, auto_start=False) as c:
            s = await c.open_session(str(root), session_id=new_session_id("atyped"))
            read = await s.read_file("src/a.py")
            listed = await s.set_catalog(deferred_tools=["Bash"])
            check = await s.check_write("src/a.py")
            resp = await s.compact()
            sessions = await c.list_sessions()
            return [s.info, read, listed, check, resp, sessions, await c.stats()]

    answers = asyncio.run(run())
    for i, value in enumerate(answers):
        assert value is not None
        assert_typed(value, f"answer {i}")
    info, read, listed, check, resp, _, _ = answers
    assert isinstance(info, types.SessionInfo)
    assert isinstance(read, types.ReadFileResponse)
    assert isinstance(check, types.CheckWriteResponse)
    assert check.result is WriteCheck.ALLOWED
    assert isinstance(resp, types.CompactResponse)
    kinds = [a.kind for a in resp.attachments]  # a FULL compaction re-announces the catalogue
    assert kinds == [AttachmentKind.FILE, AttachmentKind.DEFERRED_TOOLS_DELTA]
    assert isinstance(listed, list)
    assert [a.kind for a in listed] == [AttachmentKind.DEFERRED_TOOLS_DELTA]


def test_enums_print_their_names() -> None:
    assert str(WriteCheck.ALLOWED) == "ALLOWED"
    assert f"{Outcome.DROPPED_BY_BUDGET}" == "DROPPED_BY_BUDGET"
    assert f"{Outcome.RESTORED:>10}" == "  RESTORED"
    assert f"{Outcome.RESTORED:d}" == "1"  # an integer format still formats the number
    assert repr(Placement.SYSTEM) == "Placement.SYSTEM"
    d = types.Decision(subject=Subject.FILE, name="/a", outcome=Outcome.TRUNCATED)
    assert "subject=Subject.FILE" in repr(d)
    assert "outcome=Outcome.TRUNCATED" in repr(d)
    # Still ints: equal to the numbers and to the pb constants (code written against protobuf
    # answers keeps working; mypy --strict calls those comparisons non-overlapping), and usable
    # in pb messages.
    assert WriteCheck.ALLOWED == 1  # type: ignore[comparison-overlap]
    assert WriteCheck.ALLOWED == pb.WRITE_CHECK_ALLOWED  # type: ignore[comparison-overlap]
    assert Profile.CLAUDE_CODE_2_1_88 == pb.PROFILE_CLAUDE_CODE_2_1_88  # type: ignore[comparison-overlap]
    denied = pb.Decision(outcome=Outcome.DENIED)  # type: ignore[arg-type]
    assert denied.outcome == pb.OUTCOME_DENIED
    # Every value of every proto enum is a member, its name the proto's without the prefix.
    for e in pb.DESCRIPTOR.enum_types_by_name.values():
        cls = getattr(types, e.name)
        assert issubclass(cls, ProtoEnum)
        prefix = "".join(f"_{ch}" if ch.isupper() else ch.upper() for ch in e.name)[1:] + "_"
        assert [(m.name, m.value) for m in cls] == [
            (v.name.removeprefix(prefix), v.number) for v in e.values
        ], e.name


def test_printed_answers_show_names(daemon: RunningDaemon, root: Path) -> None:
    s = daemon.client.open_session(str(root), session_id=new_session_id("print"))
    s.read_file("src/a.py")
    resp = s.compact(skip_hooks=True)
    (att,) = resp.attachments
    assert (str(att.kind), str(att.placement)) == ("FILE", "USER")
    assert "kind=AttachmentKind.FILE" in repr(att)
    assert "placement=Placement.USER" in repr(att)
    (d,) = resp.decisions
    assert f"{d.name} {d.outcome}" == f"{root / 'src' / 'a.py'} RESTORED"
    assert str(s.check_write("src/b.py").result) == "NOT_READ"
    assert "profile=Profile.DEFAULT" in repr(daemon.client.attach_session(s.session_id).info)


def test_real_answers_round_trip(daemon: RunningDaemon, root: Path) -> None:
    """from_pb(m).to_pb() == m for what the daemon answers, taken raw with call(): a compaction
    holding every attachment kind, the catalogue, the listing, the counters."""
    c = daemon.client
    sid = new_session_id("trip")
    s = c.open_session(str(root), session_id=sid, plans_directory=str(root / "plans"))
    s.set_catalog(deferred_tools=["Bash"])  # announced: the compaction below re-announces
    listed = _fill(s, root)
    catalog = pb.SetCatalogResponse(attachments=[a.to_pb() for a in listed])
    kinds = {a.kind for a in listed}
    fields: dict[str, Any] = {
        "session_id": sid,
        "include_content": True,
        "policy": pb.RestorePolicy(
            oversize=pb.OVERSIZE_POLICY_REFERENCE,
            max_files=2,
            left_out_index=True,
            ranking=pb.FILE_RANKING_RECENCY,
        ),
        "additional_context": ["from the harness"],
    }
    preview = c.call("PreviewCompact", pb.PreviewCompactRequest(**fields))
    compacted = c.call("Compact", pb.CompactRequest(**fields))
    for raw, cls in ((preview, types.PreviewCompactResponse), (compacted, types.CompactResponse)):
        typed = cls.from_pb(raw)
        assert typed.to_pb() == raw
        assert typed.to_pb().SerializeToString() == raw.SerializeToString()
        kinds |= {a.kind for a in typed.attachments}
        # The payload is the oneof member the daemon set, under the name protobuf gives it.
        cases = [a.payload_case for a in typed.attachments]
        assert cases == [a.WhichOneof("payload") for a in raw.attachments]
        assert all(a.payload is getattr(a, a.payload_case or "kind") for a in typed.attachments)
    assert kinds == set(AttachmentKind) - {AttachmentKind.UNSPECIFIED}  # every kind was seen
    assert types.SetCatalogResponse.from_pb(catalog).to_pb() == catalog
    for method, req2 in (
        ("ListSessions", pb.ListSessionsRequest()),
        ("GetStats", pb.GetStatsRequest()),
        ("GetServerInfo", pb.GetServerInfoRequest()),
        ("ReadFile", pb.ReadFileRequest(session_id=sid, path="src/a.py", offset=1, limit=1)),
        ("CheckStale", pb.CheckStaleRequest(session_id=sid)),
    ):
        raw = c.call(method, req2)
        cls = getattr(types, type(raw).__name__)
        assert cls.from_pb(raw).to_pb() == raw, method
    listing = types.ListSessionsResponse.from_pb(c.call("ListSessions", pb.ListSessionsRequest()))
    assert sid in {x.session_id for x in listing.sessions}


def test_optional_fields_and_oneofs() -> None:
    # proto3 `optional`: None is unset, 0 is a value.
    assert types.RestorePolicy().to_pb().ListFields() == []
    zero = types.RestorePolicy(max_files=0).to_pb()
    assert zero.HasField("max_files")
    assert not zero.HasField("encoding")
    assert types.RestorePolicy.from_pb(zero) == types.RestorePolicy(max_files=0)
    assert types.RestorePolicy.from_pb(pb.RestorePolicy()).max_files is None
    # A singular message field: None when unset.
    assert types.OpenSessionResponse.from_pb(pb.OpenSessionResponse()).session is None
    # A oneof: the member set, its name; an empty bytes member is still set.
    block = types.ContentBlock.from_pb(pb.ContentBlock(text=b""))
    assert (block.block_case, block.block, block.tool_use) == ("text", b"", None)
    assert block.to_pb().WhichOneof("block") == "text"
    assert types.ContentBlock().block_case is None
    assert types.ContentBlock().to_pb().WhichOneof("block") is None
    with pytest.raises(ValueError, match="more than one member"):
        types.ContentBlock(text=b"x", tool_use=types.ToolUse(id="u"))
    ref = types.Attachment(file_reference=types.CompactFileReference(path="/p"))
    assert (ref.payload_case, ref.payload) == ("file_reference", ref.file_reference)
    # Maps.
    spec = types.TemplateSpec(preset="neutral", strings={"read_tool_name": "read"})
    assert dict(spec.to_pb().strings) == {"read_tool_name": "read"}
    assert types.TemplateSpec.from_pb(spec.to_pb()) == spec
    # Frozen.
    with pytest.raises(dataclasses.FrozenInstanceError):
        ref.tokens = 3  # type: ignore[misc]


class _NewerDaemon:
    """Answers CheckWrite and Compact with enum numbers this client's proto does not have."""

    CHECK = pb.CheckWriteResponse(result=99, path="/x")  # type: ignore[arg-type]
    COMPACT = pb.CompactResponse(
        attachments=[
            pb.Attachment(kind=77, placement=5, blocks=["text"])  # type: ignore[arg-type]
        ],
        decisions=[pb.Decision(subject=9, name="/x", outcome=42)],  # type: ignore[arg-type]
    )

    def handler(self) -> grpc.GenericRpcHandler:
        def answer(msg: Message) -> grpc.RpcMethodHandler[bytes, bytes]:
            return grpc.unary_unary_rpc_method_handler(
                lambda req, ctx: msg.SerializeToString(),
                request_deserializer=None,
                response_serializer=None,
            )

        methods = {"CheckWrite": answer(self.CHECK), "Compact": answer(self.COMPACT)}
        return grpc.method_handlers_generic_handler("postcompact.v1.PostcompactService", methods)


def test_an_unknown_enum_value_from_the_wire_does_not_fail(base: Path) -> None:
    sock = base / "newer.sock"
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((_NewerDaemon().handler(),))
    server.add_insecure_port(f"unix://{sock}")
    server.start()
    try:
        with Client(f"unix://{sock}", auto_start=False, retry=RetryPolicy.none()) as c:
            s = c.session("sid")
            check = s.check_write("/x")
            resp = s.compact()
    finally:
        server.stop(None)
    assert type(check.result) is WriteCheck  # a pseudo-member, not a member
    assert check.result == 99
    assert check.result not in list(WriteCheck)
    assert (str(check.result), repr(check.result)) == ("99", "WriteCheck(99)")
    assert check.to_pb() == _NewerDaemon.CHECK  # sent back as it came
    (att,) = resp.attachments
    (d,) = resp.decisions
    assert (att.kind, att.placement, d.subject, d.outcome) == (77, 5, 9, 42)
    assert type(d.outcome) is Outcome
    assert "outcome=Outcome(42)" in repr(d)
    assert resp.to_pb() == _NewerDaemon.COMPACT
    # The known members are untouched by it.
    assert Outcome(1) is Outcome.RESTORED
    assert Outcome["RESTORED"] is Outcome.RESTORED


def test_typed_values_go_back_in(daemon: RunningDaemon, root: Path) -> None:
    c = daemon.client
    s = c.open_session(
        str(root),
        session_id=new_session_id("back"),
        profile=Profile.CLAUDE_CODE,
        policy=types.RestorePolicy(max_files=1, oversize=OversizePolicy.REFERENCE),
        templates=types.TemplateSpec(preset="neutral"),
    )
    assert s.info is not None
    assert s.info.profile is Profile.CLAUDE_CODE
    s.read_file("src/a.py")
    s.read_file("src/b.py")
    s.upsert_task(types.Task(task_id="t", task_type="local_agent", status=TaskStatus.RUNNING))
    s.set_mode(PermissionMode.DEFAULT)
    # An attachment of a SetCatalog answer, typed, in the preserved tail of a PARTIAL compaction:
    # the daemon sees it as announced already, as it does the protobuf one.
    (delta,) = s.set_catalog(deferred_tools=["Bash"])
    assert delta.kind is AttachmentKind.DEFERRED_TOOLS_DELTA
    tail = types.ConversationMessage(
        role=Role.USER, content=(types.ContentBlock(attachment=delta),)
    )
    bare = s.preview_compact(kind=CompactKind.PARTIAL)
    typed = s.preview_compact(kind=CompactKind.PARTIAL, preserved_messages=[tail])
    raw = s.preview_compact(kind="partial", preserved_messages=[tail.to_pb()])
    assert AttachmentKind.DEFERRED_TOOLS_DELTA in [a.kind for a in bare.attachments]
    assert AttachmentKind.DEFERRED_TOOLS_DELTA not in [a.kind for a in typed.attachments]
    assert typed == raw
    resp = s.compact(kind=CompactKind.FULL, skip_hooks=True)
    files = [file_of(a).path for a in resp.attachments if a.kind is AttachmentKind.FILE]
    assert files == [str(root / "src" / "b.py")]  # max_files=1 from the typed policy
    (task,) = [a for a in resp.attachments if a.kind is AttachmentKind.TASK_STATUS]
    assert payload_of(task, types.TaskStatusAttachment).status is TaskStatus.RUNNING
    assert "Called the Read tool" not in rendered_text(resp)  # the neutral preset


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_committed_types_are_what_the_generator_writes() -> None:
    """`make lint`'s check-protos regenerates and diffs too; this says it in `make test`."""
    gen = _script("gen_py_types")
    target = ROOT / "clients" / "python" / "src" / "postcompact_client" / "types.py"
    assert gen.generate() == target.read_text(), "types.py is stale: run `make protos`"
