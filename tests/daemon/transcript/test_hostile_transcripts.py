"""Transcript import, replay and eval under hostile input (issue 37 part 1; docs/reliability.md,
"Transcripts", docs/security.md): every bad value is INVALID_ARGUMENT `BAD_TRANSCRIPT` naming its
line and field (replay and eval: one line, exit 2), the live calls' limits and the transcript's
budget hold (refused by name, with the line), the work runs off the event loop and stops when its
caller is gone, and replay writes a bounded disk, removed on every way out. The testers' sizes are
shrunk; the mechanisms are theirs."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from postcompact.transcript.parse import Boundary, parse
from postcompact_client import Client, PostcompactError
from postcompact_client.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import (
    Hold,
    RunningDaemon,
    held_daemon,
    new_session_id,
    short_dir,
    start_daemon,
)

CWD = "/orig/app"
_at = iter(range(10**9))


def rec(kind: str, uuid: str = "", **kw: Any) -> dict[str, Any]:
    sec = next(_at) % 3600
    out: dict[str, Any] = {
        "type": kind,
        "uuid": uuid or f"r{next(_at)}",
        "timestamp": f"2026-03-01T10:{sec // 60:02d}:{sec % 60:02d}.000Z",
        "sessionId": "s-hostile",
        "cwd": CWD,
    }
    out.update(kw)
    return out


def use(uid: str, name: str, inp: dict[str, Any], **kw: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": uid, "name": name, "input": inp}
    return rec("assistant", message={"role": "assistant", "content": [block]}, **kw)


def result(
    uid: str, tur: Any = None, *, content: Any = "ok", error: bool = False, **kw: Any
) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": uid, "content": content, "is_error": error}
    return rec("user", message={"role": "user", "content": [block]}, toolUseResult=tur, **kw)


def file_result(path: str, text: str = "a", **file: Any) -> dict[str, Any]:
    lines = text.count("\n") + 1
    f = {"filePath": path, "content": text, "numLines": lines, "startLine": 1, "totalLines": lines}
    f.update(file)
    return {"type": "text", "file": f}


def read(uid: str, path: str, text: str = "a", *, inp: Any = None, **kw: Any) -> list[Any]:
    return [
        use(uid, "Read", {"file_path": path, **(inp or {})}, **kw),
        result(uid, file_result(path, text), **kw),
    ]


def refused_read(uid: str, message: str) -> list[Any]:
    path = f"{CWD}/big.txt"
    return [
        use(uid, "Read", {"file_path": path}),
        result(uid, message, content=message, error=True),
    ]


def boundary(uid: str = "", **meta: Any) -> dict[str, Any]:
    return rec(
        "system",
        uid,
        subtype="compact_boundary",
        content="Conversation compacted",
        compactMetadata={"trigger": "auto", "preTokens": 170000, **meta},
    )


def jsonl(records: list[Any]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


# --- 1. every bad value: BAD_TRANSCRIPT naming the line and the field ---------------------------

SURROGATE = "\ud800"
BAD_VALUES: dict[str, tuple[list[Any], int, str]] = {
    # name: (records, the line at fault, a part of the field named)
    "tool_result text 5": (
        [
            use("t1", "Read", {"file_path": f"{CWD}/a.ts"}),
            result("t1", file_result(f"{CWD}/a.ts"), content=[{"type": "text", "text": 5}]),
        ],
        2,
        "message.content[0].content[0].text",
    ),
    "NUL path": (read("t1", f"{CWD}/a\x00.ts"), 2, "input.file_path"),
    "lone surrogate path": (read("t1", f"{CWD}/{SURROGATE}.ts"), 2, "input.file_path"),
    "size text (1.2.3MB)": (
        refused_read("t1", "File content (1.2.3MB) exceeds maximum allowed size (256KB)."),
        2,
        "(size)",
    ),
    "offset -5": (read("t1", f"{CWD}/a.ts", inp={"offset": -5}), 2, "input.offset"),
    "offset 2**70": (read("t1", f"{CWD}/a.ts", inp={"offset": 2**70}), 2, "input.offset"),
    "size claim (1e400GB)": (
        refused_read("t1", "File content (1e400GB) exceeds maximum allowed size (256KB)."),
        2,
        "(size)",
    ),
    "size claim of 401 digits": (
        refused_read("t1", f"File content (1{'0' * 400}GB) exceeds maximum allowed size (256KB)."),
        2,
        "(size)",
    ),
    "5,000-digit token count": (
        refused_read(
            "t1", f"File content ({'9' * 5000} tokens) exceeds maximum allowed tokens (25000)."
        ),
        2,
        "(tokens)",
    ),
    "numLines 2**70": (
        [
            use("t1", "Read", {"file_path": f"{CWD}/a.ts"}),
            result("t1", file_result(f"{CWD}/a.ts", numLines=2**70)),
        ],
        2,
        "numLines",
    ),
    "invoked_skills.skills = 5": (
        [rec("attachment", attachment={"type": "invoked_skills", "skills": 5})],
        1,
        "attachment.skills",
    ),
    "lone surrogate tool_use id": (read(f"t{SURROGATE}", f"{CWD}/a.ts"), 1, "content[0].id"),
}


@pytest.fixture
def app(tmp_path: Path) -> Path:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "a.ts").write_text("a\n")
    return tmp_path / "app"


def _refusal(d: RunningDaemon, data: bytes, cwd: Path) -> PostcompactError:
    with pytest.raises(PostcompactError) as err:
        d.client.import_transcript(data, cwd=str(cwd), session_id=new_session_id("hostile"))
    return err.value


@pytest.mark.parametrize("case", list(BAD_VALUES))
def test_a_bad_value_is_bad_transcript_naming_line_and_field(
    daemon: RunningDaemon, app: Path, case: str
) -> None:
    records, line, field = BAD_VALUES[case]
    err = _refusal(daemon, jsonl(records), app)
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_TRANSCRIPT"), err
    assert err.metadata["line"] == str(line), err
    assert field in err.metadata["field"], err
    assert daemon.client.server_info().pid == daemon.proc.pid  # and the daemon is well


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "postcompact", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize("command", ["replay", "eval"])
def test_a_bad_value_is_one_line_and_exit_2_in_replay_and_eval(
    tmp_path: Path, command: str
) -> None:
    for case, (records, line, _) in BAD_VALUES.items():
        path = tmp_path / "t.jsonl"
        # A compaction after it: eval loads only transcripts that have one.
        path.write_bytes(jsonl([*records, boundary(), *read("t9", f"{CWD}/a.ts")]))
        out = _cli(command, str(path), *(["--quiet"] if command == "eval" else []))
        assert out.returncode == 2, (case, out.stderr)
        assert "Traceback" not in out.stderr, (case, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1, (case, out.stderr)
        assert f"line {line}" in out.stderr or f"t.jsonl:{line}:" in out.stderr, (case, out.stderr)


# --- 2. the live calls' limits, refused by name with the line ------------------------------------

LIMITS = """
[limits]
max_agents_per_session = 3
max_tasks_per_session = 3
max_tasks_per_agent = 2
max_skills_per_agent = 2
max_catalog_entries = 5
max_transcript_records = 60
max_transcript_events = 40
max_transcript_boundaries = 3
"""


@pytest.fixture(scope="module")
def limited() -> Iterator[RunningDaemon]:
    d = start_daemon(config_toml=LIMITS)
    yield d
    d.stop()


def _sidechain(agent: str) -> dict[str, Any]:
    return {"isSidechain": True, "agentId": agent}


def _skill(name: str) -> list[Any]:
    return [
        rec("user", message={"role": "user", "content": f"<command-name>/{name}</command-name>"}),
        rec(
            "user",
            isMeta=True,
            message={
                "role": "user",
                "content": f"Base directory for this skill: {CWD}/.claude/skills/{name}\n\nbody",
            },
        ),
    ]


def _bash(uid: str) -> list[Any]:
    return [
        use(uid, "Bash", {"command": "sleep 9", "run_in_background": True}),
        result(uid, {"backgroundTaskId": f"b-{uid}"}),
    ]


def _agent_task(uid: str) -> list[Any]:
    return [
        use(uid, "Agent", {"description": "look", "prompt": "p"}),
        result(uid, {"status": "async_launched", "agentId": f"a-{uid}", "description": "look"}),
    ]


LIMIT_CASES: dict[str, tuple[list[Any], str, str, int]] = {
    # name: (records, reason, limit, the line at fault)
    "agents": (
        [*(r for n in range(5) for r in read(f"t{n}", f"{CWD}/a.ts", **_sidechain(f"x{n}")))],
        "TOO_MANY_AGENTS",
        "max_agents_per_session",
        6,  # main + x0 + x1 are 3: x2's first event
    ),
    "tasks of the session": (
        [*(r for n in range(5) for r in _agent_task(f"t{n}"))],
        "TOO_MANY_TASKS",
        "max_tasks_per_session",
        8,
    ),
    "tasks of an agent": (
        [*(r for n in range(3) for r in _bash(f"t{n}"))],
        "TOO_MANY_TASKS_FOR_AGENT",
        "max_tasks_per_agent",
        6,
    ),
    "skills": (
        [*(r for n in range(3) for r in _skill(f"s{n}"))],
        "TOO_MANY_SKILLS",
        "max_skills_per_agent",
        6,
    ),
    "tools": (
        [
            rec(
                "attachment",
                attachment={
                    "type": "deferred_tools_delta",
                    "addedNames": [f"tool{n}" for n in range(10)],
                    "addedLines": [f"tool{n}" for n in range(10)],
                    "removedNames": [],
                },
            )
        ],
        "CATALOG_TOO_MANY_ENTRIES",
        "max_catalog_entries",
        1,
    ),
    "records": (
        [rec("user", message={"role": "user", "content": "hi"}) for _ in range(61)],
        "TRANSCRIPT_TOO_LARGE",
        "max_transcript_records",
        0,
    ),
    "events": (
        [
            rec("user", permissionMode=("plan", "default")[n % 2], message={"content": "x"})
            for n in range(45)
        ],
        "TRANSCRIPT_TOO_LARGE",
        "max_transcript_events",
        41,
    ),
    "boundaries": (
        [boundary() for _ in range(4)],
        "TRANSCRIPT_TOO_LARGE",
        "max_transcript_boundaries",
        4,
    ),
}


@pytest.mark.parametrize("case", list(LIMIT_CASES))
def test_import_holds_the_live_limits_and_its_budget(
    limited: RunningDaemon, app: Path, case: str
) -> None:
    records, reason, limit, line = LIMIT_CASES[case]
    err = _refusal(limited, jsonl(records), app)
    assert (err.code, err.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, reason), err
    assert err.metadata["limit"] == limit, err
    assert err.metadata.get("line", "0") == str(line), err


def test_a_path_over_path_max_is_refused_at_import_never_stored(
    daemon: RunningDaemon, tmp_path: Path
) -> None:
    """The testers' 10.7 KB transcript: acknowledged, then quarantined at the next start."""
    app = tmp_path / "app"
    app.mkdir()
    err = _refusal(daemon, jsonl(read("t1", f"{CWD}/" + "p" * 5000)), app)
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "PATH_TOO_LONG"), err
    assert (err.metadata["line"], err.metadata["limit"]) == ("2", "4096"), err
    # Within PATH_MAX in the transcript, over it once mapped under a longer local cwd.
    deep = tmp_path / ("c" * 200)
    deep.mkdir()
    err = _refusal(daemon, jsonl(read("t1", f"{CWD}/" + "q" * 4000)), deep)
    assert (err.reason, err.metadata["line"]) == ("PATH_TOO_LONG", "2"), err
    assert "mapped" in err.metadata["field"], err


