"""Admission: at most `limits.max_calls_in_flight` calls of the service run at once
(docs/reliability.md, "Under overload").

A call over the limit is answered at once, before its handler runs (so nothing is applied), with
RESOURCE_EXHAUSTED `OVERLOADED` and a `google.rpc.RetryInfo`: the clients retry exactly the
errors that carry one. A call is in flight from its handler's start to its answer; most calls
finish within one turn of the event loop, so the limit bounds the calls that wait (for a worker
thread, a disk read, an agent's lock, a hook). GetServerInfo is not counted: it answers a
constant and is how a client tells an overloaded daemon from a missing one.

In front of this, gRPC itself keeps calls that arrived but were not yet handed to the server
(`grpc.server.max_pending_requests`, see server.server_options): past its limit it would cancel
them with a bare CANCELLED, so that limit is set well above what admission lets through.

Answers in flight. An answer given to gRPC stays in the daemon's memory (about three copies of
it: the message, its serialisation, gRPC's own) until the client has read it. A client that
stops reading (SIGSTOP) pins it: over TCP the keepalive ping times out and frees it, but a Unix
socket whose kernel buffer is full keeps it until the client goes away. So the calls with large
answers (ReadFile, Compact, PreviewCompact, ImportTranscript, ListSessions) reserve their
answer's size, before anything is applied, against `limits.max_answer_bytes_in_flight`, and the
reservation ends when the call does (delivered, failed or cancelled). A reservation that does
not fit is OVERLOADED with a RetryInfo, unless nothing else is reserved (one answer of any size
the message limit allows always goes).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Coroutine
from typing import Any

from postcompact.errors import ResourceExhausted

__all__ = ["EXEMPT", "RETRY_AFTER_MS", "Admission", "reserve_answer", "reserved_answer"]

Handler = Callable[[Any, Any], Coroutine[Any, Any, Any]]

RETRY_AFTER_MS = 100
EXEMPT = frozenset({"GetServerInfo"})


class _Call:
    """The call being handled in this task: its admission, gRPC context and name, and the
    answer size its handler reserved (the servicer's serialisation takes it rather than
    measuring the response again)."""

    __slots__ = ("admission", "answer", "context", "name")

    def __init__(self, admission: Admission, context: Any, name: str) -> None:
        self.admission, self.context, self.name = admission, context, name
        self.answer: int | None = None


# Each gRPC call is a task of its own (its own context), so the value never outlives its call.
_CALL: contextvars.ContextVar[_Call | None] = contextvars.ContextVar(
    "postcompact_call", default=None
)


def reserve_answer(size: int) -> None:
    """Reserve `size` bytes of answer for the call being handled (see the module docstring);
    OVERLOADED when they do not fit. Outside a call (in-process use, tests) it does nothing."""
    call = _CALL.get()
    if call is not None:
        call.admission.reserve(size, call.context, call.name)
        call.answer = size


def reserved_answer() -> int | None:
    """The answer size the handler of the call being handled reserved last, if it did."""
    call = _CALL.get()
    return None if call is None else call.answer


class Admission:
    def __init__(self, limit: int, max_answer_bytes: int = 1 << 62) -> None:
        self.limit = limit
        self.in_flight = 0
        self.refused = 0  # calls answered OVERLOADED since start
        self.max_answer_bytes = max_answer_bytes
        self.answer_bytes = 0  # reserved by calls not yet finished

    def reserve(self, size: int, context: Any, name: str) -> None:
        if self.answer_bytes and self.answer_bytes + size > self.max_answer_bytes:
            self.refused += 1
            raise ResourceExhausted(
                "OVERLOADED",
                f"{name} refused: its answer ({size} bytes) and the {self.answer_bytes} bytes of "
                "answers not yet read by their clients would pass "
                f"limits.max_answer_bytes_in_flight ({self.max_answer_bytes}); nothing was "
                f"applied, retry after {RETRY_AFTER_MS} ms",
                {"limit": "max_answer_bytes_in_flight"},
                retry_after_ms=RETRY_AFTER_MS,
            )
        self.answer_bytes += size

        def release(_: object) -> None:
            self.answer_bytes -= size

        context.add_done_callback(release)

    def wrap(self, name: str, fn: Handler) -> Handler:
        if name in EXEMPT:
            return fn

        async def admitted(request: Any, context: Any) -> Any:
            if self.in_flight >= self.limit:
                self.refused += 1
                raise ResourceExhausted(
                    "OVERLOADED",
                    f"{name} refused: {self.in_flight} calls are in flight, at "
                    f"limits.max_calls_in_flight ({self.limit}); nothing was applied, retry "
                    f"after {RETRY_AFTER_MS} ms",
                    {"limit": "max_calls_in_flight"},
                    retry_after_ms=RETRY_AFTER_MS,
                )
            self.in_flight += 1
            # Left set when the handler returns: the servicer's serialisation, still this call's,
            # reads the answer size (`reserved_answer`); the task ends with the call.
            _CALL.set(_Call(self, context, name))
            try:
                return await fn(request, context)
            finally:
                self.in_flight -= 1

        return admitted
