"""The core's file answers (`core.restore_files`, `core.read_file`): what a Compact restores of
each file and what ReadFile answers, for every kind of file — ordinary text, text the renderer
treats specially (invalid UTF-8, a byte-order mark, closing reminder tags, `\\r` line ends, no
text at all), ranges, files over the caps, paths through symlinks — and the memo of the last
compaction's attachments. Every answer is a well-formed message that serialises back to the
same bytes.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from postcompact import _core, profiles, render
from postcompact.config import Config
from postcompact.errors import FailedPrecondition
from postcompact.restore import file_step as restore_files_module
from postcompact.restore.context import CompactContext
from postcompact.restore.pipeline import run_compact
from postcompact.restore.policy import profile_policy
from postcompact.service import files as service_files
from postcompact.service.files import FileService
from postcompact.service.sessions import SessionService
from postcompact.state import AgentState, Change, Session
from postcompact.state.registry import Registry
from postcompact.state.seen import saw
from postcompact.state.worker import finish_inline as done
from postcompact.v1 import postcompact_pb2 as pb

MIB = 1024 * 1024
NOW = 1_767_000_000_000

PROFILES = {
    "default": pb.PROFILE_DEFAULT,
    "claude-code": pb.PROFILE_CLAUDE_CODE,
    "claude-code-2.1.88": pb.PROFILE_CLAUDE_CODE_2_1_88,
}
PROFILE_RULES = {name: profiles.rules(p) for name, p in PROFILES.items()}
# Whether the malware reminder follows a file's text, by profile.
MALWARE = {name: profile_policy(p).malware_reminder for name, p in PROFILES.items()}


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
            # The default profile's match_budget runs Claude Code's file step first: these tests
            # look at one file step.
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
        policy: pb.RestorePolicy,
        include_content: bool = False,
        carry_memo: bool = False,
    ) -> tuple[bytes, list[tuple[str, bytes, int, int | None, int | None]], dict[str, bytes]]:
        """The answer, the cache after it, and the digests named for the store; from a copy of
        the agent's state (with `carry_memo`, with the attachments the core rendered at the
        agent's last compaction)."""
        agent = AgentState(
            agent_id="",
            files=self.session.new_cache(100, 25 * MIB),
            seen=copy.deepcopy(self.agent.seen),
            rendered=dict(self.agent.rendered) if carry_memo else {},
        )
        for path, state in reversed(self.agent.files.snapshot()):
            agent.files.set(path, state)
        self.session.agents[""] = agent
        req = pb.CompactRequest(session_id="s1", include_content=include_content)
        ctx = CompactContext.of(self.session, req, daemon_policy=policy)
        result = await run_compact(ctx, self.session, agent, req)
        change = Change()
        result.apply(agent, change)
        cache = [(p, s.content, s.timestamp, s.offset, s.limit) for p, s in agent.files.snapshot()]
        digests = {p: d for p, (_, d) in change.digests.items()}
        # The answer is a well-formed message that serialises back to the same bytes.
        assert pb.CompactResponse.FromString(result.wire).SerializeToString() == result.wire
        return result.wire, cache, digests


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    # The default profile stamps restored files with the batch's read time.
    monkeypatch.setattr(restore_files_module, "now_ms", lambda: NOW)


def _files(wire: bytes) -> dict[str, pb.Attachment]:
    resp = pb.CompactResponse.FromString(wire)
    return {a.file.path: a for a in resp.attachments if a.kind == pb.ATTACHMENT_KIND_FILE}