# --- 3. bounded work ---------------------------------------------------------------------------


def test_a_uuid_listed_a_hundred_thousand_times_is_applied_once(
    daemon: RunningDaemon, app: Path
) -> None:
    """The testers' 5 MB two-line transcript (1,000,000 times there): 1,000,001 events."""
    records = [
        boundary(preservedMessages={"allUuids": ["kept"] * 100_000}),
        rec(
            "attachment",
            "kept",
            attachment={"type": "edited_text_file", "filename": f"{CWD}/a.ts", "snippet": ""},
        ),
    ]
    resp = daemon.client.import_transcript(
        jsonl(records), cwd=str(app), session_id=new_session_id("uuids")
    )
    assert resp.events <= 2  # the boundary and the kept attachment's change, once
    assert resp.boundaries[0].preserved_messages == 1


def test_a_parent_uuid_cycle_ends() -> None:
    cycle = [rec("user", "A", parentUuid="B"), rec("user", "B", parentUuid="A")]
    seg = {"headUuid": "H", "tailUuid": "A", "anchorUuid": "A"}
    t = parse(jsonl([*cycle, *(boundary(preservedSegment=seg) for _ in range(50))]))
    assert len(t.boundaries) == 50
    assert [r.uuid for r in t.boundaries[0].preserved] == ["A"]


