"""The listeners on pygrpc-native's server (`server_implementation = "native"`; issue 41, part 2;
docs/benchmarks.md, "Serving"; docs/architecture.md).

pygrpc-native's `aio.server()` is grpc.aio's API over an HTTP/2 and gRPC front in Rust. It serves
natively only the unary and server-streaming methods added with `add_registered_method_handlers`;
everything else (generic handlers, client- or bidirectional-streaming methods, and every method
nobody registered) goes to a grpc.aio server on a private Unix socket behind the front. So here:

- the daemon's service and health are registered method by method (the tables `server.py`
  builds from the proto descriptors, and the health service's generated one);
- over TCP each of them is behind `auth.gate_method` (the front looks a registered method up
  itself, before any generic handler: a TokenGate cannot stand in front of it);
- reflection (bidirectional) and unknown methods stay generic handlers, behind the TokenGate on
  TCP, and are served by the fallback server.

Of the listeners' options the native server refuses closing idle connections
(`grpc.max_connection_idle_ms`): that one is left out, and with it the idle GOAWAY of
docs/reliability.md, "Connections". It ignores the handshake timeout (its own is 120 s).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from postcompact.auth import TokenGate, gate_method
from postcompact.lifecycle import LifecycleError

__all__ = ["REFUSED_OPTIONS", "Registrations", "native_paths", "new_server"]

Handler = "grpc.RpcMethodHandler[Any, Any]"

# Options pygrpc-native raises an error for (it cannot close idle connections).
REFUSED_OPTIONS = frozenset({"grpc.max_connection_idle_ms"})


@dataclass
class Registrations:
    """Stands in for a server while the services register: the registered methods of each
    service (served natively) apart from the generic handlers (served by the fallback)."""

    methods: dict[str, dict[str, Any]] = field(default_factory=dict)
    generic: list[grpc.GenericRpcHandler] = field(default_factory=list)

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        self.generic.extend(handlers)

    def add_registered_method_handlers(self, service: str, handlers: Mapping[str, Any]) -> None:
        native = {
            name: h
            for name, h in handlers.items()
            if not h.request_streaming  # the front serves unary and server-streaming only
        }
        if len(native) == len(handlers):
            self.methods[service] = dict(native)
        # else: a streaming-request service stays with its generic handler (the fallback), so
        # that on TCP it is behind the TokenGate rather than registered past it.


def native_paths(reg: Registrations) -> list[str]:
    """The methods the native front serves itself (`/service/Method`)."""
    return [f"/{s}/{m}" for s, methods in reg.methods.items() for m in methods]


def new_server(
    options: Sequence[tuple[str, Any]],
    reg: Registrations,
    fallback: Sequence[grpc.GenericRpcHandler],
    token: str | None,
) -> grpc.aio.Server:
    """A pygrpc-native server of `reg`'s methods (each behind the token gate when `token` is
    given) and the generic handlers `fallback` (behind one TokenGate when `token` is given)."""
    try:
        import pygrpc_native.aio  # only when chosen: an optional dependency
    except ImportError as exc:
        if not (exc.name or "").startswith("pygrpc_native"):
            raise
        raise LifecycleError(
            'server_implementation = "native" needs pygrpc-native, which is not installed: '
            "pip install 'postcompact[native]'"
        ) from None

    server = pygrpc_native.aio.server(
        options=[(k, v) for k, v in options if k not in REFUSED_OPTIONS]
    )
    for service, methods in reg.methods.items():
        if token is None:
            server.add_registered_method_handlers(service, methods)
        else:
            gated = {name: gate_method(token, h) for name, h in methods.items()}
            server.add_registered_method_handlers(service, gated)
    if token is None:
        server.add_generic_rpc_handlers(tuple(fallback))
    else:
        server.add_generic_rpc_handlers((TokenGate(token, fallback),))
    return server