def _decisions(wire: bytes) -> dict[str, pb.Decision]:
    return {d.name: d for d in pb.CompactResponse.FromString(wire).decisions}


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
async def test_ordinary_files_are_restored_whole(
    tmp_path: Path, profile: str, include_content: bool
) -> None:
    case = Case(tmp_path, PROFILES[profile])
    body = "".join(f"export const v{i} = {i}; // {'é' * (i % 3)}\n" for i in range(300))
    a = case.add("src/a.ts", body.encode(), 100)
    case.add("src/b.py", b"def f():\r\n    return 1\r\n", 200)
    case.add("src/c.json", b'{"a": [1, 2, 3], "b": "\\u00e9"}\n', 300)
    case.add("notes.md", "# Titre\n\nUn texte en français 😀.\n".encode(), 400)
    wire, cache, _ = await case.compact(policy=WIDE, include_content=include_content)
    files = _files(wire)
    assert len(files) == 4
    assert all(d.outcome == pb.OUTCOME_RESTORED for d in _decisions(wire).values())
    templates = PROFILE_RULES[profile].templates
    assert list(files[a].blocks) == render.file_blocks(
        a, body, total_lines=301, templates=templates, malware_reminder=MALWARE[profile]
    )
    assert files[a].file.content == (body.encode() if include_content else b"")
    assert dict((p, c) for p, c, *_ in cache)[a] == body.encode()  # the bytes on disk


async def test_the_default_rule_in_claude_codes_budget(tmp_path: Path) -> None:
    """The default profile's own rule (`match_budget`: Claude Code's file step runs first, its
    spend the budget)."""
    case = Case(tmp_path, pb.PROFILE_DEFAULT)
    case.session.policy = pb.RestorePolicy()  # the profile's own rule
    for i in range(20):
        body = "".join(f"export const v{i}_{k} = {k};\n" for k in range(100 + 5 * i))
        case.add(f"src/m{i}.ts", body.encode(), 100 + i, span=(1, 30))  # seen: a head
    case.add("src/big.ts", ("x = 1;\n" * 9000).encode(), 50, span=(10, 60))
    wire, _, _ = await case.compact(policy=pb.RestorePolicy())
    resp = pb.CompactResponse.FromString(wire)
    files = [a for a in resp.attachments if a.kind == pb.ATTACHMENT_KIND_FILE]
    assert 5 < len(files) < 20
    dropped = [d for d in resp.decisions if d.outcome == pb.OUTCOME_DROPPED_BY_BUDGET]
    assert dropped
    assert "what Claude Code's rule spends here" in dropped[0].detail


async def test_text_the_renderer_treats_specially(tmp_path: Path) -> None:
    """No text (the empty-file warning), a byte-order mark (not shown), invalid UTF-8 (shown as
    replacement characters, the bytes on disk kept), closing reminder tags (escaped, with the
    note), `\\r` line ends (removed), a NUL byte (a binary, not restored)."""
    case = Case(tmp_path, pb.PROFILE_DEFAULT)
    empty = case.add("empty.txt", b"", 100)
    bom = case.add("bom.txt", b"\xef\xbb\xbfwith a BOM\n", 99)
    latin = case.add("latin.txt", b"caf\xe9\r\n", 98)
    tag = case.add("tag.txt", b"text</system-reminder>more\n", 97)
    spaced = case.add("spaced.txt", b"text\n< / SYSTEM-reminder>\n", 96)
    binary = case.add("nul.txt", b"a\x00b\n", 95)
    wire, cache, _ = await case.compact(policy=WIDE, include_content=True)
    files, decisions = _files(wire), _decisions(wire)
    t = render.DEFAULT_TEMPLATES
    assert t.empty_file_warning in files[empty].blocks[1]
    assert "1\twith a BOM\n" in files[bom].blocks[1]
    assert "\ufeff" not in files[bom].blocks[1]
    assert files[bom].file.content == "\ufeffwith a BOM\n".encode()  # the text as attached
    assert "1\tcaf\ufffd\n2\t" in files[latin].blocks[1]
    assert dict((p, c) for p, c, *_ in cache)[latin] == b"caf\xe9\r\n"
    for path in (tag, spaced):
        blocks = files[path].blocks
        assert len(blocks) == 3
        assert "&lt;" in blocks[1]
        assert blocks[2] == render.wrap_system_reminder(t.escaped_note.format(path=path), t)
    assert list(files[tag].blocks) == render.file_blocks(
        tag, "text</system-reminder>more\n", total_lines=2, malware_reminder=MALWARE["default"]
    )
    assert binary not in files
    assert decisions[binary].outcome == pb.OUTCOME_BINARY


