"""Hypothesis fuzz of every RPC against a live daemon (issue 5, "Tests and runs").

For each method of PostcompactService, two bounded batches:

- typed: requests built by the generated stubs from strategies derived from the proto descriptor,
  biased towards what matters (ids of live and unknown sessions/agents; paths inside, outside,
  escaping, symlinked, denied, with NUL, huge or odd unicode; negative, zero and extreme
  integers; unknown enum numbers; random bytes; preserved messages with malformed input_json);
- raw: arbitrary bytes and protobuf-ish bytes (valid requests mutated, random tag/value runs)
  sent through a generic `channel.unary_unary` with identity serializers.

Every answer must be a response or an error whose status is neither INTERNAL nor UNKNOWN and
which carries the `postcompact-error-reason` trailer; after each batch the daemon must answer
health SERVING and a real call. Deterministic: `derandomize=True`, no example database. The number
of examples per batch is POSTCOMPACT_FUZZ_EXAMPLES (default 50 typed; raw gets 2/3 of it).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from postcompact_client.v1 import postcompact_pb2 as pb
from postcompact_client.v1 import postcompact_pb2_grpc as pb_grpc

from tests.daemon.conftest import RunningDaemon, short_dir, start_daemon

EXAMPLES = int(os.environ.get("POSTCOMPACT_FUZZ_EXAMPLES", "50"))
TYPED = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
RAW = settings(TYPED, max_examples=max(5, EXAMPLES * 2 // 3))

SERVICE = pb.DESCRIPTOR.services_by_name["PostcompactService"]
METHODS = [m.name for m in SERVICE.methods]
REASON_KEY = "postcompact-error-reason"
FORBIDDEN = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
SID = "fuzz-main"
SID_PLANS = "fuzz-plans"


@dataclass
class World:
    daemon: RunningDaemon
    root: Path
    outside: Path
    channel: grpc.Channel
    stub: pb_grpc.PostcompactServiceStub


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    root = short_dir("pcf")
    outside = short_dir("pcg")
    (outside / "secret.txt").write_text("OUTSIDE\n")
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("a = 1\n" * 50)
    (root / "notes.md").write_text("# notes\n\nünïcödé ✓\n")
    (root / "data.json").write_text('{"k": [1, 2, 3]}\n')
    (root / ".env").write_text("SECRET=1\n")
    (root / "bin.dat").write_bytes(b"\x00\x01\x02")
    (root / "big.txt").write_text("line\n" * 100_000)
    (root / "link-out.txt").symlink_to(outside / "secret.txt")
    (root / "dir-out").symlink_to(outside)
    os.mkfifo(root / "fifo")
    cfg = "[[hooks.session_start]]\ncommand = \"printf 'fuzz hook'\"\ntimeout_s = 5\n"
    d = start_daemon(config_toml=cfg)
    channel = grpc.insecure_channel(d.address)
    w = World(d, root, outside, channel, pb_grpc.PostcompactServiceStub(channel))
    ensure_pool(w)
    yield w
    channel.close()
    d.stop()
    for p in (d.dir, root, outside):
        shutil.rmtree(p, ignore_errors=True)


def ensure_pool(w: World) -> None:
    """The sessions and agents that valid-looking requests name (a fuzzed CloseSession may have
    closed them)."""
    w.stub.OpenSession(pb.OpenSessionRequest(session_id=SID, cwd=str(w.root)), timeout=30)
    w.stub.OpenSession(
        pb.OpenSessionRequest(
            session_id=SID_PLANS,
            cwd=str(w.root),
            roots=["src", "."],
            plans_directory=str(w.outside),
        ),
        timeout=30,
    )
    for sid in (SID, SID_PLANS):
        try:
            w.stub.StartAgent(pb.StartAgentRequest(session_id=sid, agent_id="sub"), timeout=30)
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.ALREADY_EXISTS:
                raise


# --- strategies --------------------------------------------------------------------------------

TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=60)
INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


def ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.one_of(
        st.integers(-3, 12),
        st.integers(0, 200_000),
        st.sampled_from([lo, hi, lo + 1, hi - 1, -1, 0, 1, 2**31 - 1, 2**32]).filter(
            lambda v: lo <= v <= hi
        ),
        st.integers(lo, hi),
    )


def paths(w: World) -> st.SearchStrategy[str]:
    r, o = str(w.root), str(w.outside)
    fixed = [
        "src/a.py",
        f"{r}/src/a.py",
        "./src/../src/a.py",
        " src/a.py \n",
        "notes.md",
        "data.json",
        ".env",
        f"{r}/.env",
        "bin.dat",
        "big.txt",
        "fifo",
        "link-out.txt",
        "dir-out/secret.txt",
        "src",
        "missing.txt",
        f"{o}/secret.txt",
        "/etc/passwd",
        "/dev/zero",
        "/proc/self/environ",
        "../../../../etc/shadow",
        "src/../../x",
        "~",
        "~/.ssh/id_rsa",
        "~root/x",
        "",
        " ",
        "\t\n",
        "a\x00b",
        "\x00",
        "/",
        "//",
        "x" * 5000,
        "a/" * 2000,  # (values stay under ~10 kB: hypothesis warns on a larger example repr)
        "caf\u0065\u0301.md",
        "\u202e.txt",
        "C:\\Windows\\system.ini",
        "file:///etc/passwd",
    ]
    return st.one_of(st.sampled_from(fixed), TEXT, TEXT.map(lambda t: f"{r}/{t}"))


def input_json(w: World) -> st.SearchStrategy[str]:
    return st.one_of(
        paths(w).map(lambda p: json.dumps({"file_path": p})),
        st.sampled_from(
            ["", "{", "[]", "null", '{"file_path": 5}', '{"file_path": null}', "1e999", '"x"']
        ),
        st.dictionaries(
            TEXT, st.none() | st.booleans() | st.integers() | TEXT | st.lists(TEXT, max_size=3)
        ).map(json.dumps),
        TEXT,
    )


def blob() -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.binary(max_size=300),
        TEXT.map(str.encode),
        st.sampled_from(
            [b"", b"\x00", b"\xff\xfe", b"\xe6\x97", b"a" * 9_000, "é✓\U0001f600".encode() * 500]
        ),
    )


def strings_for(name: str, w: World) -> st.SearchStrategy[str]:
    if name == "session_id":
        return st.one_of(st.sampled_from([SID, SID_PLANS, "", "nope", "a\nb", "x" * 300]), TEXT)
    if name.endswith("agent_id"):
        return st.one_of(st.sampled_from(["", "sub", "ghost", "\x7f", "x" * 300]), TEXT)
    if name in ("path", "plan_file_path", "cwd", "home", "plans_directory", "output_file_path"):
        return paths(w)
    if name in ("roots", "paths", "file_names"):
        return st.one_of(paths(w), st.sampled_from(["CLAUDE.md", "AGENTS.md", ".", ".."]))
    if name == "input_json":
        return input_json(w)
    if name == "encoding":
        return st.one_of(st.sampled_from(["", "o200k_base", "cl100k_base", "gpt2", "nope"]), TEXT)
    if name == "ext":
        return st.one_of(st.sampled_from(["", "json", "JSONL", ".jsonc", "py"]), TEXT)
    if name == "name":
        return st.one_of(st.sampled_from(["Read", "Write", "skill-a", ""]), TEXT)
    if name == "command":
        return st.one_of(st.sampled_from(["", "npx prettier --write .", "cargo fmt"]), TEXT)
    if name in ("skill_truncation_marker", "file_truncation_marker", "marker"):
        return st.one_of(
            st.sampled_from(["", "…", "{path} {next_offset} {shown_lines}", "{", "x" * 9_000]),
            TEXT,
        )
    return st.one_of(TEXT, st.sampled_from(["", "x" * 9_000]))


def field_value(f: FieldDescriptor, w: World, depth: int) -> st.SearchStrategy[Any]:
    t = f.type
    if t == FieldDescriptor.TYPE_MESSAGE:
        assert f.message_type is not None
        return message_of(f.message_type, w, depth + 1)
    if t == FieldDescriptor.TYPE_ENUM:
        assert f.enum_type is not None
        known = [v.number for v in f.enum_type.values]
        return st.one_of(st.sampled_from(known), ints(*INT32))
    if t == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if t == FieldDescriptor.TYPE_STRING:
        return strings_for(f.name, w)
    if t == FieldDescriptor.TYPE_BYTES:
        return blob()
    if t in (
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SFIXED32,
    ):
        return ints(*INT32)
    if t in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32):
        return ints(0, 2**32 - 1)
    if t in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64):
        return ints(0, 2**64 - 1)
    if t in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.floats(width=32 if t == FieldDescriptor.TYPE_FLOAT else 64)
    return ints(*INT64)


_MAX_DEPTH = 4


def live_ids(w: World) -> dict[str, st.SearchStrategy[Any]]:
    """Fields pinned to live values in the "mostly valid" half of the requests, so that the
    fuzz gets past the session lookup into the handlers' real work."""
    good_paths = st.sampled_from(
        ["src/a.py", "notes.md", "data.json", ".env", "big.txt", "link-out.txt", "fifo", "new.txt"]
    )
    return {
        "session_id": st.sampled_from([SID, SID, SID_PLANS]),
        "agent_id": st.sampled_from(["", "", "sub"]),
        "path": st.one_of(good_paths, paths(w)),
        "cwd": st.just(str(w.root)),
    }