# --- 4. off the event loop; stops when its caller is gone ----------------------------------------

PING_TIMEOUT_S = 10.0


def _in_background(call: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(call())
        except Exception as exc:  # surfaced by the test's assertion on `out`
            out.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out


@pytest.fixture
def held_import() -> Iterator[tuple[RunningDaemon, Hold]]:
    d, (hold,) = held_daemon("import.worker")
    yield d, hold
    hold.release()
    d.stop()


def _request(app: Path, sid: str) -> pb.ImportTranscriptRequest:
    records = [*read("t1", f"{CWD}/a.ts"), boundary(), *read("t2", f"{CWD}/a.ts")]
    return pb.ImportTranscriptRequest(transcript=jsonl(records), cwd=str(app), session_id=sid)


def test_a_ping_is_answered_while_an_import_runs(
    held_import: tuple[RunningDaemon, Hold], app: Path
) -> None:
    """The import's work is held in its worker thread: had it run on the event loop, the hold
    would stop the loop and the ping would time out."""
    d, hold = held_import
    sid = new_session_id("busy")
    importing, out = _in_background(
        lambda: d.client.stub.ImportTranscript(_request(app, sid), timeout=60)
    )
    hold.wait_reached()
    other = Client(d.address, auto_start=False, timeout=PING_TIMEOUT_S)
    try:
        assert other.server_info().pid == d.proc.pid
        assert importing.is_alive()  # answered while the import is still running
    finally:
        other.close()
    hold.release()
    importing.join(60)
    assert isinstance(out[0], pb.ImportTranscriptResponse), out
    assert out[0].session_id == sid


@pytest.fixture
def gil_held_decode() -> Iterator[tuple[RunningDaemon, Hold]]:
    d, (hold,) = held_daemon("import.decode", kind="gil")
    yield d, hold
    hold.release()
    d.stop()


def test_a_line_is_decoded_where_it_cannot_hold_the_daemons_gil(
    gil_held_decode: tuple[RunningDaemon, Hold], app: Path
) -> None:
    """`json.loads` of one multi-megabyte line holds the GIL of the process running it for its
    whole length (the testers' 8 MB line: a 519 ms stall of every call when the parse ran in a
    worker thread of the daemon). The failpoint holds the decode of the first line the same way,
    with the GIL, until released: the daemon still answers, so that GIL is not the daemon's."""
    d, hold = gil_held_decode
    sid = new_session_id("gil")
    importing, out = _in_background(
        lambda: d.client.stub.ImportTranscript(_request(app, sid), timeout=60)
    )
    hold.wait_reached()
    other = Client(d.address, auto_start=False, timeout=PING_TIMEOUT_S)
    try:
        assert other.server_info().pid == d.proc.pid
        assert importing.is_alive()  # answered while the line's decode is still held
    finally:
        other.close()
    assert d.proc.pid not in hold.pids()
    hold.release()
    importing.join(60)
    assert isinstance(out[0], pb.ImportTranscriptResponse), out
    assert out[0].session_id == sid
    assert out[0].events > 0


def _parsers(pid: int) -> list[int]:
    """The parser processes (transcript/parser_process.py) `pid` has started and not reaped."""
    out = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in children.read_text().split():
            with contextlib.suppress(OSError):
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
                if b"parser_process" in cmdline and _state(int(child)) != "Z":
                    out.append(int(child))
    return out


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "?"


def _alive(pid: int) -> bool:
    return _state(pid) not in ("?", "Z")


def test_a_parser_process_ends_with_the_daemon(app: Path) -> None:
    """kill -9 of the daemon while a parser process is busy with its transcript (held by the
    failpoint): the parser ends by itself once it goes on, nothing reads its answer."""
    d, (hold,) = held_daemon("import.decode")
    try:
        importing, _ = _in_background(
            lambda: d.client.stub.ImportTranscript(_request(app, new_session_id("orphan")))
        )
        hold.wait_reached()
        (parser,) = hold.pids()
        assert parser != d.proc.pid
        assert _alive(parser)
        d.proc.kill()
        d.proc.wait()
        hold.release()
        deadline = time.monotonic() + 30
        while _alive(parser):
            assert time.monotonic() < deadline, "the parser process outlived its daemon"
            time.sleep(0.02)
        importing.join(30)
    finally:
        hold.release()
        d.stop()


def test_an_import_stops_when_its_deadline_passes(
    held_import: tuple[RunningDaemon, Hold], app: Path
) -> None:
    """The testers' import ran on 82 s after its caller's 5 s deadline passed."""
    d, hold = held_import
    sid = new_session_id("late")
    with pytest.raises(grpc.RpcError) as err:
        d.client.stub.ImportTranscript(_request(app, sid), timeout=1.0)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    hold.release()  # the worker goes on to its next check, and stops there
    deadline = time.monotonic() + 30
    while "import worker stopped" not in d.stderr():
        assert time.monotonic() < deadline, d.stderr()
        time.sleep(0.02)
    assert sid not in [s.session_id for s in d.client.list_sessions()]
    assert _parsers(d.proc.pid) == []  # its parser process was killed, not kept for the next
    again = d.client.import_transcript(_request(app, sid).transcript, cwd=str(app), session_id=sid)
    assert again.session_id == sid


# --- the parser process's memory ceiling, and its crash ------------------------------------------

CEILING = 256 * 1024 * 1024  # a fresh parser maps ~104 MiB; a small import peaks near 115 MiB


def _empty_objects(size: int) -> bytes:
    """One record whose ignored field is a list of empty objects, `size` bytes: each `{},` of 3
    bytes is a dict of about 70 in the parser (8 MiB: ~200 MiB of dicts, past `CEILING`)."""
    head, tail = b'{"type":"user","uuid":"u1","x":[', b"{}]}\n"
    return head + b"{}," * ((size - len(head) - len(tail)) // 3) + tail


def test_a_transcript_past_the_parser_memory_ceiling_is_too_complex(app: Path) -> None:
    """The parser process's address space is limited (limits.max_parser_memory_bytes; lowered
    here): a transcript whose parse needs more is RESOURCE_EXHAUSTED `TRANSCRIPT_TOO_COMPLEX`
    naming the limit, its parser is gone (the one kept from the import before, then the fresh
    one that judged it), nothing is kept, and the next import goes through."""
    d = start_daemon(config_toml=f"[limits]\nmax_parser_memory_bytes = {CEILING}\n")
    try:
        first = d.client.import_transcript(
            _request(app, "x").transcript, cwd=str(app), session_id=new_session_id("before")
        )
        assert first.events > 0
        assert len(_parsers(d.proc.pid)) == 1  # kept for the next import
        sid = new_session_id("complex")
        with pytest.raises(PostcompactError) as err:
            d.client.import_transcript(_empty_objects(8 << 20), cwd=str(app), session_id=sid)
        e = err.value
        assert (e.code, e.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "TRANSCRIPT_TOO_COMPLEX")
        assert e.metadata["limit"] == "max_parser_memory_bytes", e
        assert e.metadata["limit_bytes"] == str(CEILING), e
        assert f"{CEILING} bytes" in e.message, e
        assert "raise limits.max_parser_memory_bytes" in e.message, e
        assert e.retry_after is None
        assert _parsers(d.proc.pid) == []
        assert d.client.server_info().pid == d.proc.pid
        assert sid not in [s.session_id for s in d.client.list_sessions()]
        again = d.client.import_transcript(
            _request(app, "x").transcript, cwd=str(app), session_id=new_session_id("after")
        )
        assert again.events == first.events
        assert "Traceback" not in d.stderr()
    finally:
        d.stop()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSEGV])
