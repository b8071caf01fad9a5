"""Admission's answer reservations as the servicer's serialisation reads them back (server.py
`_serialized` takes the size a handler reserved instead of measuring its response again)."""

from __future__ import annotations

import asyncio
from typing import Any

from postcompact.admission import Admission, reserve_answer, reserved_answer


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
