"""The client's exception type: a daemon error with its gRPC code and machine-readable reason."""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2

REASON_METADATA_KEY = "postcompact-error-reason"
STATUS_DETAILS_KEY = "grpc-status-details-bin"


class PostcompactError(Exception):
    """A failed call. `code` is the gRPC status code, `reason` the daemon's stable reason string
    (e.g. "SESSION_NOT_FOUND"; "" when the error did not come from the daemon), `metadata` the
    ErrorInfo metadata (e.g. {"path": ...})."""

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
            "DAEMON_UNAVAILABLE",
            meta if address else None,
        )
        self.address = address
        self.attempts = attempts
        self.elapsed_s = elapsed_s