def test_a_parser_killed_mid_parse_is_parser_crashed(app: Path, sig: signal.Signals) -> None:
    """The parser process killed while it decodes a line (held there by the failpoint): the
    import answers UNAVAILABLE `PARSER_CRASHED` naming the signal, without a RetryInfo (a
    transcript that crashes its parser would crash the next), the daemon logs the exit status,
    has reaped the parser and serves on; the same import then goes through."""
    d, (hold,) = held_daemon("import.decode")
    try:
        sid = new_session_id("crash")
        data = _request(app, sid).transcript
        importing, out = _in_background(
            lambda: d.client.import_transcript(data, cwd=str(app), session_id=sid)
        )
        hold.wait_reached()
        (parser,) = hold.pids()
        assert parser != d.proc.pid
        os.kill(parser, sig)
        importing.join(60)
        (e,) = out
        assert isinstance(e, PostcompactError), e
        assert (e.code, e.reason) == (grpc.StatusCode.UNAVAILABLE, "PARSER_CRASHED"), e
        assert e.metadata == {"signal": sig.name}, e
        assert f"killed by {sig.name}" in str(e), e
        assert e.retry_after is None
        assert not e.transport
        logged = [json.loads(line) for line in d.stderr().splitlines() if line.startswith("{")]
        crashed = [r for r in logged if r["msg"] == "transcript parser process crashed"]
        assert [(r["pid"], r["exit_status"]) for r in crashed] == [(parser, -sig)], logged
        assert _state(parser) == "?"  # reaped, not a zombie
        assert _parsers(d.proc.pid) == []
        assert d.client.server_info().pid == d.proc.pid
        assert sid not in [s.session_id for s in d.client.list_sessions()]
        hold.release()
        again = d.client.import_transcript(data, cwd=str(app), session_id=sid)
        assert again.session_id == sid
    finally:
        hold.release()
        d.stop()


