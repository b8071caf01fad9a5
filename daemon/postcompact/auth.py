"""Bearer-token check for the optional loopback TCP listener.

The Unix socket is protected by file permissions (0700 dir, 0600 socket); TCP on 127.0.0.1 is not,
so the TCP listener is a separate grpc.aio server whose one handler is this gate: every call (health
and reflection included) needs `authorization: Bearer <token>` with the token from the 0600 token
file, compared in constant time. Anything else — every method, known or not — is UNAUTHENTICATED
with reason `UNAUTHENTICATED`.

A gate in the handler lookup rather than a grpc.aio server interceptor: the interceptor's awaited
chain (two coroutines and a partial per call) cost ~6 µs of server CPU and 6-14 µs of p50 per
small RPC here (CHANGELOG, issue 16); the gate's check is one plain call.
"""

from __future__ import annotations

import hmac
import inspect
from collections.abc import Sequence
from typing import Any, TypeAlias

import grpc

from postcompact.errmap import status_trailers

AUTH_METADATA_KEY = "authorization"
Handler: TypeAlias = "grpc.RpcMethodHandler[Any, Any]"


def bearer_ok(value: bytes, token: bytes) -> bool:
    """Whether one `authorization` value shows the token (the TCP front's first look at a
    connection asks this too: one rule for both)."""
    scheme, _, given = value.partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), token)


def _token_ok(metadata: Any, token: bytes) -> bool:
    for key, value in metadata or ():
        if key == AUTH_METADATA_KEY:
            raw = value if isinstance(value, bytes) else str(value).encode()
            if bearer_ok(raw, token):
                return True
    return False


def _unread(raw: bytes) -> None:
    return None


def _denied(handler: Handler) -> Handler:
    code = grpc.StatusCode.UNAUTHENTICATED
    msg = "TCP calls need the metadata `authorization: Bearer <token>` (token file in server.json)"
    trailers = status_trailers(code, msg, "UNAUTHENTICATED")

    async def unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await context.abort(code, msg, trailers)

    async def streaming(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        await context.abort(code, msg, trailers)
        yield None  # pragma: no cover  (makes this an async generator)

    # The request is never parsed for an unauthenticated caller: its bytes are dropped unread
    # (so undecodable bytes are UNAUTHENTICATED too, not a deserialization error).
    kw: dict[str, Any] = {
        "request_deserializer": _unread,
        "response_serializer": handler.response_serializer,
    }
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(unary, **kw)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(streaming, **kw)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(unary, **kw)
    return grpc.stream_stream_rpc_method_handler(streaming, **kw)


_UNARY: Handler = grpc.unary_unary_rpc_method_handler(_unread, response_serializer=bytes)


class TokenGate(grpc.GenericRpcHandler):
    """The TCP listener's only generic handler: finds a call's method among `handlers` (the
    Unix socket's own, in the same order, the last answering every method) and hands it over
    only to a caller showing the token. The server must have no other handler, registered
    methods included (grpc.aio looks those up first, past the gate)."""

    def __init__(self, token: str, handlers: Sequence[grpc.GenericRpcHandler]):
        self._token = token.encode()
        self._handlers = tuple(handlers)

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> Handler | None:
        handler = None
        for generic in self._handlers:
            handler = generic.service(handler_call_details)
            if handler is not None:
                break
        if _token_ok(handler_call_details.invocation_metadata, self._token):
            return handler
        # Known or not, a method is UNAUTHENTICATED without the token: which methods exist is
        # not told to a caller who has not shown it (errmap.UnknownMethods serves the unknown).
        return _denied(handler if handler is not None else _UNARY)


def gate_method(token: str, handler: Handler) -> Handler:
    """`handler` behind the token check, for a server that looks it up itself (the native
    server's registered methods, nativeserver.py, which no TokenGate can stand in front of):
    the same answer as TokenGate's for a caller without the token, its request bytes dropped
    unread (the handler receives them raw and decodes them only after the check)."""
    key = token.encode()
    denied = _denied(handler)
    deserialize = handler.request_deserializer
    serializer = handler.response_serializer

    async def decoded(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        if deserialize is None:
            return raw
        try:
            return deserialize(raw)
        except Exception:  # as grpc.aio answers a request its deserializer refuses
            await context.abort(grpc.StatusCode.INTERNAL, "Exception deserializing request!")

    if handler.unary_unary is not None:
        inner_unary: Any = handler.unary_unary  # async (the grpc stubs type them sync)
        refuse_unary: Any = denied.unary_unary

        async def unary(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            if not _token_ok(context.invocation_metadata(), key):
                return await refuse_unary(None, context)
            return await inner_unary(await decoded(raw, context), context)

        return grpc.unary_unary_rpc_method_handler(unary, response_serializer=serializer)
    if handler.unary_stream is not None:
        inner_stream: Any = handler.unary_stream  # async (the grpc stubs type them sync)
        refuse_stream: Any = denied.unary_stream

        async def stream(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> None:
            if not _token_ok(context.invocation_metadata(), key):
                async for _ in refuse_stream(None, context):  # aborts at once
                    pass  # pragma: no cover
            out = inner_stream(await decoded(raw, context), context)
            if inspect.isasyncgen(out):
                async for message in out:
                    await context.write(message)
            else:
                await out  # writes with context.write (the health service's Watch)

        return grpc.unary_stream_rpc_method_handler(stream, response_serializer=serializer)
    raise ValueError("only unary and server-streaming methods are served natively")
