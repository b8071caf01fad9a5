"""The one place where errors become gRPC statuses.

Every handler of the servicer is wrapped by `guard`: a `PostcompactError` becomes its status code
with a `google.rpc.Status` carrying a `google.rpc.ErrorInfo` (domain "postcompact", the error's
reason and metadata) in `grpc-status-details-bin`, and the reason again in the plain ASCII trailing
metadata key `postcompact-error-reason` so thin clients can branch without decoding details.
Anything else is a bug: it is logged with its traceback and answered INTERNAL (reason "INTERNAL").

Requests that cannot even be decoded (e.g. invalid UTF-8 in a proto `string` field, which protobuf
rejects while parsing) never reach the handler as a transport error: `lenient_deserializer` turns
the DecodeError into an `Undecodable` sentinel and `guard` answers INVALID_ARGUMENT. A request
over `max_message_bytes` (but within the transport's larger hard cap, see server.server_options)
becomes an `Oversize` sentinel, answered RESOURCE_EXHAUSTED naming the limit.

What goes on the wire is bounded (`MAX_MESSAGE_BYTES`, `MAX_METADATA_VALUE_BYTES`): messages echo
paths, and a long path (or one of multi-byte characters, percent-encoded in `grpc-message`)
repeated in the message, the status and the ErrorInfo metadata would pass gRPC's 8 KiB metadata
limit, and the client would get a transport error instead of the answer. The log keeps it whole.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import grpc
from google.protobuf import any_pb2, message
from google.rpc import error_details_pb2, status_pb2

from postcompact.errors import (
    ERROR_DOMAIN,
    REASON_METADATA_KEY,
    InvalidArgument,
    PostcompactError,
    ResourceExhausted,
)

log = logging.getLogger("postcompact.server")

STATUS_DETAILS_KEY = "grpc-status-details-bin"
MAX_MESSAGE_BYTES = 600  # UTF-8 bytes of the message, in grpc-message and in the Status
MAX_METADATA_VALUE_BYTES = 200  # UTF-8 bytes of each ErrorInfo metadata value


def bounded(text: str, max_bytes: int) -> str:
    """`text`, or its head and tail around " ... " within `max_bytes` UTF-8 bytes."""
    # A lone surrogate (a hostile value quoted in a message) is shown escaped: no UTF-8 spells
    # it, and the status would fail to encode, the client getting no answer at all.
    raw = text.encode("utf-8", "backslashreplace")
    if len(raw) <= max_bytes:
        return raw.decode()
    keep = (max_bytes - 5) // 2
    head = raw[:keep].decode(errors="ignore")
    tail = raw[len(raw) - keep :].decode(errors="ignore")
    return f"{head} ... {tail}"


Req = TypeVar("Req")
Resp = TypeVar("Resp")


@dataclass(frozen=True, slots=True)
class Undecodable:
    """Stands in for a request whose bytes did not parse as the method's request message."""

    type_name: str
    error: str


@dataclass(frozen=True, slots=True)
class Oversize:
    """Stands in for a request larger than the configured `max_message_bytes`."""

    size: int
    limit: int


def lenient_deserializer(
    cls: type[message.Message], max_bytes: int | None = None
) -> Callable[[bytes], Any]:
    def deserialize(raw: bytes) -> Any:
        if max_bytes is not None and len(raw) > max_bytes:
            return Oversize(len(raw), max_bytes)
        try:
            return cls.FromString(raw)
        except message.DecodeError as exc:
            return Undecodable(cls.DESCRIPTOR.full_name, str(exc))

    return deserialize


