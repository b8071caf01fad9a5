"""The one table from a read refusal to its ReadFile error and its restoration outcome
(daemon/postcompact/refusals.py): every kind the read backend can refuse with has its row, and
the reasons are distinct, so a client can tell each refusal from the others."""

from __future__ import annotations

import typing

from postcompact.diskaccess import FileReadError, FileReadErrorKind
from postcompact.refusals import REFUSALS, read_error, read_outcome
from postcompact.v1 import postcompact_pb2 as pb


def test_every_refusal_kind_has_its_row() -> None:
    assert set(REFUSALS) == set(typing.get_args(FileReadErrorKind))
    reasons = [r.reason for r in REFUSALS.values()]
    assert len(reasons) == len(set(reasons))


def test_an_error_and_an_outcome_from_the_same_row() -> None:
    err = read_error(FileReadError("denied", "matches a deny glob"), "/p/.env")
    assert (err.reason, err.metadata) == ("PATH_DENIED", {"path": "/p/.env", "kind": "denied"})
    assert read_outcome("denied") == pb.OUTCOME_DENIED
    assert read_outcome("binary") == pb.OUTCOME_BINARY
    assert read_outcome("missing") == pb.OUTCOME_UNREADABLE
