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
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from postcompact.errors import ResourceExhausted

__all__ = ["EXEMPT", "RETRY_AFTER_MS", "Admission"]

Handler = Callable[[Any, Any], Coroutine[Any, Any, Any]]

RETRY_AFTER_MS = 100
EXEMPT = frozenset({"GetServerInfo"})


class Admission:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_flight = 0
        self.refused = 0  # calls answered OVERLOADED since start

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
            try:
                return await fn(request, context)
            finally:
                self.in_flight -= 1

        return admitted