def message_of(
    desc: Descriptor, w: World, depth: int = 0, *, pinned: bool = False
) -> st.SearchStrategy[Message]:
    cls = message_factory.GetMessageClass(desc)
    if depth > _MAX_DEPTH:
        return st.just(cls())
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    live = live_ids(w) if pinned else {}
    maps: set[str] = set()
    for f in desc.fields:
        if f.name in live:
            required[f.name] = live[f.name]
            continue
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            # A map (string -> string here, e.g. TemplateSpec.strings): known keys and any.
            keys = st.one_of(st.sampled_from(["read_call", "read_tool_name", "preset"]), TEXT)
            optional[f.name] = st.dictionaries(keys, TEXT, max_size=3)
            maps.add(f.name)
            continue
        value = field_value(f, w, depth)
        if f.is_repeated:
            value = st.lists(value, max_size=4 if depth < 2 else 2)
        optional[f.name] = value

    def build(values: dict[str, Any]) -> Message:
        m = cls()
        for name, v in values.items():
            f = desc.fields_by_name[name]
            if name in maps:
                getattr(m, name).update(v)
                continue
            target = getattr(m, name) if f.type == FieldDescriptor.TYPE_MESSAGE else None
            if f.is_repeated:
                if target is not None:
                    for item in v:
                        target.add().CopyFrom(item)
                else:
                    getattr(m, name).extend(v)
            elif target is not None:
                target.CopyFrom(v)
            else:
                setattr(m, name, v)
        return m

    return st.fixed_dictionaries(required, optional=optional).map(build)