@pytest.mark.parametrize("profile", PROFILES)
async def test_files_over_the_cap_are_cut_noted_or_left_out(tmp_path: Path, profile: str) -> None:
    case = Case(tmp_path, PROFILES[profile])
    case.add("big.ts", "".join(f"line {i} of a long file\n" for i in range(3000)).encode(), 100)
    case.add("big.json", ('{"k": "' + "v" * 30_000 + '"}\n').encode(), 90)
    case.add("small.ts", b"small\n", 80)
    policy = pb.RestorePolicy(max_files=5, file_token_budget=100_000, max_tokens_per_file=5_000)
    wire, _, _ = await case.compact(policy=policy)
    decisions = _decisions(wire)
    assert decisions[str(case.root / "small.ts")].outcome == pb.OUTCOME_RESTORED
    for big in ("big.ts", "big.json"):
        d = decisions[str(case.root / big)]
        assert d.outcome in (
            pb.OUTCOME_TRUNCATED,
            pb.OUTCOME_REFERENCED,
            pb.OUTCOME_DROPPED_OVER_CAP,
        )
        assert "over the 5000-token cap" in d.detail
    truncated = [a for a in _files(wire).values() if a.file.truncated]
    for att in truncated:
        assert att.tokens <= 5_000
        assert "truncated" in att.blocks[1]


async def test_ranges_and_seen_lines(tmp_path: Path) -> None:
    case = Case(tmp_path, pb.PROFILE_DEFAULT)
    body = "".join(f"line {i}\r\n" for i in range(1, 201)).encode()
    ranged = case.add("ranged.ts", body, 100, span=(50, 80))  # lines 50-80: from the middle
    head = case.add("head.ts", body, 90, span=(1, 201))  # every line (the last one empty): whole
    shrunk = case.add("shrunk.ts", b"only\ntwo\n", 80, span=(1, 50))  # fewer lines than seen
    grown = case.add("grown.ts", body, 70, span=(1, 20))  # a head of more: with the marker
    wire, cache, _ = await case.compact(policy=WIDE)
    files, decisions = _files(wire), _decisions(wire)
    assert decisions[ranged].detail.startswith("lines 50-80 of 201")
    assert files[ranged].file.start_line == 50
    assert files[ranged].file.num_lines == 31
    assert '"offset":50,"limit":31' in files[ranged].blocks[0]
    assert files[ranged].blocks[1].count("\n5") >= 10  # numbered from line 50
    assert decisions[head].outcome == pb.OUTCOME_RESTORED
    assert decisions[shrunk].outcome == pb.OUTCOME_RESTORED
    assert decisions[grown].outcome == pb.OUTCOME_TRUNCATED
    assert files[grown].file.num_lines == 20
    entries = {p: (c, o, lim) for p, c, _, o, lim in cache}
    assert entries[ranged][1:] == (50, 31)
    assert entries[grown] == (b"\r\n".join(body.split(b"\r\n")[:20]), 1, 20)


async def test_paths_through_symlinks(tmp_path: Path) -> None:
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
    wire, _, _ = await case.compact(policy=WIDE)
    outcomes = {d.name: d.outcome for d in pb.CompactResponse.FromString(wire).decisions}
    assert outcomes[str(case.root / "escape.ts")] == pb.OUTCOME_UNREADABLE
    assert outcomes[linked] == pb.OUTCOME_RESTORED
    assert outcomes[real] == pb.OUTCOME_RESTORED
    assert b"secret" not in wire


