"""The core's one-call restoration (`core.restore_files`, restore/files.py `_rendered`) against
the general Python path it stands in for.

Every case compacts the same agent twice from the same state — once as the daemon does, once
with the core's path switched off — and requires the same answer byte for byte (the serialised
CompactResponse), the same cache afterwards and the same digests for the state database. A spy
counts the files the core took, so that a case meant for the core cannot pass by falling back,
and a case the core must leave to Python names the code it gave.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from postcompact import _core, core, profiles, render
from postcompact.config import Config
from postcompact.errors import FailedPrecondition
from postcompact.restore import files as restore_files_module
from postcompact.restore.pipeline import run_compact
from postcompact.service import files as service_files
from postcompact.service.files import FileService
from postcompact.service.sessions import SessionService
from postcompact.state import AgentState, Change, Session
from postcompact.state.registry import Registry
from postcompact.state.seen import saw
from postcompact.v1 import postcompact_pb2 as pb

MIB = 1024 * 1024
NOW = 1_767_000_000_000

PROFILES = {
    "default": pb.PROFILE_DEFAULT,
    "claude-code": pb.PROFILE_CLAUDE_CODE,
    "claude-code-2.1.88": pb.PROFILE_CLAUDE_CODE_2_1_88,
}
PROFILE_RULES = {name: profiles.rules(p) for name, p in PROFILES.items()}


def _code(result: object) -> bool | str:
    """True for a file the core answered; else the name of its `Skip` or `Refusal`."""
    if isinstance(result, core.Refusal):
        return repr(result.kind).rsplit(".", 1)[-1].lower()
    if isinstance(result, core.Skip):
        return repr(result).rsplit(".", 1)[-1].lower()
    return True


class Spy:
    """What `core.restore_files` answered, file by file (True: rendered; else the code)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.results: list[bool | str] = []
        real = _core.restore_files  # the extension's own (a Hypothesis example spies again)

        def spy(*args: Any, **kwargs: Any) -> list[Any]:
            out = real(*args, **kwargs)
            self.results.extend(_code(r) for r in out)
            return out

        monkeypatch.setattr(core, "restore_files", spy)


class Case:
    def __init__(self, root: Path, profile: pb.Profile.ValueType) -> None:
        self.root = root / "proj"
        self.root.mkdir(parents=True, exist_ok=True)
        (root / "plans").mkdir(exist_ok=True)
        self.session = Session(
            session_id="s1",
            cwd=str(self.root),
            home=str(root),
            roots=[str(self.root)],
            memory_paths=frozenset(),
            plans_directory=str(root / "plans"),
            # The default profile's match_budget runs Claude Code's file step too (its own core
            # calls): these tests compare one file step's two paths.
            policy=pb.RestorePolicy(match_budget=pb.HARNESS_RULE_NONE),
            profile=profile,
            created_at_ms=0,
            last_active_ms=0,
        )
        self.agent = AgentState(agent_id="", files=self.session.new_cache(100, 25 * MIB))
        self.session.agents[""] = self.agent

    def add(self, rel: str, data: bytes, ts: int, span: tuple[int, int] | None = None) -> str:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.agent.files.set(str(path), _core.FileState(data, ts, 1, None, False))
        if span is not None:
            saw(self.agent.seen, str(path), *span)
        return str(path)

    def rewrite(self, path: str, data: bytes) -> None:
        Path(path).write_bytes(data)

    async def compact(
        self,
        *,
        core_path: bool,
        policy: pb.RestorePolicy,
        include_content: bool = False,
        carry_memo: bool = False,
    ) -> tuple[bytes, list[tuple[str, bytes, int, int | None, int | None]], dict[str, bytes]]:
        """The answer, the cache after it, and the digests named for the store; from a copy of
        the agent's state (both runs start from the same one; with `carry_memo`, with the
        attachments the core rendered at the agent's last compaction)."""
        agent = AgentState(
            agent_id="",
            files=self.session.new_cache(100, 25 * MIB),
            seen=copy.deepcopy(self.agent.seen),
            rendered=dict(self.agent.rendered) if carry_memo else {},
        )
        for path, state in reversed(self.agent.files.snapshot()):
            agent.files.set(path, state)
        self.session.agents[""] = agent
        saved = restore_files_module.FileStep._rendered
        if not core_path:
            restore_files_module.FileStep._rendered = lambda *a, **k: {}  # type: ignore[method-assign]
        try:
            req = pb.CompactRequest(session_id="s1", include_content=include_content)
            result = await run_compact(self.session, agent, req, base_policy=policy)
        finally:
            restore_files_module.FileStep._rendered = saved  # type: ignore[method-assign]
        change = Change()
        result.apply(agent, change)
        cache = [(p, s.content, s.timestamp, s.offset, s.limit) for p, s in agent.files.snapshot()]
        digests = {p: d for p, (_, d) in change.digests.items()}
        return result.wire, cache, digests


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    # The default profile stamps restored files with the batch's read time: one for both runs.
    monkeypatch.setattr(restore_files_module, "now_ms", lambda: NOW)