def test_the_parser_memory_ceiling_follows_the_message_limit(tmp_path: Path) -> None:
    """Unset, the ceiling is 256 MiB + 16 bytes per byte a request may carry (768 MiB by
    default: docs/reliability.md has the measurements); set, at least 128 MiB."""
    from postcompact.config import Config, ConfigError, load_config

    mib = 1024 * 1024
    assert Config().parser_memory_bytes == 768 * mib
    assert Config(max_message_bytes=64 * mib).parser_memory_bytes == 1280 * mib
    assert Config(max_parser_memory_bytes=200 * mib).parser_memory_bytes == 200 * mib
    path = tmp_path / "config.toml"
    path.write_text("[limits]\nmax_parser_memory_bytes = 1000\n")
    with pytest.raises(ConfigError, match="max_parser_memory_bytes: must be >= 134217728"):
        load_config({}, env={}, config_file=path)


def test_how_a_parser_ended_is_named() -> None:
    from postcompact.transcript.parser_process import ParserCrashed

    assert ParserCrashed(7, -signal.SIGKILL).status == "killed by SIGKILL"
    assert ParserCrashed(7, 3).status == "exited with status 3"
    assert ParserCrashed(7, 3).signal == ""


# --- the parser process answers what `parse` does ------------------------------------------------


