"""The gRPC health service, with a reason on its one error: a Check of a service the daemon does
not serve is NOT_FOUND with reason `UNKNOWN_SERVICE` (gRPC's own servicer answers a bare
NOT_FOUND), so every error the daemon answers carries a reason (docs/clients.md)."""

from __future__ import annotations

from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2

from postcompact.errmap import status_trailers

__all__ = ["Health"]


class Health(health.aio.HealthServicer):  # type: ignore[misc]  # grpc_health has no types
    def __init__(self) -> None:
        super().__init__()
        self.known: set[str] = set()

    async def set(self, service: str, status: Any) -> None:
        self.known.add(service)
        await super().set(service, status)

    async def Check(
        self, request: health_pb2.HealthCheckRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> health_pb2.HealthCheckResponse:
        if request.service not in self.known:
            code = grpc.StatusCode.NOT_FOUND
            msg = f"unknown service {request.service[:200]!r}: this daemon reports on '' and " + (
                ", ".join(repr(k) for k in sorted(self.known) if k)
            )
            await context.abort(code, msg, status_trailers(code, msg, "UNKNOWN_SERVICE"))
        resp: health_pb2.HealthCheckResponse = await super().Check(request, context)
        return resp
