"""Bad input for every RPC: the right status code, the ErrorInfo reason in the trailing metadata
(and in the rich status details), and the daemon keeps serving.

Path policy (documented in service/files.py): empty or NUL paths are INVALID_ARGUMENT; a path
that resolves outside the session roots (absolute, or relative and escaping) is PERMISSION_DENIED.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from postcompact_client import pb

from tests.daemon.conftest import RunningDaemon, new_session_id

METHOD = "/postcompact.v1.PostcompactService/"
IA = grpc.StatusCode.INVALID_ARGUMENT
NF = grpc.StatusCode.NOT_FOUND
PD = grpc.StatusCode.PERMISSION_DENIED
FP = grpc.StatusCode.FAILED_PRECONDITION
AE = grpc.StatusCode.ALREADY_EXISTS


@pytest.fixture(scope="module")
def world(daemon: RunningDaemon, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("bad")
    (root / "a.txt").write_text("a\n")
    (root / "big.txt").write_text("x" * 5000)
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (root / "dir").mkdir()
    sid = new_session_id("bad")
    s = daemon.client.open_session(str(root), session_id=sid, policy={"max_file_size_bytes": 1000})
    s.start_agent("sub")
    return {"root": root, "sid": sid}


def raw_call(daemon: RunningDaemon, method: str, payload: bytes) -> grpc.RpcError:
    with grpc.insecure_channel(daemon.address) as ch:
        call: Any = ch.unary_unary(METHOD + method)
        with pytest.raises(grpc.RpcError) as err:
            call(payload, timeout=30)
    return err.value


def check_error(err: Any, code: grpc.StatusCode, reason: str | None) -> None:
    assert err.code() == code, err.details()
    trailers = dict(err.trailing_metadata() or ())
    if reason is not None:
        assert trailers.get("postcompact-error-reason") == reason
        status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
        info = error_details_pb2.ErrorInfo()
        assert status.details[0].Unpack(info)
        assert info.reason == reason
        assert info.domain == "postcompact"


Case = tuple[str, Callable[[dict[str, Any]], Any], grpc.StatusCode, str | None]


def _rr(w: dict[str, Any], **kw: Any) -> pb.RecordReadRequest:
    return pb.RecordReadRequest(session_id=w["sid"], **{"path": "a.txt", **kw})


CASES: list[Case] = [
    # sessions
    ("OpenSession", lambda w: pb.OpenSessionRequest(cwd=""), IA, "PATH_REQUIRED"),
    ("OpenSession", lambda w: pb.OpenSessionRequest(cwd="rel/dir"), IA, "PATH_NOT_ABSOLUTE"),
    ("OpenSession", lambda w: pb.OpenSessionRequest(cwd="/tmp/a\x00b"), IA, "PATH_HAS_NUL"),
    (
        "OpenSession",
        lambda w: pb.OpenSessionRequest(session_id="a\nb", cwd=str(w["root"])),
        IA,
        "BAD_SESSION_ID",
    ),
    (
        "OpenSession",
        lambda w: pb.OpenSessionRequest(
            cwd=str(w["root"]), memory=pb.MemoryFiles(file_names=["a/b.md"])
        ),
        IA,
        "BAD_MEMORY_FILE_NAME",
    ),
    (
        "OpenSession",
        lambda w: pb.OpenSessionRequest(
            cwd=str(w["root"]), memory=pb.MemoryFiles(paths=["relative/CLAUDE.md"])
        ),
        IA,
        "BAD_MEMORY_PATH",
    ),
    (
        "OpenSession",
        lambda w: pb.OpenSessionRequest(
            cwd=str(w["root"]), policy=pb.RestorePolicy(file_token_budget=-1)
        ),
        IA,
        "NEGATIVE_BUDGET",
    ),
    (
        "OpenSession",
        lambda w: pb.OpenSessionRequest(session_id=w["sid"], cwd="/elsewhere"),
        IA,
        "SESSION_CWD_MISMATCH",
    ),
    ("CloseSession", lambda w: pb.CloseSessionRequest(), IA, "SESSION_ID_REQUIRED"),
    ("CloseSession", lambda w: pb.CloseSessionRequest(session_id="nope"), NF, "SESSION_NOT_FOUND"),
    # agents
    (
        "StartAgent",
        lambda w: pb.StartAgentRequest(session_id=w["sid"]),
        IA,
        "AGENT_ID_REQUIRED",
    ),
    (
        "StartAgent",
        lambda w: pb.StartAgentRequest(session_id=w["sid"], agent_id="x", parent_agent_id="ghost"),
        NF,
        "AGENT_NOT_FOUND",
    ),
    (
        "StartAgent",
        lambda w: pb.StartAgentRequest(session_id=w["sid"], agent_id="sub"),
        AE,
        "AGENT_EXISTS",
    ),
    (
        "StartAgent",
        lambda w: pb.StartAgentRequest(session_id=w["sid"], agent_id="y", mode=99),  # type: ignore[arg-type]
        IA,
        "BAD_AGENT_MODE",
    ),
    (
        "StartAgent",
        lambda w: pb.StartAgentRequest(session_id="nope", agent_id="x"),
        NF,
        "SESSION_NOT_FOUND",
    ),
    (
        "MergeFileState",
        lambda w: pb.MergeFileStateRequest(session_id=w["sid"], from_agent_id="ghost"),
        NF,
        "AGENT_NOT_FOUND",
    ),
    (
        "MergeFileState",
        lambda w: pb.MergeFileStateRequest(
            session_id=w["sid"], from_agent_id="sub", into_agent_id="sub"
        ),
        IA,
        "MERGE_SAME_AGENT",
    ),
    # files
    ("ReadFile", lambda w: pb.ReadFileRequest(session_id=w["sid"]), IA, "PATH_REQUIRED"),
    ("ReadFile", lambda w: pb.ReadFileRequest(path="a.txt"), IA, "SESSION_ID_REQUIRED"),
    (
        "ReadFile",
        lambda w: pb.ReadFileRequest(session_id="nope", path="a.txt"),
        NF,
        "SESSION_NOT_FOUND",
    ),
    (
        "ReadFile",
        lambda w: pb.ReadFileRequest(session_id=w["sid"], agent_id="ghost", path="a.txt"),
        NF,
        "AGENT_NOT_FOUND",
    ),
    (
        "ReadFile",
        lambda w: pb.ReadFileRequest(session_id=w["sid"], path="a\x00b.txt"),
        IA,
        "PATH_HAS_NUL",
    ),
    (
        "ReadFile",
        lambda w: pb.ReadFileRequest(session_id=w["sid"], path="../../../../../etc/passwd"),
        PD,
        "PATH_OUTSIDE_ROOTS",
    ),
    (
        "ReadFile",
        lambda w: pb.ReadFileRequest(session_id=w["sid"], path="/etc/passwd"),
        PD,
        "PATH_OUTSIDE_ROOTS",
    ),
    (
        "ReadFile",
        lambda w: pb.ReadFileRequest(session_id=w["sid"], path="missing.txt"),
        NF,
        "FILE_NOT_FOUND",
    ),
    (
        "ReadFile",
        lambda w: pb.ReadFileRequest(session_id=w["sid"], path="a.txt", offset=0),
        IA,
        "BAD_OFFSET",
    ),
    (
        "ReadFile",
        lambda w: pb.ReadFileRequest(session_id=w["sid"], path="a.txt", limit=-1),
        IA,
        "BAD_LIMIT",
    ),
    (
        "ReadFile",
        lambda w: pb.ReadFileRequest(session_id=w["sid"], path="img.png"),
        FP,
        "FILE_IS_BINARY",
    ),
    (
        "ReadFile",
        lambda w: pb.ReadFileRequest(session_id=w["sid"], path="dir"),
        FP,
        "FILE_IS_DIRECTORY",
    ),
    (
        "ReadFile",
        lambda w: pb.ReadFileRequest(session_id=w["sid"], path="big.txt"),
        FP,
        "FILE_TOO_LARGE",
    ),
    ("RecordRead", lambda w: _rr(w, content=b"\xff\xfe"), IA, "NOT_UTF8"),
    ("RecordRead", lambda w: _rr(w, timestamp_ms=-1), IA, "BAD_TIMESTAMP"),
    ("RecordRead", lambda w: _rr(w, agent_id="nobody"), NF, "AGENT_NOT_FOUND"),
    ("RecordRead", lambda w: _rr(w, path="/etc/hosts"), PD, "PATH_OUTSIDE_ROOTS"),
    ("RecordRead", lambda w: _rr(w, offset=-3), IA, "BAD_OFFSET"),
    (
        "RecordWrite",
        lambda w: pb.RecordWriteRequest(session_id=w["sid"], path="gone.txt"),
        NF,
        "FILE_NOT_FOUND",
    ),
    (
        "RecordWrite",
        lambda w: pb.RecordWriteRequest(session_id=w["sid"], path="a.txt", timestamp_ms=-5),
        IA,
        "BAD_TIMESTAMP",
    ),
    (
        "RecordWrite",
        lambda w: pb.RecordWriteRequest(session_id=w["sid"], path="a.txt", content=b"\xc3"),
        IA,
        "NOT_UTF8",
    ),
    (
        "CheckWrite",
        lambda w: pb.CheckWriteRequest(session_id=w["sid"], path="\x00"),
        IA,
        "PATH_HAS_NUL",
    ),
    ("CheckWrite", lambda w: pb.CheckWriteRequest(session_id=w["sid"]), IA, "PATH_REQUIRED"),
    (
        "CheckStale",
        lambda w: pb.CheckStaleRequest(session_id=w["sid"], started_at_ms=-1),
        IA,
        "BAD_TIMESTAMP",
    ),
    ("CheckStale", lambda w: pb.CheckStaleRequest(session_id=""), IA, "SESSION_ID_REQUIRED"),
    # skills, plan, mode, tasks
    (
        "RecordSkill",
        lambda w: pb.RecordSkillRequest(session_id=w["sid"]),
        IA,
        "SKILL_NAME_REQUIRED",
    ),
    (
        "RecordSkill",
        lambda w: pb.RecordSkillRequest(session_id=w["sid"], name="s", content=b"\x80"),
        IA,
        "NOT_UTF8",
    ),
    (
        "RecordSkill",
        lambda w: pb.RecordSkillRequest(session_id=w["sid"], name="s", invoked_at_ms=-1),
        IA,
        "BAD_TIMESTAMP",
    ),
    (
        "SetPlan",
        lambda w: pb.SetPlanRequest(session_id=w["sid"], plan_file_path="/etc/plan.md"),
        PD,
        "PATH_OUTSIDE_ROOTS",
    ),
    (
        "SetMode",
        lambda w: pb.SetModeRequest(session_id=w["sid"], mode=42),  # type: ignore[arg-type]
        IA,
        "BAD_MODE",
    ),
    ("SetMode", lambda w: pb.SetModeRequest(session_id="nope"), NF, "SESSION_NOT_FOUND"),
    ("UpsertTask", lambda w: pb.UpsertTaskRequest(session_id=w["sid"]), IA, "TASK_ID_REQUIRED"),
    (
        "UpsertTask",
        lambda w: pb.UpsertTaskRequest(session_id=w["sid"], task=pb.Task(task_id="t", status=77)),  # type: ignore[arg-type]
        IA,
        "BAD_TASK_STATUS",
    ),
    # catalogue and compaction
    (
        "SetCatalog",
        lambda w: pb.SetCatalogRequest(session_id=w["sid"], agent_id="ghost"),
        NF,
        "AGENT_NOT_FOUND",
    ),
    ("Compact", lambda w: pb.CompactRequest(session_id="nope"), NF, "SESSION_NOT_FOUND"),
    (
        "Compact",
        lambda w: pb.CompactRequest(session_id=w["sid"], kind=pb.CompactKind.ValueType(77)),
        IA,
        "BAD_COMPACT_KIND",
    ),
    (
        "PreviewCompact",
        lambda w: pb.PreviewCompactRequest(session_id=w["sid"], kind=pb.CompactKind.ValueType(-1)),
        IA,
        "BAD_COMPACT_KIND",
    ),
    (
        "Compact",
        lambda w: pb.CompactRequest(session_id=w["sid"], policy=pb.RestorePolicy(max_files=-1)),
        IA,
        "NEGATIVE_BUDGET",
    ),
    (
        "PreviewCompact",
        lambda w: pb.PreviewCompactRequest(
            session_id=w["sid"], policy=pb.RestorePolicy(skills_token_budget=-10)
        ),
        IA,
        "NEGATIVE_BUDGET",
    ),
    (
        "PreviewCompact",
        lambda w: pb.PreviewCompactRequest(session_id=w["sid"], agent_id="ghost"),
        NF,
        "AGENT_NOT_FOUND",
    ),
    *(
        (
            method,
            lambda w, m=marker, r=req: r(
                session_id=w["sid"], policy=pb.RestorePolicy(file_truncation_marker=m)
            ),
            IA,
            "INVALID_POLICY",
        )
        for method, req in (
            ("Compact", pb.CompactRequest),
            ("PreviewCompact", pb.PreviewCompactRequest),
        )
        for marker in ("{path:d}", "{shown_lines!r}", "{path:>99999999999}", "{nope}", "{path")
    ),
    (
        "OpenSession",
        lambda w: pb.OpenSessionRequest(
            cwd=str(w["root"]), policy=pb.RestorePolicy(file_truncation_marker="{total_lines:,x}")
        ),
        IA,
        "INVALID_POLICY",
    ),
    # tokens
    ("EstimateTokens", lambda w: pb.EstimateTokensRequest(text=b"\xff"), IA, "NOT_UTF8"),
    (
        "EstimateTokensBatch",
        lambda w: pb.EstimateTokensBatchRequest(texts=[b"ok", b"\xe2\x82"]),
        IA,
        "NOT_UTF8",
    ),
    (
        "CountTokens",
        lambda w: pb.CountTokensRequest(text=b"abc", encoding="p99k_base"),
        IA,
        "UNKNOWN_ENCODING",
    ),
    ("CountTokens", lambda w: pb.CountTokensRequest(text=b"\xff"), IA, "NOT_UTF8"),
    (
        "CountTokensBatch",
        lambda w: pb.CountTokensBatchRequest(texts=[b"a"], encoding="nope"),
        IA,
        "UNKNOWN_ENCODING",
    ),
    (
        "TruncateTokens",
        lambda w: pb.TruncateTokensRequest(text=b"abc", max_tokens=-5),
        IA,
        "NEGATIVE_BUDGET",
    ),
    (
        "TruncateTokens",
        lambda w: pb.TruncateTokensRequest(text=b"\xff", max_tokens=5),
        IA,
        "NOT_UTF8",
    ),
    (
        "TruncateTokensBatch",
        lambda w: pb.TruncateTokensBatchRequest(texts=[b"abc"], max_tokens=-1),
        IA,
        "NEGATIVE_BUDGET",
    ),
]


@pytest.mark.parametrize(
    ("method", "make", "code", "reason"),
    CASES,
    ids=[f"{c[0]}-{c[3] or c[2].name}-{i}" for i, c in enumerate(CASES)],
)
def test_bad_input(
    daemon: RunningDaemon,
    world: dict[str, Any],
    method: str,
    make: Callable[[dict[str, Any]], Any],
    code: grpc.StatusCode,
    reason: str | None,
) -> None:
    err = raw_call(daemon, method, make(world).SerializeToString())
    check_error(err, code, reason)
    assert daemon.client.health()


# Field 1 of each of these requests is a proto `string`; b"\x0a\x02\xff\xfe" sets it to invalid
# UTF-8, which protobuf refuses to parse.
UNDECODABLE = [
    "OpenSession",
    "CloseSession",
    "StartAgent",
    "MergeFileState",
    "ReadFile",
    "RecordRead",
    "RecordWrite",
    "CheckWrite",
    "CheckStale",
    "RecordSkill",
    "SetPlan",
    "SetMode",
    "UpsertTask",
    "SetCatalog",
    "Compact",
    "PreviewCompact",
]


@pytest.mark.parametrize("method", UNDECODABLE)
def test_invalid_utf8_in_a_string_field(daemon: RunningDaemon, method: str) -> None:
    err = raw_call(daemon, method, b"\x0a\x02\xff\xfe")
    check_error(err, IA, "MALFORMED_REQUEST")
    assert daemon.client.health()


def test_invalid_utf8_in_a_token_string_field(daemon: RunningDaemon) -> None:
    # CountTokensRequest.encoding (field 2) is a string
    err = raw_call(daemon, "CountTokens", b"\x12\x01\xff")
    check_error(err, IA, "MALFORMED_REQUEST")


def test_payload_over_the_message_limit(daemon: RunningDaemon, world: dict[str, Any]) -> None:
    big = pb.RecordReadRequest(session_id=world["sid"], path="a.txt", content=b"x" * (33 << 20))
    err = raw_call(daemon, "RecordRead", big.SerializeToString())
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert daemon.client.health()
    assert daemon.client.server_info().api_version == "postcompact.v1"


def test_unknown_method(daemon: RunningDaemon) -> None:
    err = raw_call(daemon, "NoSuchMethod", b"")
    assert err.code() == grpc.StatusCode.UNIMPLEMENTED
    assert daemon.client.health()


def test_deeply_nested_tool_input_is_ignored(daemon: RunningDaemon, world: dict[str, Any]) -> None:
    """A Read tool_use in the preserved tail whose input nests past the JSON parser's depth is
    malformed input like any other: ignored, not an error."""
    use = pb.ToolUse(id="t1", name="Read", input_json="[" * 100_000)
    msg = pb.ConversationMessage(role=pb.ROLE_ASSISTANT, content=[pb.ContentBlock(tool_use=use)])
    for method in ("PreviewCompact", "Compact"):
        with grpc.insecure_channel(daemon.address) as ch:
            call: Any = ch.unary_unary(METHOD + method)
            req = pb.CompactRequest(
                session_id=w_sid(world),
                kind=pb.COMPACT_KIND_PARTIAL,
                preserved_messages=[msg],
                skip_hooks=True,
            )
            call(req.SerializeToString(), timeout=30)


def w_sid(world: dict[str, Any]) -> str:
    return str(world["sid"])


@pytest.mark.parametrize("name", ["x" * 2000, "\u00e9" * 1500, "\u4e2d" * 1300])
def test_errors_about_long_paths_stay_readable(
    daemon: RunningDaemon, world: dict[str, Any], name: str
) -> None:
    """Messages echo paths; a long one (or one of multi-byte characters, percent-encoded on the
    wire) must not push the error's metadata past gRPC's limit: the client gets the daemon's
    answer, its message bounded, not a transport error."""
    for path, code, reason in (
        (f"/outside/{name}", PD, "PATH_OUTSIDE_ROOTS"),
        (str(world["root"] / name[:200] / name[:200] / name[:200]), NF, None),
    ):
        err = raw_call(
            daemon,
            "ReadFile",
            pb.ReadFileRequest(session_id=w_sid(world), path=path).SerializeToString(),
        )
        check_error(err, code, reason)
        assert len((err.details() or "").encode()) <= 600


def test_daemon_still_serves_after_all_that(daemon: RunningDaemon, project: Path) -> None:
    s = daemon.client.open_session(str(project), session_id=new_session_id("after"))
    assert s.read_file("src/a.py").text.startswith(b"1\talpha")
    assert daemon.proc.poll() is None