def _rich() -> list[Any]:
    """Records making every kind of event, a boundary keeping some of them."""
    edit = {"file_path": f"{CWD}/a.ts", "old_string": "a", "new_string": "b"}
    multi = {"file_path": f"{CWD}/a.ts", "edits": [{"old_string": "b", "new_string": "c"}]}
    tur = {"originalFile": "a\n", "structuredPatch": [{"newStart": 1, "lines": ["-a", "+b"]}]}
    delta = {"type": "deferred_tools_delta", "addedNames": ["T"], "addedLines": ["T"]}
    kept = rec("attachment", "kept", attachment=delta)
    return [
        *read("t1", f"{CWD}/a.ts", "a\n"),
        use("t2", "Edit", edit),
        result("t2", tur),
        use("t3", "MultiEdit", multi),
        result("t3", {**tur, "originalFile": "b\n"}),
        *_skill("s1"),
        *_bash("t4"),
        *_agent_task("t5"),
        kept,
        rec("user", permissionMode="plan", message={"role": "user", "content": "go"}),
        boundary(preservedMessages={"allUuids": ["kept", "missing"]}),
        rec("attachment", attachment={"type": "file", "filename": f"{CWD}/a.ts"}),
        *read("t6", f"{CWD}/b.ts", **_sidechain("x1")),
        *refused_read("t7", "File content (1.5MB) exceeds maximum allowed size (256KB)."),
    ]