def requests(desc: Descriptor, w: World) -> st.SearchStrategy[Message]:
    """Half mostly valid (live session and agent ids, real paths), half anything."""
    return st.one_of(message_of(desc, w, pinned=True), message_of(desc, w))


def raw_bytes(w: World, desc: Descriptor) -> st.SearchStrategy[bytes]:
    def varint(n: int) -> bytes:
        out = bytearray()
        n &= (1 << 64) - 1
        while True:
            b = n & 0x7F
            n >>= 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    field = st.tuples(st.integers(1, 40), st.integers(0, 7), st.binary(max_size=40), ints(*INT64))

    def protobufish(fields: list[tuple[int, int, bytes, int]]) -> bytes:
        out = bytearray()
        for num, wire, data, n in fields:
            out += varint(num << 3 | wire)
            if wire == 0:
                out += varint(n)
            elif wire == 2:
                out += varint(len(data) if n % 5 else n & 0xFFFFFFFF) + data
            elif wire == 1:
                out += data[:8].ljust(8, b"\0")
            elif wire == 5:
                out += data[:4].ljust(4, b"\0")
            else:
                out += data
        return bytes(out)

    def mutate(raw: bytes, cuts: list[tuple[int, int]]) -> bytes:
        b = bytearray(raw)
        for pos, val in cuts:
            if not b:
                break
            i = pos % len(b)
            if val < 256:
                b[i] = val
            elif val < 300:
                del b[i:]
            else:
                b[i:i] = bytes([val & 0xFF])
        return bytes(b)

    valid = requests(desc, w).map(lambda m: m.SerializeToString())
    return st.one_of(
        st.binary(max_size=200),
        st.lists(field, max_size=8).map(protobufish),
        st.tuples(
            valid,
            st.lists(
                st.tuples(st.integers(0, 10_000), st.integers(0, 400)), min_size=1, max_size=4
            ),
        ).map(lambda t: mutate(*t)),
    )


# --- checks ------------------------------------------------------------------------------------


def check_call(method: str, fn: Callable[[], Any]) -> None:
    try:
        fn()
    except grpc.RpcError as exc:
        e: Any = exc
        code = e.code()
        assert code not in FORBIDDEN, f"{method}: {code} {e.details()}"
        trailers = dict(e.trailing_metadata() or ())
        assert trailers.get(REASON_KEY), f"{method}: {code} without a reason: {e.details()}"


