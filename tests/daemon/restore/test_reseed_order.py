"""Compact's re-seed keeps the restored rank order (restore/file_step.py, step 6).

Two successive compactions with no reads in between restore the same files in the same order —
under the default profile (one read time for the whole batch) and under claude-code (the files'
mtimes, here all equal so that only the insertion order can break the ties) — and so does a
compaction after the state database was reloaded.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from postcompact import _core
from postcompact.config import Config
from postcompact.persist import SqliteStore
from postcompact.restore.context import CompactContext
from postcompact.restore.pipeline import run_compact
from postcompact.service.sessions import SessionService
from postcompact.state import AgentState, Session
from postcompact.state.registry import Registry
from postcompact.state.worker import finish_inline as done
from postcompact.v1 import postcompact_pb2 as pb

FILES = [f"src/m{i}.ts" for i in range(8)]  # read in this order: m7 is the most recent
MTIME_NS = 1_700_000_000_000 * 1_000_000


def _project(root: Path) -> list[str]:
    paths: list[str] = []
    for rel in FILES:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"// {rel}\nexport const x = {len(paths)};\n")
        os.utime(p, ns=(MTIME_NS, MTIME_NS))  # one mtime for all: ties everywhere
        paths.append(str(p))
    return paths


def _open(reg: Registry, root: Path, profile: pb.Profile.ValueType) -> Session:
    # Five of the project's files come back (Claude Code's max_files, the default's too here).
    policy = pb.RestorePolicy(max_files=5)
    req = pb.OpenSessionRequest(session_id="s", cwd=str(root), profile=profile, policy=policy)
    s, _ = done(SessionService(reg, reg.config).open(req))
    return s


def _read(a: AgentState, path: str, ts: int) -> None:
    a.files.set(path, _core.FileState(Path(path).read_bytes(), ts, 1, None, False))


def _read_all(a: AgentState, paths: list[str], profile: pb.Profile.ValueType) -> None:
    for i, p in enumerate(paths):
        _read(a, p, MTIME_NS // 1_000_000 if profile == pb.PROFILE_CLAUDE_CODE else 1_000 + i)


async def _compact(reg: Registry, s: Session, a: AgentState) -> list[str]:
    async with reg.mutate(s, a) as change:  # as Compact applies and stores it
        req = pb.CompactRequest(session_id="s", skip_hooks=True)
        result = await run_compact(CompactContext.of(s, req), s, a, req)
        result.apply(a, change)
    resp = result.response
    return [att.file.path for att in resp.attachments if att.HasField("file")]


PROFILES = [pb.PROFILE_DEFAULT, pb.PROFILE_CLAUDE_CODE]


@pytest.mark.parametrize("profile", PROFILES, ids=["default", "claude-code"])
async def test_successive_compactions_restore_the_same_files_in_the_same_order(
    tmp_path: Path, profile: pb.Profile.ValueType
) -> None:
    paths = _project(tmp_path / "p")
    reg = Registry(Config())
    s = _open(reg, tmp_path / "p", profile)
    a = s.agents[""]
    _read_all(a, paths, profile)
    first = await _compact(reg, s, a)
    # Default profile: newest read first; claude-code: equal mtimes, so most recently used first.
    assert first == paths[::-1][:5]
    for _ in range(3):
        assert await _compact(reg, s, a) == first
    # The cache holds the restored files, rank 1 the most recently used, one timestamp each.
    assert [p for p, _ in a.files.snapshot()] == first
    stamps = {st.timestamp for _, st in a.files.snapshot()}
    if profile == pb.PROFILE_CLAUDE_CODE:
        assert stamps == {MTIME_NS // 1_000_000}
    else:
        assert len(stamps) == 1


async def test_a_read_between_compactions_comes_first_then_the_rest_keep_their_order(
    tmp_path: Path,
) -> None:
    paths = _project(tmp_path / "p")
    reg = Registry(Config())
    s = _open(reg, tmp_path / "p", pb.PROFILE_DEFAULT)
    a = s.agents[""]
    _read_all(a, paths, pb.PROFILE_DEFAULT)
    first = await _compact(reg, s, a)
    batch = a.files.peek(first[0])
    assert batch is not None
    _read(a, paths[0], batch.timestamp)  # a tie with the batch: the later read wins
    assert await _compact(reg, s, a) == [paths[0], *first[:4]]


@pytest.mark.parametrize("profile", PROFILES, ids=["default", "claude-code"])
async def test_the_order_survives_a_reload_of_the_state_database(
    tmp_path: Path, profile: pb.Profile.ValueType
) -> None:
    paths = _project(tmp_path / "p")
    db = tmp_path / "state" / "state.db"
    reg = Registry(Config(), store=SqliteStore(db, max_bytes=1 << 30))
    s = _open(reg, tmp_path / "p", profile)
    a = s.agents[""]
    _read_all(a, paths, profile)
    async with reg.mutate(s, a) as change:
        change.files = True
    first = await _compact(reg, s, a)
    reg.store.close()

    reg = Registry(Config(), store=SqliteStore(db, max_bytes=1 << 30))
    s = await reg.session("s")  # read on first use
    a = s.agents[""]
    assert [p for p, _ in a.files.snapshot()] == first
    assert not a.unverified
    assert await _compact(reg, s, a) == first
    reg.store.close()