async def same_both_ways(
    case: Case, policy: pb.RestorePolicy, spy: Spy, include_content: bool = False
) -> bytes:
    fast = await case.compact(core_path=True, policy=policy, include_content=include_content)
    slow = await case.compact(core_path=False, policy=policy, include_content=include_content)
    assert fast[0] == slow[0], "the answers differ"
    assert fast[1] == slow[1], "the caches differ"
    assert fast[2] == slow[2], "the digests differ"
    # The answer is a well-formed message that serialises back to the same bytes.
    assert pb.CompactResponse.FromString(fast[0]).SerializeToString() == fast[0]
    return fast[0]


WIDE = pb.RestorePolicy(max_files=20, file_token_budget=400_000, max_tokens_per_file=100_000)

# Lines of text with what the renderers treat specially: CRLF and lone CR, tabs, multi-byte and
# astral characters, quotes and backslashes (the JSON cost), control characters, "<" and the
# start of a reminder tag that does not close anything.
PIECES = [*'ab \t"\\é中😀<>/x\x01\x7f\u2028\r', "system-", "reminder", "</system-reminder>"]
LINE = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)


@st.composite
def texts(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(LINE, min_size=1, max_size=40))
    ends = draw(st.lists(st.sampled_from(["\n", "\r\n"]), min_size=len(lines), max_size=len(lines)))
    text = "".join(line + end for line, end in zip(lines, ends, strict=True))
    if draw(st.booleans()):
        text = text[:-1]  # no final newline (a CR may be left at the end)
    return text.encode()


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("include_content", [False, True])
async def test_ordinary_files_are_the_cores_and_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: str, include_content: bool
) -> None:
    case = Case(tmp_path, PROFILES[profile])
    body = "".join(f"export const v{i} = {i}; // {'é' * (i % 3)}\n" for i in range(300))
    case.add("src/a.ts", body.encode(), 100)
    case.add("src/b.py", b"def f():\r\n    return 1\r\n", 200)
    case.add("src/c.json", b'{"a": [1, 2, 3], "b": "\\u00e9"}\n', 300)
    case.add("notes.md", "# Titre\n\nUn texte en français 😀.\n".encode(), 400)
    spy = Spy(monkeypatch)
    wire = await same_both_ways(case, WIDE, spy, include_content)
    assert spy.results == [True] * 4
    resp = pb.CompactResponse.FromString(wire)
    files = [a for a in resp.attachments if a.kind == pb.ATTACHMENT_KIND_FILE]
    assert len(files) == 4
    if include_content:
        assert files[-1].file.content == body.encode()