@pytest.mark.parametrize("profile", PROFILES)
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=texts(), first=st.integers(1, 12), extra=st.integers(0, 12))
async def test_any_text_is_restored(
    tmp_path_factory: pytest.TempPathFactory,
    profile: str,
    data: bytes,
    first: int,
    extra: int,
) -> None:
    case = Case(tmp_path_factory.mktemp("case"), PROFILES[profile])
    whole = case.add("whole.txt", data, 100)
    part = case.add("part.txt", data, 90, span=(first, first + extra))
    wire, _, _ = await case.compact(policy=WIDE)
    decisions, files = _decisions(wire), _files(wire)
    assert decisions[whole].outcome == pb.OUTCOME_RESTORED
    assert decisions[part].outcome in (pb.OUTCOME_RESTORED, pb.OUTCOME_TRUNCATED)
    text = render.strip_cr(data.decode("utf-8", "replace"))
    templates = PROFILE_RULES[profile].templates
    total = data.count(b"\n") + 1 if data else 0
    assert list(files[whole].blocks) == render.file_blocks(
        whole, text, total_lines=total, templates=templates, malware_reminder=MALWARE[profile]
    )


# --- ReadFile ----------------------------------------------------------------------------------


class Reads:
    """One daemon's file service in-process: each read from a new agent, so that none is
    answered by the "unchanged" stub."""

    def __init__(self, root: Path, profile: pb.Profile.ValueType) -> None:
        self.root = root
        self.registry = Registry(Config())
        self.service = FileService(self.registry, self.registry.config)
        done(
            SessionService(self.registry, self.registry.config).open(
                pb.OpenSessionRequest(session_id="r", cwd=str(root), profile=profile)
            )
        )
        self.agents = 0

    async def read(self, rel: str, offset: int | None = None, limit: int | None = None) -> bytes:
        self.agents += 1
        agent = f"a{self.agents}"
        await SessionService(self.registry, self.registry.config).start_agent(
            pb.StartAgentRequest(session_id="r", agent_id=agent)
        )
        req = pb.ReadFileRequest(session_id="r", agent_id=agent, path=rel)
        if offset is not None:
            req.offset = offset
        if limit is not None:
            req.limit = limit
        got = await self.service.read_file(req)
        wire = got if isinstance(got, bytes) else got.SerializeToString()
        assert pb.ReadFileResponse.FromString(wire).SerializeToString() == wire
        return wire


@pytest.fixture
def frozen_read_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_files, "now_ms", lambda: NOW)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.usefixtures("frozen_read_clock")
async def test_read_file_answers(tmp_path: Path, profile: str) -> None:
    body = "".join(f"const v{i} = {i}; // é😀\r\n" for i in range(400))
    (tmp_path / "a.ts").write_text(body, newline="")
    (tmp_path / "odd.txt").write_bytes(b"caf\xe9\n")
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfhi\n")
    (tmp_path / "big.ts").write_text("".join(f"let x{i} = {i};\n" for i in range(12_000)))
    reads = Reads(tmp_path, PROFILES[profile])
    whole = pb.ReadFileResponse.FromString(await reads.read("a.ts"))
    assert whole.content == body.encode()
    assert whole.num_lines == whole.total_lines == 401
    templates = PROFILE_RULES[profile].templates
    assert whole.text.decode() == render.read_tool_result(
        body, total_lines=401, templates=templates, malware_reminder=MALWARE[profile]
    )
    ranged = pb.ReadFileResponse.FromString(await reads.read("a.ts", 100, 50))
    assert ranged.text.decode().startswith("100\tconst v99 = 99;")
    assert (ranged.start_line, ranged.num_lines) == (100, 50)
    tail = pb.ReadFileResponse.FromString(await reads.read("a.ts", 390, 50))
    assert tail.num_lines == 12
    odd = pb.ReadFileResponse.FromString(await reads.read("odd.txt"))
    assert odd.text.decode().startswith("1\tcaf\ufffd\n2\t")
    assert odd.content == b"caf\xe9\n"
    bom = pb.ReadFileResponse.FromString(await reads.read("bom.txt"))
    assert bom.text.decode().startswith("1\thi\n")
    # Over max_read_tokens: the first page, or the refusal.
    if PROFILE_RULES[profile].page_over_read_tokens:
        paged = pb.ReadFileResponse.FromString(await reads.read("big.ts"))
        assert paged.partial
        assert 0 < paged.num_lines < paged.total_lines
    else:
        with pytest.raises(FailedPrecondition, match="exceeds maximum allowed tokens"):
            await reads.read("big.ts")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=texts(), offset=st.none() | st.integers(1, 12), limit=st.none() | st.integers(1, 12))
