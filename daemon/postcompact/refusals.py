"""What each read refusal becomes, in one table: the error a ReadFile answers, and the decision
outcome a restoration records (docs/security.md, docs/clients.md's errors table).

`diskaccess` refuses with a kind (`FileReadError.kind`); a ReadFile call turns it into its domain
error (`read_error`), a Compact's re-read into the outcome of that file's decision
(`read_outcome`). Every kind has its row; the test checks none is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

from postcompact.diskaccess import FileReadError, FileReadErrorKind
from postcompact.errors import (
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    PostcompactError,
    ResourceExhausted,
)
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["REFUSALS", "Refusal", "read_error", "read_outcome"]


@dataclass(frozen=True, slots=True)
class Refusal:
    error: type[PostcompactError]
    reason: str  # the error's reason
    outcome: pb.Outcome.ValueType  # a restoration's decision for the file


REFUSALS: dict[FileReadErrorKind, Refusal] = {
    "invalid_path": Refusal(InvalidArgument, "BAD_PATH", pb.OUTCOME_UNREADABLE),
    "invalid_range": Refusal(InvalidArgument, "BAD_RANGE", pb.OUTCOME_UNREADABLE),
    "outside_roots": Refusal(PermissionDenied, "PATH_OUTSIDE_ROOTS", pb.OUTCOME_UNREADABLE),
    "denied": Refusal(PermissionDenied, "PATH_DENIED", pb.OUTCOME_DENIED),
    "permission": Refusal(PermissionDenied, "FILE_PERMISSION_DENIED", pb.OUTCOME_UNREADABLE),
    "missing": Refusal(NotFound, "FILE_NOT_FOUND", pb.OUTCOME_UNREADABLE),
    "directory": Refusal(FailedPrecondition, "FILE_IS_DIRECTORY", pb.OUTCOME_UNREADABLE),
    "device": Refusal(FailedPrecondition, "FILE_IS_DEVICE", pb.OUTCOME_UNREADABLE),
    "binary": Refusal(FailedPrecondition, "FILE_IS_BINARY", pb.OUTCOME_BINARY),
    # A restoration handles an oversize file itself (the too-large note or the head: the
    # policy's `oversize`); UNREADABLE is only for a read that fails the cap again.
    "too_large": Refusal(FailedPrecondition, "FILE_TOO_LARGE", pb.OUTCOME_UNREADABLE),
    "answer_too_large": Refusal(ResourceExhausted, "RESPONSE_TOO_LARGE", pb.OUTCOME_UNREADABLE),
}
_OTHER = Refusal(FailedPrecondition, "FILE_UNREADABLE", pb.OUTCOME_UNREADABLE)


def read_error(exc: FileReadError, path: str) -> PostcompactError:
    """The error a ReadFile answers for `exc`, naming the path and the kind."""
    r = REFUSALS.get(exc.kind, _OTHER)
    return r.error(r.reason, exc.message, {"path": path, "kind": exc.kind})


def read_outcome(kind: FileReadErrorKind) -> pb.Outcome.ValueType:
    """The outcome of a restoration's decision for a file whose re-read was refused so."""
    return REFUSALS.get(kind, _OTHER).outcome