def test_the_parser_process_answers_what_parse_does() -> None:
    """What ImportTranscript builds from (parser_process.parse_elsewhere) is what `parse`, which
    replay and eval run, returns: the events (a kept record with what a compaction reads of
    it), the paths, the warnings, the counts, and every refusal as it is."""
    from postcompact.config import Config
    from postcompact.transcript import parser_process
    from postcompact.transcript.parse import Budget, TranscriptError, no_stop
    from postcompact.transcript.session import touched_paths

    budget = Budget.of(Config())
    cases = [_rich(), *(r for r, *_ in LIMIT_CASES.values()), *(r for r, *_ in BAD_VALUES.values())]

    def refusal(call: Any) -> tuple[Any, ...] | None:
        try:
            call()
        except TranscriptError as exc:
            return (exc.line, exc.field, exc.reason, exc.limit, str(exc))
        return None

    try:
        for records in cases:
            data = jsonl(records)
            refused = refusal(lambda: parse(data, budget))  # noqa: B023 (called at once)
            if refused is not None:
                elsewhere = refusal(
                    lambda: parser_process.parse_elsewhere(data, budget, no_stop)  # noqa: B023
                )
                assert elsewhere == refused
                continue
            want = parse(data, budget)
            t, n = parser_process.parse_elsewhere(data, budget, no_stop)
            assert n == len(want.records)
            assert list(t.touched or ()) == touched_paths(want.events)
            assert (t.cwd, t.session_id, t.slug, t.warnings) == (
                want.cwd,
                want.session_id,
                want.slug,
                want.warnings,
            )
            assert len(t.events) == len(want.events)
            for got, event in zip(t.events, want.events, strict=True):
                expected = event
                if isinstance(event, Boundary):
                    assert isinstance(got, Boundary)
                    kept = ("type", "message", "attachment")
                    slim = tuple(
                        {k: v for k, v in r.data.items() if k in kept} for r in event.preserved
                    )
                    assert tuple(r.data for r in got.preserved) == slim
                    assert [r.line for r in got.preserved] == [r.line for r in event.preserved]
                    expected = dataclasses.replace(event, preserved=got.preserved)
                assert got == expected
        # Past max_agents_per_session the events end with the one the build refuses.
        agents = jsonl(LIMIT_CASES["agents"][0])
        t, _ = parser_process.parse_elsewhere(agents, budget, no_stop, max_agents=3)
        assert [e.agent for e in t.events] == ["x0", "x1", "x2"]  # with the main agent: 3
        assert list(t.events)[-1].line == 6
    finally:
        parser_process.close()


def test_the_transcript_is_read_where_grpc_left_it() -> None:
    """ImportTranscript's request is split on the wire (transcript/request.py): the rest parses
    as the whole request would, the transcript is the whole request's, the last one winning."""
    from postcompact.transcript.request import split
    from postcompact.v1 import postcompact_pb2 as dpb

    full = dpb.ImportTranscriptRequest(
        transcript=b'{"type":"user"}\n' * 3,
        session_id="s",
        cwd="/c",
        path_map=[dpb.PathMapping(source="/a", target="/b"), dpb.PathMapping(source="/x")],
        profile=dpb.PROFILE_DEFAULT,
        policy=dpb.RestorePolicy(max_files=3),
        home="/h",
        replace=True,
        file_mtimes=True,
    )
    twice = (
        full.SerializeToString()
        + dpb.ImportTranscriptRequest(transcript=b"last", cwd="/d").SerializeToString()
    )
    for raw in (
        full.SerializeToString(),
        twice,
        b"",
        dpb.ImportTranscriptRequest().SerializeToString(),
    ):
        parts = split(raw)
        assert parts is not None
        rest, start, end = parts
        whole = dpb.ImportTranscriptRequest.FromString(raw)
        assert raw[start:end] == whole.transcript
        whole.ClearField("transcript")
        assert dpb.ImportTranscriptRequest.FromString(rest) == whole
    for bad in (
        b"\x0a\xff",
        b"\x0a\x05abc",
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
        b"\x0b",
    ):
        assert split(bad) is None


# --- 5. replay and eval do not amplify ------------------------------------------------------------


def _allocated(path: Path) -> int:
    return path.stat().st_blocks * 512