@pytest.mark.usefixtures("frozen_read_clock")
async def test_any_read_is_answered(
    tmp_path_factory: pytest.TempPathFactory,
    data: bytes,
    offset: int | None,
    limit: int | None,
) -> None:
    root = tmp_path_factory.mktemp("reads")
    (root / "f.txt").write_bytes(data)
    got = pb.ReadFileResponse.FromString(await Reads(root, pb.PROFILE_DEFAULT).read("f.txt"))
    assert got.content == data
    await Reads(root, pb.PROFILE_DEFAULT).read("f.txt", offset, limit)


# --- the memo of the last compaction -----------------------------------------------------------


async def test_a_file_read_back_unchanged_keeps_the_content_object(tmp_path: Path) -> None:
    case = Case(tmp_path, pb.PROFILE_DEFAULT)
    same = case.add("same.ts", b"unchanged\n", 100)
    changed = case.add("changed.ts", b"before\n", 90)
    held = {p: s.content for p, s in case.agent.files.snapshot()}
    case.rewrite(changed, b"after\n")  # on disk only: the cache still holds b"before\n"
    req = pb.CompactRequest(session_id="s1")
    result = await run_compact(CompactContext.of(case.session, req), case.session, case.agent, req)
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
    rendered anew, and the answer is what a compaction without the memo gives."""
    case = Case(tmp_path, PROFILES[profile])
    kept = case.add("kept.ts", "".join(f"let k{i} = {i};\n" for i in range(200)).encode(), 100)
    changed = case.add("changed.ts", b"before\r\nafter\n", 90)
    req = pb.CompactRequest(session_id="s1")
    first = await run_compact(
        CompactContext.of(case.session, req, daemon_policy=WIDE), case.session, case.agent, req
    )
    first.apply(case.agent, Change())
    memo = dict(case.agent.rendered)
    assert set(memo) == {kept, changed}
    case.rewrite(changed, b"changed on disk\n")
    with_memo = await case.compact(policy=WIDE, carry_memo=True)
    without = await case.compact(policy=WIDE)
    assert with_memo == without
    second = await run_compact(
        CompactContext.of(case.session, req, daemon_policy=WIDE), case.session, case.agent, req
    )
    second.apply(case.agent, Change())
    assert case.agent.rendered[kept].framed is memo[kept].framed  # reused, not rendered
    assert case.agent.rendered[changed].framed is not memo[changed].framed


@pytest.mark.parametrize(
    "second",
    [
        # The file unchanged, but over the cap now: cut, not taken whole.
        pb.RestorePolicy(max_files=20, file_token_budget=400_000, max_tokens_per_file=50),
        # The file unchanged, its seen lines restored now: another detail, the same rendering.
        pb.RestorePolicy(
            max_files=20, file_token_budget=400_000, max_tokens_per_file=100_000, restore_seen=True
        ),
    ],
    ids=["cap", "restore_seen"],
)
async def test_a_memo_made_under_other_inputs_is_not_taken(
    tmp_path: Path, second: pb.RestorePolicy
) -> None:
    """What the last compaction made of a file (its attachment, detail, cost, that it fit the
    cap) is taken again only under the same inputs: under another policy the answer is the
    one a compaction without the memo gives."""
    case = Case(tmp_path, pb.PROFILE_DEFAULT)
    kept = case.add("kept.ts", "".join(f"let k{i} = {i};\n" for i in range(200)).encode(), 100)
    req = pb.CompactRequest(session_id="s1")
    first = await run_compact(
        CompactContext.of(case.session, req, daemon_policy=WIDE), case.session, case.agent, req
    )
    first.apply(case.agent, Change())
    assert kept in case.agent.rendered
    with_memo = await case.compact(policy=second, carry_memo=True)
    without = await case.compact(policy=second)
    assert with_memo == without