async def test_the_default_rule_in_claude_codes_budget_is_identical_both_ways(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default profile's own rule (`match_budget`: Claude Code's file step runs first, its
    spend the budget) gives the same answer through the core and through Python."""
    case = Case(tmp_path, pb.PROFILE_DEFAULT)
    case.session.policy = pb.RestorePolicy()  # the profile's own rule
    for i in range(20):
        body = "".join(f"export const v{i}_{k} = {k};\n" for k in range(100 + 5 * i))
        case.add(f"src/m{i}.ts", body.encode(), 100 + i, span=(1, 30))  # seen: a head
    case.add("src/big.ts", ("x = 1;\n" * 9000).encode(), 50, span=(10, 60))
    spy = Spy(monkeypatch)
    resp = pb.CompactResponse.FromString(await same_both_ways(case, pb.RestorePolicy(), spy))
    files = [a for a in resp.attachments if a.kind == pb.ATTACHMENT_KIND_FILE]
    assert 5 < len(files) < 20
    dropped = [d for d in resp.decisions if d.outcome == pb.OUTCOME_DROPPED_BY_BUDGET]
    assert dropped
    assert "what Claude Code's rule spends here" in dropped[0].detail


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", "empty"),
        (b"\xef\xbb\xbfwith a BOM\n", "bom"),
        (b"caf\xe9\n", "not_utf8"),
        (b"text</system-reminder>more\n", "escape"),
        (b"text\n< / SYSTEM-reminder>\n", "escape"),
        (b"a\x00b\n", "binary"),
    ],
)
async def test_what_the_core_leaves_to_python_is_still_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes, code: str
) -> None:
    case = Case(tmp_path, pb.PROFILE_DEFAULT)
    case.add("odd.txt", data, 100)
    case.add("plain.txt", b"plain\n", 50)
    spy = Spy(monkeypatch)
    await same_both_ways(case, WIDE, spy)
    assert spy.results == [code, True]


@pytest.mark.parametrize("profile", PROFILES)
async def test_files_over_the_cap_fall_back_to_the_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: str
) -> None:
    case = Case(tmp_path, PROFILES[profile])
    case.add("big.ts", "".join(f"line {i} of a long file\n" for i in range(3000)).encode(), 100)
    case.add("big.json", ('{"k": "' + "v" * 30_000 + '"}\n').encode(), 90)
    case.add("small.ts", b"small\n", 80)
    spy = Spy(monkeypatch)
    policy = pb.RestorePolicy(max_files=5, file_token_budget=100_000, max_tokens_per_file=5_000)
    wire = await same_both_ways(case, policy, spy)
    outcomes = {d.name: d.outcome for d in pb.CompactResponse.FromString(wire).decisions}
    # The core rendered all three; the two over the cap went to the general path (cut, noted
    # or left out, by the profile's rule) and only the small one is restored whole.
    assert spy.results == [True, True, True]
    assert outcomes[str(case.root / "small.ts")] == pb.OUTCOME_RESTORED
    for big in ("big.ts", "big.json"):
        assert outcomes[str(case.root / big)] in (
            pb.OUTCOME_TRUNCATED,
            pb.OUTCOME_REFERENCED,
            pb.OUTCOME_DROPPED_OVER_CAP,
        )


async def test_ranges_and_seen_lines_are_the_cores_and_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = Case(tmp_path, pb.PROFILE_DEFAULT)
    body = "".join(f"line {i}\r\n" for i in range(1, 201)).encode()
    case.add("ranged.ts", body, 100, span=(50, 80))  # lines 50-80: from the middle
    case.add("head.ts", body, 90, span=(1, 201))  # every line (the last one empty): whole
    case.add("shrunk.ts", b"only\ntwo\n", 80, span=(1, 50))  # fewer lines than seen
    case.add("grown.ts", body, 70, span=(1, 20))  # a head of more: the marker, Python's
    spy = Spy(monkeypatch)
    wire = await same_both_ways(case, WIDE, spy)
    assert spy.results == [True, True, True, "head_only"]
    details = {d.name: d.detail for d in pb.CompactResponse.FromString(wire).decisions}
    assert details[str(case.root / "ranged.ts")].startswith("lines 50-80 of 201")


async def test_a_path_through_a_symlink_takes_the_general_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = Case(tmp_path, pb.PROFILE_DEFAULT)
    real = case.add("real/a.ts", b"through a link\n", 100)
    os.symlink(case.root / "real", case.root / "link")
    linked = str(case.root / "link" / "a.ts")
    case.agent.files.set(linked, _core.FileState(b"through a link\n", 200, 1, None, False))
    outside = tmp_path / "outside.ts"
    outside.write_bytes(b"secret\n")
    os.symlink(outside, case.root / "escape.ts")
    case.agent.files.set(
        str(case.root / "escape.ts"), _core.FileState(b"secret\n", 300, 1, None, False)
    )
    spy = Spy(monkeypatch)
    wire = await same_both_ways(case, WIDE, spy)
    assert spy.results == ["changed", "changed", True]
    outcomes = {d.name: d.outcome for d in pb.CompactResponse.FromString(wire).decisions}
    assert outcomes[str(case.root / "escape.ts")] == pb.OUTCOME_UNREADABLE
    assert outcomes[linked] == pb.OUTCOME_RESTORED
    assert outcomes[real] == pb.OUTCOME_RESTORED


@pytest.mark.parametrize("profile", PROFILES)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=texts(), first=st.integers(1, 12), extra=st.integers(0, 12))
async def test_any_text_is_identical_both_ways(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    profile: str,
    data: bytes,
    first: int,
    extra: int,
) -> None:
    case = Case(tmp_path_factory.mktemp("case"), PROFILES[profile])
    case.add("whole.txt", data, 100)
    case.add("part.txt", data, 90, span=(first, first + extra))
    spy = Spy(monkeypatch)
    await same_both_ways(case, WIDE, spy)
    # Text without a reminder tag is the core's; what it leaves names its reason (an empty
    # range is the past-the-end warning, Python's).
    if b"reminder" not in data and data.strip(b"\r"):
        assert spy.results[0] is True
    assert all(r is True or r in ("empty", "escape", "head_only") for r in spy.results)


def test_the_frame_is_what_file_blocks_wraps_the_numbered_text_in() -> None:
    for templates in (render.DEFAULT_TEMPLATES, render.CLAUDE_CODE_TEMPLATES):
        for malware in (True, False):
            frame = render.file_result_frame(templates, malware)
            assert frame is not None
            blocks = render.file_blocks(
                "/p/a.ts",
                "x\ny",
                total_lines=2,
                malware_reminder=malware,
                templates=templates,
            )
            assert blocks[1] == frame.prefix + "1\tx\n2\ty" + frame.malware + frame.suffix


# --- ReadFile ----------------------------------------------------------------------------------


class Reads:
    """One daemon's file service in-process: each read from a new agent, so that none is
    answered by the "unchanged" stub."""

    def __init__(self, root: Path, profile: pb.Profile.ValueType) -> None:
        self.root = root
        self.registry = Registry(Config())
        self.service = FileService(self.registry, self.registry.config)
        SessionService(self.registry, self.registry.config).open(
            pb.OpenSessionRequest(session_id="r", cwd=str(root), profile=profile)
        )
        self.agents = 0

    async def read(
        self, rel: str, offset: int | None, limit: int | None, *, core_path: bool
    ) -> tuple[bytes, tuple[bytes, int, int | None, int | None], Any]:
        self.agents += 1
        agent = f"a{self.agents}"
        SessionService(self.registry, self.registry.config).start_agent(
            pb.StartAgentRequest(session_id="r", agent_id=agent)
        )
        req = pb.ReadFileRequest(session_id="r", agent_id=agent, path=rel)
        if offset is not None:
            req.offset = offset
        if limit is not None:
            req.limit = limit
        saved = service_files._core_answer
        if not core_path:
            service_files._core_answer = lambda *a, **k: None
        try:
            got = await self.service.read_file(req)
        finally:
            service_files._core_answer = saved
        wire = got if isinstance(got, bytes) else got.SerializeToString()
        _, a = self.registry.agent("r", agent)
        e = a.files.peek(str(self.root / rel))
        assert e is not None
        return wire, (e.content, e.timestamp, e.offset, e.limit), a.seen.get(str(self.root / rel))


class ReadSpy:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.results: list[bool | str] = []
        real = _core.read_answer

        def spy(*args: Any) -> Any:
            out = real(*args)
            self.results.append(_code(out))
            return out

        monkeypatch.setattr(core, "read_answer", spy)


@pytest.fixture
def frozen_read_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_files, "now_ms", lambda: NOW)


async def read_both_ways(
    reads: Reads, rel: str, offset: int | None = None, limit: int | None = None
) -> bytes:
    fast = await reads.read(rel, offset, limit, core_path=True)
    slow = await reads.read(rel, offset, limit, core_path=False)
    assert fast == slow
    assert pb.ReadFileResponse.FromString(fast[0]).SerializeToString() == fast[0]
    return fast[0]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.usefixtures("frozen_read_clock")
async def test_read_file_answers_are_the_cores_and_identical(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: str
) -> None:
    body = "".join(f"const v{i} = {i}; // é😀\r\n" for i in range(400))
    (tmp_path / "a.ts").write_text(body, newline="")
    (tmp_path / "odd.txt").write_bytes(b"caf\xe9\n")
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfhi\n")
    (tmp_path / "big.ts").write_text("".join(f"let x{i} = {i};\n" for i in range(12_000)))
    reads = Reads(tmp_path, PROFILES[profile])
    spy = ReadSpy(monkeypatch)
    wire = await read_both_ways(reads, "a.ts")
    assert pb.ReadFileResponse.FromString(wire).content == body.encode()
    await read_both_ways(reads, "a.ts", 100, 50)
    await read_both_ways(reads, "a.ts", 1, 10)
    await read_both_ways(reads, "a.ts", 390, 50)
    await read_both_ways(reads, "odd.txt")
    await read_both_ways(reads, "bom.txt")
    assert spy.results == [True, True, True, True, "not_utf8", "bom"]
    # Over max_read_tokens: the core's answer is left for the first page, or the refusal.
    if PROFILE_RULES[profile].page_over_read_tokens:
        paged = pb.ReadFileResponse.FromString(await read_both_ways(reads, "big.ts"))
        assert paged.partial
    else:
        for core_path in (True, False):
            with pytest.raises(FailedPrecondition, match="exceeds maximum allowed tokens"):
                await reads.read("big.ts", None, None, core_path=core_path)
    assert spy.results[6] is True


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=texts(), offset=st.none() | st.integers(1, 12), limit=st.none() | st.integers(1, 12))
@pytest.mark.usefixtures("frozen_read_clock")
async def test_any_read_is_identical_both_ways(
    tmp_path_factory: pytest.TempPathFactory,
    data: bytes,
    offset: int | None,
    limit: int | None,
) -> None:
    root = tmp_path_factory.mktemp("reads")
    (root / "f.txt").write_bytes(data)
    await read_both_ways(Reads(root, pb.PROFILE_DEFAULT), "f.txt", offset, limit)


async def test_a_file_read_back_unchanged_keeps_the_content_object(tmp_path: Path) -> None:
    case = Case(tmp_path, pb.PROFILE_DEFAULT)
    same = case.add("same.ts", b"unchanged\n", 100)
    changed = case.add("changed.ts", b"before\n", 90)
    held = {p: s.content for p, s in case.agent.files.snapshot()}
    case.rewrite(changed, b"after\n")  # on disk only: the cache still holds b"before\n"
    result = await run_compact(case.session, case.agent, pb.CompactRequest(session_id="s1"))
    change = Change()
    result.apply(case.agent, change)
    entries = dict(case.agent.files.snapshot())
    assert entries[same].content is held[same]  # no copy, and the store sees it unchanged
    assert entries[changed].content == b"after\n"
    assert set(change.digests) == {changed}  # only the changed content is hashed


@pytest.mark.parametrize("profile", PROFILES)
async def test_a_file_unchanged_since_the_last_compaction_reuses_its_attachment(
    tmp_path: Path, profile: str
) -> None:
    """The second compaction of the same agent: the files read back unchanged take the
    attachment the core rendered at the first (nothing rendered again), the changed one is
    rendered anew, and the answer is byte for byte what the general path gives for that state."""
    case = Case(tmp_path, PROFILES[profile])
    kept = case.add("kept.ts", "".join(f"let k{i} = {i};\n" for i in range(200)).encode(), 100)
    changed = case.add("changed.ts", b"before\r\nafter\n", 90)
    req = pb.CompactRequest(session_id="s1")
    first = await run_compact(case.session, case.agent, req, base_policy=WIDE)
    first.apply(case.agent, Change())
    memo = dict(case.agent.rendered)
    assert set(memo) == {kept, changed}
    case.rewrite(changed, b"changed on disk\n")
    fast = await case.compact(core_path=True, policy=WIDE, carry_memo=True)
    slow = await case.compact(core_path=False, policy=WIDE)
    assert fast == slow
    second = await run_compact(case.session, case.agent, req, base_policy=WIDE)
    second.apply(case.agent, Change())
    assert case.agent.rendered[kept].framed is memo[kept].framed  # reused, not rendered
    assert case.agent.rendered[changed].framed is not memo[changed].framed


@pytest.mark.parametrize(
    "second",
    [
        # The file unchanged, but over the cap now: cut by the general path, not taken whole.
        pb.RestorePolicy(max_files=20, file_token_budget=400_000, max_tokens_per_file=50),
        # The file unchanged, its seen lines restored now: another detail, the same rendering.
        pb.RestorePolicy(
            max_files=20, file_token_budget=400_000, max_tokens_per_file=100_000, restore_seen=True
        ),
    ],
    ids=["cap", "restore_seen"],
)
async def test_a_memo_measured_under_other_facts_is_measured_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second: pb.RestorePolicy
) -> None:
    """What the last compaction made of a file's measures (its detail, its cost, that it fit the
    cap) is taken again only under the same facts: under another policy the file read back
    unchanged is measured again, and the answer is the general path's."""
    case = Case(tmp_path, pb.PROFILE_DEFAULT)
    kept = case.add("kept.ts", "".join(f"let k{i} = {i};\n" for i in range(200)).encode(), 100)
    req = pb.CompactRequest(session_id="s1")
    first = await run_compact(case.session, case.agent, req, base_policy=WIDE)
    first.apply(case.agent, Change())
    assert case.agent.rendered[kept].derived is not None
    spy = Spy(monkeypatch)
    fast = await case.compact(core_path=True, policy=second, carry_memo=True)
    slow = await case.compact(core_path=False, policy=second)
    assert spy.results == [True]  # read by the core, measured in Python again
    assert fast == slow