def test_replay_writes_a_bounded_disk(tmp_path: Path) -> None:
    """The testers' 2 KB transcript with `totalLines: 10**9` wrote 5 GiB; each "(1.0GB)" claim
    1 GiB. Shrunk: 64 MiB claimed, 2,000,000 lines of 40."""
    import asyncio

    from postcompact.transcript.replay import replay

    line = "y" * 40
    ranged = file_result(f"{CWD}/long.txt", f"{line}\n{line}", totalLines=2_000_000)
    records = [
        *refused_read("t1", "File content (64.0MB) exceeds maximum allowed size (256KB)."),
        use("t2", "Read", {"file_path": f"{CWD}/long.txt", "offset": 1, "limit": 2}),
        result("t2", ranged),
        boundary(),
    ]
    tree = tmp_path / "tree"
    asyncio.run(replay(parse(jsonl(records)), tree=str(tree)))
    big, long = tree / "orig/app/big.txt", tree / "orig/app/long.txt"
    assert big.stat().st_size == 64 * 1024 * 1024  # its size as claimed: a hole past the head
    assert long.stat().st_size > 80_000_000
    assert _allocated(big) <= 5 * 1024 * 1024
    assert _allocated(long) <= 5 * 1024 * 1024


def test_the_disk_budget_is_refused_by_name(tmp_path: Path) -> None:
    from postcompact.transcript.disk import Disk, DiskBudgetExceeded, FileModel

    disk = Disk(unknown_mtime_ms=0, disk_budget=1024 * 1024)
    disk.files["/a"] = FileModel(text="z" * 600_000)
    disk.files["/b"] = FileModel(text="z" * 600_000)
    with pytest.raises(DiskBudgetExceeded, match="disk budget"):
        disk.materialize({"/a": str(tmp_path / "a"), "/b": str(tmp_path / "b")})


def test_replay_removes_its_tree_on_sigterm(tmp_path: Path) -> None:
    records = [r for n in range(400) for r in (*read(f"t{n}", f"{CWD}/f{n % 7}.ts"), boundary())]
    path = tmp_path / "long.jsonl"
    path.write_bytes(jsonl(records))
    tmp = short_dir("pct")
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "postcompact", "replay", "--json", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    deadline = time.monotonic() + 60
    while not any(p.name.startswith("postcompact-replay-") for p in tmp.iterdir()):
        assert proc.poll() is None, proc.stderr
        assert time.monotonic() < deadline
        time.sleep(0.005)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert list(tmp.iterdir()) == []
    tmp.rmdir()


def test_eval_on_two_workers_removes_every_tree_on_sigterm(tmp_path: Path) -> None:
    """The workers die at once on SIGTERM (their pool is ended by a signal only on the way
    out: a worker signalled just as it blocked on the pool's lock hung `eval` for good); they
    name their replay trees in a registry of the parent's before making them, and the parent
    removes them."""
    records = [r for n in range(400) for r in (*read(f"t{n}", f"{CWD}/f{n % 7}.ts"), boundary())]
    for name in ("a", "b"):
        (tmp_path / f"{name}.jsonl").write_bytes(jsonl(records))
    tmp = short_dir("pce")
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "postcompact", "eval", "--quiet", "--workers", "2", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    deadline = time.monotonic() + 60
    while not any(p.name.startswith("postcompact-replay-") for p in tmp.iterdir()):
        assert proc.poll() is None, proc.stderr
        assert time.monotonic() < deadline
        time.sleep(0.005)
    (registry,) = tmp.glob("postcompact-eval-*")
    made = {p.name for p in tmp.glob("postcompact-replay-*")}
    assert made <= {p.name for p in registry.iterdir()}
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert list(tmp.iterdir()) == []
    tmp.rmdir()


def test_eval_whose_every_replay_fails_says_so(tmp_path: Path) -> None:
    """A corpus that yields no row: one line per transcript and one saying so, exit 2."""
    agents = [r for n in range(257) for r in read(f"t{n}", f"{CWD}/a.ts", **_sidechain(f"x{n}"))]
    path = tmp_path / "agents.jsonl"
    path.write_bytes(jsonl([*agents, boundary(), *read("t9", f"{CWD}/a.ts")]))
    out = _cli("eval", "--quiet", str(path))
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    assert "TOO_MANY_AGENTS" in out.stderr
    assert "no compaction of the 1 transcripts could be scored" in out.stderr
