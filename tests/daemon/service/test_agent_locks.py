"""Per-agent serialisation: Compact never interleaves with another change of the same agent."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from postcompact.config import Config
from postcompact.server import Servicer
from postcompact.service.locks import AGENT_KEYS, AgentLocks
from postcompact.state.registry import Registry
from postcompact.v1 import postcompact_pb2 as pb


async def test_calls_for_one_agent_run_one_at_a_time() -> None:
    locks = AgentLocks()
    order: list[str] = []
    gate = asyncio.Event()

    async def compact(req: Any, ctx: Any) -> str:
        order.append(f"compact {req.agent_id} start")
        await gate.wait()
        order.append(f"compact {req.agent_id} end")
        return "compacted"

    async def record(req: Any, ctx: Any) -> str:
        order.append(f"record {req.agent_id}")
        return "recorded"

    main = SimpleNamespace(session_id="s", agent_id="")
    sub = SimpleNamespace(session_id="s", agent_id="sub")
    c = asyncio.create_task(locks.wrap("Compact", compact)(main, None))
    await asyncio.sleep(0)
    r = asyncio.create_task(locks.wrap("RecordRead", record)(main, None))
    o = asyncio.create_task(locks.wrap("RecordRead", record)(sub, None))
    await asyncio.sleep(0.01)
    assert order == ["compact  start", "record sub"]  # another agent never waits
    assert locks.locked("s", "")
    assert not locks.locked("s", "sub")
    gate.set()
    assert list(await asyncio.gather(c, r, o)) == ["compacted", "recorded", "recorded"]
    assert order == ["compact  start", "record sub", "compact  end", "record "]
    assert len(locks) == 0  # no lock outlives its calls


async def test_a_failing_call_releases_the_lock() -> None:
    locks = AgentLocks()

    async def boom(req: Any, ctx: Any) -> None:
        raise RuntimeError("boom")

    req = SimpleNamespace(session_id="s", agent_id="a")
    for _ in range(2):
        with contextlib.suppress(RuntimeError):
            await locks.wrap("Compact", boom)(req, None)
    assert len(locks) == 0


async def test_waiting_calls_get_the_lock_in_order_and_a_cancelled_one_passes_it_on() -> None:
    """Three calls wait behind a holder: the first is cancelled while it waits, the second is
    cancelled just as the lock is handed to it (its turn passes to the third, which runs)."""
    locks = AgentLocks()
    order: list[str] = []
    gate = asyncio.Event()
    waiting: dict[str, asyncio.Task[str]] = {}

    async def call(req: Any, ctx: Any) -> str:
        order.append(f"{ctx} start")
        if ctx == "holder":
            await gate.wait()
            # Runs after the lock is handed to "second" and before "second" resumes.
            asyncio.get_running_loop().call_soon(waiting["second"].cancel)
        order.append(f"{ctx} end")
        return str(ctx)

    req = SimpleNamespace(session_id="s", agent_id="a")
    wrapped = locks.wrap("RecordRead", call)
    holder = asyncio.create_task(wrapped(req, "holder"))
    await asyncio.sleep(0)
    waiting.update({n: asyncio.create_task(wrapped(req, n)) for n in ("first", "second", "third")})
    await asyncio.sleep(0.01)
    assert order == ["holder start"]
    waiting["first"].cancel()  # while it waits
    await asyncio.sleep(0)
    gate.set()
    await holder  # the lock handed to "second", which goes away before it runs: "third" has it
    assert await waiting["third"] == "third"
    for n in ("first", "second"):
        with contextlib.suppress(asyncio.CancelledError):
            await waiting[n]
        assert waiting[n].cancelled()
    assert order == ["holder start", "holder end", "third start", "third end"]
    assert not locks.locked("s", "a")
    assert len(locks) == 0  # no lock outlives its calls
    assert await wrapped(req, "after") == "after"  # free again at once


def test_only_agent_mutations_are_wrapped() -> None:
    locks = AgentLocks()

    async def h(req: Any, ctx: Any) -> None:
        return None

    assert locks.wrap("EstimateTokens", h) is h
    assert locks.wrap("GetStats", h) is h
    assert locks.wrap("Compact", h) is not h
    merge = pb.MergeFileStateRequest(session_id="s", from_agent_id="a", into_agent_id="b")
    assert AGENT_KEYS["MergeFileState"](merge) == (("s", "b"), ("s", "a"))
    start = pb.StartAgentRequest(session_id="s", agent_id="sub", parent_agent_id="")
    assert AGENT_KEYS["StartAgent"](start) == (("s", "sub"),)  # a fresh agent copies nothing
    start.mode = pb.AGENT_MODE_CLONE_PARENT
    assert AGENT_KEYS["StartAgent"](start) == (("s", "sub"), ("s", ""))


async def test_two_agent_calls_take_both_locks_in_order() -> None:
    locks = AgentLocks()
    gate = asyncio.Event()
    order: list[str] = []

    async def compact(req: Any, ctx: Any) -> None:
        order.append("compact start")
        await gate.wait()
        order.append("compact end")

    async def merge(req: Any, ctx: Any) -> None:
        order.append("merge")

    c = asyncio.create_task(
        locks.wrap("Compact", compact)(SimpleNamespace(session_id="s", agent_id="a"), None)
    )
    await asyncio.sleep(0)
    req = SimpleNamespace(session_id="s", from_agent_id="a", into_agent_id="b")
    m1 = asyncio.create_task(locks.wrap("MergeFileState", merge)(req, None))
    rev = SimpleNamespace(session_id="s", from_agent_id="b", into_agent_id="a")
    m2 = asyncio.create_task(locks.wrap("MergeFileState", merge)(rev, None))
    await asyncio.sleep(0.01)
    assert order == ["compact start"]  # both merges read or change agent "a"
    gate.set()
    await asyncio.gather(c, m1, m2)
    assert order == ["compact start", "compact end", "merge", "merge"]
    assert len(locks) == 0


async def test_read_file_waits_for_a_running_compact(tmp_path: Path) -> None:
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(f"{name}\n" * 50)
    servicer = Servicer(Config(), Registry(Config()), pb.GetServerInfoResponse())
    await servicer.sessions.open(pb.OpenSessionRequest(session_id="s", cwd=str(tmp_path)))
    read = servicer.locks.wrap("ReadFile", servicer.ReadFile)
    compact = servicer.locks.wrap("Compact", servicer.Compact)
    ctx: Any = None
    await read(pb.ReadFileRequest(session_id="s", path="a.txt"), ctx)

    done: list[str] = []

    async def tagged(name: str, call: Any) -> Any:
        resp = await call
        done.append(name)
        return resp

    wire, _ = await asyncio.gather(
        tagged("compact", compact(pb.CompactRequest(session_id="s", skip_hooks=True), ctx)),
        tagged("read", read(pb.ReadFileRequest(session_id="s", path="b.txt"), ctx)),
    )
    assert done == ["compact", "read"]
    resp = pb.CompactResponse.FromString(wire)  # the servicer answers Compact serialised
    assert [a.file.path for a in resp.attachments] == [str(tmp_path / "a.txt")]
    _, agent = await servicer.registry.agent("s", "")
    assert set(agent.files.keys()) == {str(tmp_path / "a.txt"), str(tmp_path / "b.txt")}
    assert len(servicer.locks) == 0
