"""Domain errors. Each carries the gRPC status it maps to and a stable machine-readable reason.

The servicer turns them into a status with a google.rpc.ErrorInfo detail (domain "postcompact")
and the trailing metadata key `postcompact-error-reason` in one place (server code); everything
else only raises. Anything that is not a PostcompactError is a bug and becomes INTERNAL.
"""

from __future__ import annotations

from collections.abc import Mapping

import grpc

ERROR_DOMAIN = "postcompact"
REASON_METADATA_KEY = "postcompact-error-reason"


class PostcompactError(Exception):
    code: grpc.StatusCode = grpc.StatusCode.INTERNAL

    def __init__(
        self,
        reason: str,
        message: str,
        metadata: Mapping[str, str] | None = None,
        *,
        retry_after_ms: int | None = None,
    ):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.metadata: dict[str, str] = dict(metadata or {})
        # Set only on errors a client should retry (a google.rpc.RetryInfo on the wire): the
        # call was refused before anything was applied and may succeed later.
        self.retry_after_ms = retry_after_ms


class InvalidArgument(PostcompactError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(PostcompactError):
    code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(PostcompactError):
    code = grpc.StatusCode.ALREADY_EXISTS


class FailedPrecondition(PostcompactError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(PostcompactError):
    """A concurrency conflict: the call was refused whole; redone, it sees the current state."""

    code = grpc.StatusCode.ABORTED


class ResourceExhausted(PostcompactError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class PermissionDenied(PostcompactError):
    code = grpc.StatusCode.PERMISSION_DENIED


class Unauthenticated(PostcompactError):
    code = grpc.StatusCode.UNAUTHENTICATED


class Unavailable(PostcompactError):
    code = grpc.StatusCode.UNAVAILABLE


class DeadlineExceeded(PostcompactError):
    """Long work (an import) stopped because its caller's deadline passed or it cancelled;
    nothing of it was applied."""

    code = grpc.StatusCode.DEADLINE_EXCEEDED


def transcript_refusal(
    line: int, field: str, reason: str, limit: str, message: str
) -> PostcompactError:
    """What ImportTranscript answers for a transcript it refuses (transcript.parse's
    TranscriptError): `TRANSCRIPT_TOO_LARGE` (a budget, naming the limit) is RESOURCE_EXHAUSTED;
    a bad value (`BAD_TRANSCRIPT`) or one over a live call's limit (its reason: PATH_TOO_LONG,
    BAD_AGENT_ID) is INVALID_ARGUMENT. The line and the field go in the metadata."""
    details = {
        k: v
        for k, v in (("line", str(line) if line else ""), ("field", field), ("limit", limit))
        if v
    }
    cls = ResourceExhausted if reason == "TRANSCRIPT_TOO_LARGE" else InvalidArgument
    return cls(reason, message, details)


def check_answer(size: int, cap: int, what: str) -> None:
    """RESOURCE_EXHAUSTED `RESPONSE_TOO_LARGE` unless an answer of `size` bytes can be sent
    (`max_message_bytes`); callers check before anything is applied, so a refused call changes
    nothing."""
    if size > cap:
        raise ResourceExhausted(
            "RESPONSE_TOO_LARGE",
            f"the answer to {what} would take {size} bytes, over max_message_bytes ({cap}); "
            "nothing was changed",
            {"limit": "max_message_bytes", "size": str(size)},
        )
