"""Two processes on the same agent (the harness author's reproduction): both were ALLOWED by
CheckWrite to edit one file, and the second write silently replaced what the first recorded.
With the check's entry timestamp carried by RecordWrite, the second is refused."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from postcompact_client import Client, PostcompactError
from postcompact_client.types import WriteCheck
from postcompact_client.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import RunningDaemon, new_session_id


def test_the_second_of_two_racing_writes_is_refused(daemon: RunningDaemon, project: Path) -> None:
    sid = new_session_id("race")
    one = daemon.client.open_session(str(project), session_id=sid)
    other_client = Client(f"unix://{daemon.socket_path}", auto_start=False, timeout=30.0)
    try:
        two = other_client.attach_session(sid)
        path = project / "README.md"
        one.read_file("README.md")
        checks = [one.check_write("README.md"), two.check_write("README.md")]
        assert [c.result for c in checks] == [WriteCheck.ALLOWED] * 2
        assert checks[0].entry_timestamp_ms == checks[1].entry_timestamp_ms > 0
        path.write_text("# edited by one\n")
        one.record_write(
            "README.md",
            path.read_text(),
            timestamp_ms=checks[0].entry_timestamp_ms + 1,
            if_entry_timestamp_ms=checks[0].entry_timestamp_ms,
        )
        path.write_text("# edited by two\n")
        with pytest.raises(PostcompactError) as exc:
            two.record_write(
                "README.md",
                path.read_text(),
                timestamp_ms=checks[1].entry_timestamp_ms + 2,
                if_entry_timestamp_ms=checks[1].entry_timestamp_ms,
            )
        e = exc.value
        assert (e.code, e.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "WRITE_CONFLICT")
        assert e.metadata["entry_timestamp_ms"] == str(checks[0].entry_timestamp_ms + 1)
        # Nothing was recorded for the refused write: the entry is one's.
        again = two.check_write("README.md")
        assert again.entry_timestamp_ms == checks[0].entry_timestamp_ms + 1
    finally:
        other_client.close()


def test_a_conditional_record_write_is_retried_only_when_not_sent() -> None:
    from postcompact_client._retry import is_idempotent

    plain = pb.RecordWriteRequest(path="/p", timestamp_ms=5)
    conditional = pb.RecordWriteRequest(path="/p", timestamp_ms=5, if_entry_timestamp_ms=0)
    assert is_idempotent("RecordWrite", plain)
    assert not is_idempotent("RecordWrite", conditional)