def status_trailers(
    code: grpc.StatusCode,
    msg: str,
    reason: str,
    metadata: Mapping[str, str] | None = None,
    retry_after_ms: int | None = None,
) -> tuple[tuple[str, str | bytes], ...]:
    """The trailing metadata of an error: rich status details (an ErrorInfo, and a RetryInfo
    when the call may be retried) plus the reason key (`msg` as `abort` bounds it; metadata
    values bounded here)."""
    values = {k: bounded(v, MAX_METADATA_VALUE_BYTES) for k, v in (metadata or {}).items()}
    info = error_details_pb2.ErrorInfo(reason=reason, domain=ERROR_DOMAIN, metadata=values)
    detail = any_pb2.Any()
    detail.Pack(info)
    details = [detail]
    if retry_after_ms is not None:
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromMilliseconds(retry_after_ms)
        packed = any_pb2.Any()
        packed.Pack(retry)
        details.append(packed)
    status = status_pb2.Status(code=code.value[0], message=msg, details=details)
    return (
        (STATUS_DETAILS_KEY, status.SerializeToString()),
        (REASON_METADATA_KEY, reason),
    )


async def abort(context: grpc.aio.ServicerContext[Any, Any], exc: PostcompactError) -> NoReturn:
    msg = bounded(exc.message, MAX_MESSAGE_BYTES)
    trailers = status_trailers(exc.code, msg, exc.reason, exc.metadata, exc.retry_after_ms)
    await context.abort(exc.code, msg, trailers)
    raise AssertionError("unreachable: context.abort raises")  # pragma: no cover


async def abort_internal(context: grpc.aio.ServicerContext[Any, Any]) -> NoReturn:
    msg = "internal error in the postcompact daemon (this is a bug; see the daemon log)"
    code = grpc.StatusCode.INTERNAL
    await context.abort(code, msg, status_trailers(code, msg, "INTERNAL"))
    raise AssertionError("unreachable: context.abort raises")  # pragma: no cover


Handler = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]


def guard(name: str, fn: Handler) -> Handler:
    """Wrap one unary-unary handler with the error mapping.

    The status is sent outside the `except` block, from the error with its traceback dropped:
    the traceback's frames hold the request and the session, and gRPC keeps the abort's chained
    exception for a while, so a refused call would otherwise keep what it was refused for (the
    content over the ceiling, a closed session's state) alive after it was answered."""

    @functools.wraps(fn)
    async def wrapper(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        failure: PostcompactError | None = None
        try:
            if isinstance(request, Oversize):
                raise ResourceExhausted(
                    "MESSAGE_TOO_LARGE",
                    f"{name}: the request is {request.size} bytes, over "
                    f"limits.max_message_bytes ({request.limit})",
                    {"limit": "max_message_bytes"},
                )
            if isinstance(request, Undecodable):
                raise InvalidArgument(
                    "MALFORMED_REQUEST",
                    f"{name}: the request is not a valid {request.type_name} "
                    f"({request.error}); string fields must be valid UTF-8",
                )
            return await fn(request, context)
        except PostcompactError as exc:
            failure = exc.with_traceback(None)
            failure.__context__ = failure.__cause__ = None
        except grpc.aio.AbortError:
            raise
        except Exception:
            log.exception("unexpected error", extra={"rpc": name})
        del request
        if failure is None:
            await abort_internal(context)
        log.info(
            "rpc error",
            extra={
                "rpc": name,
                "code": failure.code.name,
                "reason": failure.reason,
                "error": failure.message,
            },
        )
        await abort(context, failure)

    return wrapper


def _drop(raw: bytes) -> None:
    return None


class UnknownMethods(grpc.GenericRpcHandler):
    """Registered after every service: a method none of them serves is UNIMPLEMENTED with reason
    `UNKNOWN_METHOD` (gRPC's own answer carries no reason). Its request is never parsed."""

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any]:
        method = bounded(str(handler_call_details.method), 200)
        code = grpc.StatusCode.UNIMPLEMENTED
        msg = f"unknown method {method}: see the daemon's reflection service for what it serves"

        async def unknown(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            await context.abort(code, msg, status_trailers(code, msg, "UNKNOWN_METHOD"))

        return grpc.unary_unary_rpc_method_handler(
            unknown, request_deserializer=_drop, response_serializer=bytes
        )
