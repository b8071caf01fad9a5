"""The daemon-wide ceiling on recorded content (issue 11, item 4; docs/reliability.md): whatever
the clients push, across sessions and agents, the daemon holds at most limits.max_content_bytes
of it, refuses the rest with CONTENT_LIMIT, reports what it holds, and frees it on close. With
state stored, sessions no call is using leave memory first (test_lazy_sessions.py); memory only
(`--no-persist`), nothing can leave, so the refusals are shown there."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from postcompact_client import PostcompactError, Session

from tests.daemon.conftest import RunningDaemon, new_session_id, short_dir, start_daemon

MIB = 1 << 20
CEILING = 8 * MIB


@pytest.fixture
def ceiling() -> Iterator[RunningDaemon]:
    d = start_daemon(config_toml=f"[limits]\nmax_content_bytes = {CEILING}\n")
    yield d
    d.stop()
    shutil.rmtree(d.dir, ignore_errors=True)


@pytest.fixture
def ceiling_memory() -> Iterator[RunningDaemon]:
    d = start_daemon(["--no-persist"], config_toml=f"[limits]\nmax_content_bytes = {CEILING}\n")
    yield d
    d.stop()
    shutil.rmtree(d.dir, ignore_errors=True)


@pytest.fixture
def proj() -> Iterator[Path]:
    root = short_dir("pcc")
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _push(agents: list[Session], proj: Path, rounds: int) -> tuple[int, list[PostcompactError]]:
    accepted, refused = 0, []
    for r in range(rounds):
        for i, a in enumerate(agents):
            content = bytes([65 + (r + i) % 26]) * MIB
            try:
                a.record_read(str(proj / f"f{r}-{i}.txt"), content)
                accepted += 1
            except PostcompactError as exc:
                refused.append(exc)
    return accepted, refused


def test_content_pushed_over_the_ceiling_is_refused(
    ceiling_memory: RunningDaemon, proj: Path
) -> None:
    """2 sessions x 8 agents x 6 RecordRead of 1 MiB (96 MiB pushed, each agent within its own
    25 MiB cache), memory only: the daemon keeps 8 MiB, refuses the rest, and its RSS grows by
    less than three quarters of what was pushed (without the ceiling it would hold all 96 MiB)."""
    ceiling = ceiling_memory
    base_rss = _rss_kib(ceiling.proc.pid)
    sessions = [
        ceiling.client.open_session(str(proj), session_id=new_session_id("ceil")) for _ in range(2)
    ]
    agents = [s.start_agent(f"a{j}") for s in sessions for j in range(8)]
    accepted, refused = _push(agents, proj, rounds=6)
    assert accepted == CEILING // MIB
    assert len(refused) == 96 - accepted
    err = refused[0]
    assert err.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert err.reason == "CONTENT_LIMIT"
    assert f"limits.max_content_bytes ({CEILING})" in err.message
    assert "CloseSession" in err.message
    stats = ceiling.client.stats()
    assert stats.max_content_bytes == CEILING
    assert accepted * MIB <= stats.content_bytes <= CEILING
    grown_mib = (_rss_kib(ceiling.proc.pid) - base_rss) / 1024
    assert grown_mib < 72, f"RSS grew {grown_mib:.0f} MiB for 96 MiB pushed over an 8 MiB ceiling"

    # The same path again replaces its entry: no more bytes, so it is accepted at the ceiling.
    agents[0].record_read(str(proj / "f0-0.txt"), b"z" * MIB)

    # Closing a session frees what it held.
    sessions[0].close()
    after = ceiling.client.stats().content_bytes
    assert after <= stats.content_bytes - 4 * MIB
    agents[8].record_read(str(proj / "again.txt"), b"y" * MIB)


def test_skills_tasks_and_catalogues_count_too(ceiling: RunningDaemon, proj: Path) -> None:
    s = ceiling.client.open_session(str(proj), session_id=new_session_id("ceil-kinds"))
    before = ceiling.client.stats().content_bytes
    s.record_skill("big", path="/skills/big/SKILL.md", content="s" * MIB)
    s.upsert_task({"task_id": "t1", "description": "d" * MIB, "status": "TASK_STATUS_RUNNING"})
    s.set_catalog(deferred_tools=[f"tool_{i}_" + "x" * 1000 for i in range(1000)])
    held = ceiling.client.stats().content_bytes
    assert held - before >= 3 * MIB - 64 * 1024
    reasons = []
    for i in range(10):
        try:
            s.record_skill(f"more{i}", path=f"/skills/more{i}/SKILL.md", content="m" * MIB)
        except PostcompactError as refused:
            reasons.append(refused.reason)
    assert reasons
    assert set(reasons) == {"CONTENT_LIMIT"}
    with pytest.raises(PostcompactError) as exc:
        s.upsert_task({"task_id": "t2", "description": "e" * (2 * MIB)})
    assert exc.value.reason == "CONTENT_LIMIT"
    s.close()
    assert ceiling.client.stats().content_bytes <= before + 64 * 1024
