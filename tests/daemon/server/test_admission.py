"""Admission's answer reservations as the servicer's serialisation reads them back (server.py
`_serialized` takes the size a handler reserved instead of measuring its response again), and
as Compact makes them: before anything is applied."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from postcompact.admission import RETRY_AFTER_MS, Admission, reserve_answer, reserved_answer
from postcompact.config import Config
from postcompact.errors import ResourceExhausted
from postcompact.server import Servicer
from postcompact.state.registry import Registry
from postcompact.v1 import postcompact_pb2 as pb


class _Context:
    """What `Admission.reserve` needs of a gRPC context: a done callback."""

    def __init__(self) -> None:
        self.done: list[Any] = []

    def add_done_callback(self, fn: Any) -> None:
        self.done.append(fn)


def test_a_reserved_answer_is_seen_after_the_handler_and_only_in_its_call() -> None:
    admission = Admission(limit=10, max_answer_bytes=1 << 20)

    async def handler(size: int | None, ctx: Any) -> int | None:
        if size is not None:
            reserve_answer(size)
        return None

    async def serve(size: int | None) -> int | None:
        ctx = _Context()
        await admission.wrap("ReadFile", handler)(size, ctx)
        seen = reserved_answer()  # as _serialized reads it, after the wrapped handler
        for fn in ctx.done:  # the call ends: its reservation is released
            fn(None)
        return seen

    async def main() -> list[int | None]:
        # Each call a task of its own, as gRPC runs them; one reserves, the next does not.
        first = await asyncio.create_task(serve(41_000))
        second = await asyncio.create_task(serve(None))
        return [first, second, reserved_answer()]

    assert asyncio.run(main()) == [41_000, None, None]
    assert admission.answer_bytes == 0
    # Outside a call nothing is reserved and nothing is remembered.
    reserve_answer(5)
    assert reserved_answer() is None


async def test_a_compact_whose_answer_is_refused_applies_nothing(tmp_path: Path) -> None:
    """Compact and PreviewCompact reserve their answer (the servicer, once the restoration has
    returned it, never the restoration itself): a Compact whose answer does not fit the bytes
    in flight is OVERLOADED with a RetryInfo and leaves the agent as it was; once the bytes are
    free the same Compact is answered and applied, its answer reserved until the call ends."""
    (tmp_path / "a.txt").write_text("alpha\n" * 50)
    config = Config(max_answer_bytes_in_flight=1000)
    servicer = Servicer(config, Registry(config), pb.GetServerInfoResponse())
    await servicer.sessions.open(pb.OpenSessionRequest(session_id="s", cwd=str(tmp_path)))
    nobody: Any = None  # ReadFile reads nothing of its context
    await servicer.ReadFile(pb.ReadFileRequest(session_id="s", path="a.txt"), nobody)
    _, agent = await servicer.registry.agent("s", "")
    held = set(agent.files.keys())
    req = pb.CompactRequest(session_id="s", skip_hooks=True)
    admission = servicer.admission
    compact = admission.wrap("Compact", servicer.Compact)
    preview = admission.wrap("PreviewCompact", servicer.PreviewCompact)

    other = _Context()  # another call's answer, not yet read by its client
    admission.reserve(900, other, "ReadFile")
    for call, request in ((compact, req), (preview, pb.PreviewCompactRequest(session_id="s"))):
        with pytest.raises(ResourceExhausted) as refused:
            await call(request, _Context())
        assert refused.value.reason == "OVERLOADED"
        assert refused.value.retry_after_ms == RETRY_AFTER_MS
    assert agent.compactions == 0
    assert set(agent.files.keys()) == held

    for fn in other.done:  # that answer was read: its bytes are free
        fn(None)
    ctx = _Context()
    wire = await compact(req, ctx)
    resp = pb.CompactResponse.FromString(wire)
    assert [a.file.path for a in resp.attachments] == [str(tmp_path / "a.txt")]
    assert agent.compactions == 1
    assert admission.answer_bytes == len(wire)  # held until the call ends
    for fn in ctx.done:
        fn(None)
    assert admission.answer_bytes == 0
