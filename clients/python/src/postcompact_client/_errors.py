"""The client's exception type: a daemon error with its gRPC code and machine-readable reason."""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2

REASON_METADATA_KEY = "postcompact-error-reason"
STATUS_DETAILS_KEY = "grpc-status-details-bin"


class ClientReason:
    """The reasons the client gives a failure no daemon answered (the same names in every
    client, docs/clients.md "Errors"); the daemon's own reasons are upper snake case too."""

    DAEMON_UNAVAILABLE = "DAEMON_UNAVAILABLE"
    """No daemon answered within the retry policy (auto-start off, deferred, or not possible)."""
    DAEMON_START_FAILED = "DAEMON_START_FAILED"
    """Auto-start could not bring a daemon up: it could not be spawned, exited before serving
    (the message carries its first error line) or did not report SERVING in time."""
    CONNECTION_LOST = "CONNECTION_LOST"
    """The connection broke during a call that is not retried: the daemon may have applied it."""
    DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"
    """The call's deadline (`timeout`) passed without an answer."""
    TRANSPORT_ERROR = "TRANSPORT_ERROR"
    """Any other status gRPC produced itself, without a daemon reason."""


def transport_reason(code: grpc.StatusCode) -> str:
    """The client's reason for a status gRPC produced itself (no daemon reason)."""
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return ClientReason.DEADLINE_EXCEEDED
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        return ClientReason.CONNECTION_LOST
    return ClientReason.TRANSPORT_ERROR


class PostcompactError(Exception):
    """A failed call. `code` is the gRPC status code, `reason` the daemon's stable reason string
    (e.g. "SESSION_NOT_FOUND"), or, when no daemon answered (`transport` is True), the client's
    (`ClientReason`: DAEMON_UNAVAILABLE, CONNECTION_LOST, DEADLINE_EXCEEDED...); `metadata` the
    ErrorInfo metadata (e.g. {"path": ...})."""

    transport: bool = False  # gRPC or the kernel produced it, not the daemon

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        reason: str = "",
        metadata: dict[str, str] | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(f"{code.name}: {message}" + (f" [{reason}]" if reason else ""))
        self.code = code
        self.message = message
        self.reason = reason
        self.metadata: dict[str, str] = dict(metadata or {})
        # The daemon's google.rpc.RetryInfo delay in seconds: the call was refused before
        # anything was applied (e.g. OVERLOADED) and the client retries it. None: no RetryInfo.
        self.retry_after = retry_after

    def named(self) -> PostcompactError:
        """This error, or, when it carries no daemon reason, a copy with the client's reason for
        it (`transport_reason`) and `transport` set."""
        if self.reason:
            return self
        named = PostcompactError(self.code, self.message, transport_reason(self.code))
        named.transport = True
        return named

    @classmethod
    def from_rpc_error(cls, err: grpc.RpcError) -> PostcompactError:
        call: Any = err
        code = call.code() if hasattr(call, "code") else grpc.StatusCode.UNKNOWN
        message = (call.details() if hasattr(call, "details") else None) or str(err)
        trailers = call.trailing_metadata() if hasattr(call, "trailing_metadata") else None
        return cls.from_parts(code, message, trailers)

    @classmethod
    def from_parts(cls, code: grpc.StatusCode, message: str, trailers: Any) -> PostcompactError:
        reason = ""
        metadata: dict[str, str] = {}
        retry_after: float | None = None
        for key, value in trailers or ():
            if key == REASON_METADATA_KEY:
                reason = value.decode() if isinstance(value, bytes) else str(value)
            elif key == STATUS_DETAILS_KEY and isinstance(value, bytes):
                try:
                    status = status_pb2.Status.FromString(value)
                except DecodeError:
                    continue
                for detail in status.details:
                    info = error_details_pb2.ErrorInfo()
                    retry = error_details_pb2.RetryInfo()
                    if detail.Unpack(info):
                        reason = reason or info.reason
                        metadata.update(info.metadata)
                    elif detail.Unpack(retry):
                        retry_after = retry.retry_delay.ToNanoseconds() / 1e9
        return cls(code, message, reason, metadata, retry_after)


class DaemonUnavailable(PostcompactError):
    """No daemon answered (and auto-start was off or did not bring one up in time), or retrying
    an idempotent call across a restart ran out of time: `metadata` then holds `address`,
    `attempts` and `elapsed_s`."""

    transport = True
    _reason = ClientReason.DAEMON_UNAVAILABLE

    def __init__(
        self,
        message: str,
        *,
        address: str = "",
        attempts: int = 0,
        elapsed_s: float = 0.0,
    ):
        meta = {"address": address, "attempts": str(attempts), "elapsed_s": f"{elapsed_s:.3f}"}
        super().__init__(
            grpc.StatusCode.UNAVAILABLE,
            message,
            self._reason,
            meta if address else None,
        )
        self.address = address
        self.attempts = attempts
        self.elapsed_s = elapsed_s


class DaemonStartFailed(DaemonUnavailable):
    """Auto-start could not bring a daemon up (reason DAEMON_START_FAILED): the executable could
    not be run, the daemon exited before serving (the message carries its exit status and first
    error line; its log is in its state directory), or it did not report SERVING within the
    start timeout. A DaemonUnavailable, as auto-start failures were before."""

    _reason = ClientReason.DAEMON_START_FAILED