def check_healthy(w: World) -> None:
    health = health_pb2_grpc.HealthStub(w.channel)
    for service in ("", "postcompact.v1.PostcompactService"):
        r = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
        assert r.status == health_pb2.HealthCheckResponse.SERVING
    assert w.stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=10).pid == w.daemon.proc.pid
    ensure_pool(w)
    got = w.stub.ReadFile(pb.ReadFileRequest(session_id=SID, path="notes.md"), timeout=10)
    assert got.content == (w.root / "notes.md").read_bytes() or got.unchanged
    assert w.daemon.proc.poll() is None


@pytest.mark.parametrize("method", METHODS)
def test_fuzz_typed_requests(world: World, method: str) -> None:
    desc = SERVICE.methods_by_name[method].input_type
    call = getattr(world.stub, method)

    @TYPED
    @given(req=requests(desc, world))
    def run(req: Message) -> None:
        if method == "CloseSession":
            ensure_pool(world)
        check_call(method, lambda: call(req, timeout=30))

    run()
    check_healthy(world)


@pytest.mark.parametrize("method", METHODS)
def test_fuzz_raw_bytes(world: World, method: str) -> None:
    desc = SERVICE.methods_by_name[method].input_type
    call: Any = world.channel.unary_unary(
        f"/{SERVICE.full_name}/{method}",
        request_serializer=None,  # identity: the bytes go on the wire as they are
        response_deserializer=None,
    )

    @RAW
    @given(raw=raw_bytes(world, desc))
    def run(raw: bytes) -> None:
        check_call(method, lambda: call(raw, timeout=30))

    run()
    check_healthy(world)


def test_fuzz_call_sequences(world: World) -> None:
    """Short random sequences of typed calls on the same live sessions: bugs that need one call's
    state to trip another (e.g. a skill recorded at the int64 maximum, then one at "now")."""
    descs = {m: SERVICE.methods_by_name[m].input_type for m in METHODS}
    call = st.sampled_from(METHODS).flatmap(
        lambda m: st.tuples(st.just(m), message_of(descs[m], world, pinned=True))
    )

    @settings(TYPED, max_examples=max(10, EXAMPLES // 2))
    @given(calls=st.lists(call, min_size=2, max_size=8))
    def run(calls: list[tuple[str, Message]]) -> None:
        ensure_pool(world)
        for method, req in calls:
            check_call(method, functools.partial(getattr(world.stub, method), req, timeout=30))

    run()
    check_healthy(world)


def test_extreme_values_in_sequence(world: World) -> None:
    """Regression: int64 extremes across calls (a skill recorded at 2**63-1, then one at "now",
    used to be INTERNAL: "now" became 2**63, which SQLite cannot store)."""
    ensure_pool(world)
    top = 2**63 - 1
    ids: dict[str, Any] = {"session_id": SID, "agent_id": "sub"}
    huge = pb.RestorePolicy(
        max_files=2**31 - 1,
        file_token_budget=top,
        max_tokens_per_file=top,
        max_tokens_per_skill=top,
        skills_token_budget=top,
        max_file_size_bytes=top,
    )
    tiny = pb.RestorePolicy(max_tokens_per_file=1, max_tokens_per_skill=1, max_file_size_bytes=1)
    task = pb.Task(task_id="t", task_type="local_agent", status=pb.TASK_STATUS_RUNNING)
    calls: list[tuple[str, Message]] = [
        ("RecordSkill", pb.RecordSkillRequest(**ids, name="a", invoked_at_ms=top)),
        ("RecordSkill", pb.RecordSkillRequest(**ids, name="b")),
        ("RecordSkill", pb.RecordSkillRequest(**ids, name="c")),
        (
            "RecordRead",
            pb.RecordReadRequest(**ids, path="notes.md", timestamp_ms=top, offset=top, limit=top),
        ),
        ("RecordWrite", pb.RecordWriteRequest(**ids, path="src/a.py", timestamp_ms=top)),
        ("CheckWrite", pb.CheckWriteRequest(**ids, path="notes.md")),
        ("CheckStale", pb.CheckStaleRequest(**ids, started_at_ms=top)),
        ("ReadFile", pb.ReadFileRequest(**ids, path="notes.md", offset=top, limit=top)),
        ("UpsertTask", pb.UpsertTaskRequest(session_id=SID, task=task)),
        ("Compact", pb.CompactRequest(**ids, policy=huge)),
        ("PreviewCompact", pb.PreviewCompactRequest(session_id=SID, agent_id="sub", policy=tiny)),
        (
            "TruncateTokens",
            pb.TruncateTokensRequest(
                text=b"x" * 100, max_tokens=top, counter=pb.TOKEN_COUNTER_EXACT
            ),
        ),
    ]
    for method, req in calls:
        check_call(method, functools.partial(getattr(world.stub, method), req, timeout=30))
    check_healthy(world)
