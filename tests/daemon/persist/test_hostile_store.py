"""The state database under hostile conditions (issue 37 part 2), through the real daemon and the
real client: a lock held elsewhere past the daemon's timeout, and rows another daemon wrote that
this one cannot use (docs/persistence.md, "A busy database" and "Rows the daemon cannot use").

A lock is held for real by another connection: on PostgreSQL `LOCK TABLE ... IN ACCESS EXCLUSIVE
MODE` (the daemon's lock_timeout shrunk to 1 s through its state_url), on SQLite a `BEGIN
EXCLUSIVE` (the daemon's 5 s busy timeout). The write fails with one named, retryable answer
(UNAVAILABLE `STATE_BUSY` with a RetryInfo), and once the lock is gone the session is served as
the database holds it, without a restart.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import grpc
import psycopg
import pytest
from postcompact_client import Client, PostcompactError, RetryPolicy, Session
from postcompact_client.types import TaskStatus

from tests.daemon.conftest import (
    State,
    new_session_id,
    start_daemon,
    text_of,
    write_project,
)

# The daemon's lock_timeout on PostgreSQL, shrunk for the tests (a URL's `options` win over the
# store's default of 5 s).
LOCK_TIMEOUT = "options=-c%20lock_timeout%3D1s"


def _args(state: State) -> tuple[str, ...]:
    if state.kind == "postgresql":
        return ("--state-url", f"{state.url}&{LOCK_TIMEOUT}")
    return state.args


def _task(task_id: str, description: str) -> dict[str, object]:
    return {
        "task_id": task_id,
        "task_type": "local_agent",
        "description": description,
        "status": TaskStatus.RUNNING,
    }


def _preview(s: Session) -> str:
    return "\n".join(text_of(a) for a in s.preview_compact().attachments)


def _busy(exc: PostcompactError) -> None:
    assert exc.code == grpc.StatusCode.UNAVAILABLE, exc
    assert exc.reason == "STATE_BUSY", exc
    assert exc.retry_after is not None, exc
    assert exc.retry_after > 0, exc
    assert "state database" in exc.message


@pytest.fixture
def project(base: Path) -> Path:
    return write_project(base / "proj")


def test_a_lock_past_the_timeout_answers_state_busy_and_keeps_the_session(
    state: State, base: Path, project: Path
) -> None:
    run = base / "d"
    run.mkdir(mode=0o700)
    d = start_daemon(_args(state), runtime_dir=run)
    # No retries: the answer itself is under test (the retrying client is below).
    client = Client(d.address, auto_start=False, retry=RetryPolicy.none())
    try:
        sid = new_session_id("busy")
        s = client.open_session(str(project), session_id=sid)
        s.upsert_task(_task("t1", "rename alpha everywhere"))
        s.record_skill("lint", content="Run the linter first.")
        s.read_file("src/a.py")
        with state.table_locked(d, "tasks"):
            with pytest.raises(PostcompactError) as exc:
                s.upsert_task(_task("t2", "refused while the table was locked"))
            _busy(exc.value)
            if state.kind == "postgresql":
                # Reading the session's tasks waits on the same lock: named and retryable too.
                with pytest.raises(PostcompactError) as exc:
                    s.preview_compact()
                _busy(exc.value)
            else:
                # SQLite's readers are not blocked by a writer (WAL): served at once, as stored.
                text = _preview(s)
                assert "rename alpha everywhere" in text
                assert "refused while the table was locked" not in text
        # The lock is gone: the session is served as the database holds it, no restart.
        text = _preview(s)
        assert "rename alpha everywhere" in text
        assert "Run the linter first." in text
        assert "refused while the table was locked" not in text
        assert s.read_file("src/a.py").unchanged
        again = client.open_session(str(project), session_id=sid)
        assert again.resumed
        s.upsert_task(_task("t2", "accepted once the lock was gone"))
        assert "accepted once the lock was gone" in _preview(s)
        assert "STATE_WRITE_FAILED" not in d.stderr()
    finally:
        client.close()
        d.stop()
    rows = state.sql(d, f"SELECT task_id FROM tasks WHERE session_id = '{sid}' ORDER BY task_id")
    assert [r[0] for r in rows] == ["t1", "t2"]
    ((skills,),) = state.sql(d, f"SELECT count(*) FROM skills WHERE session_id = '{sid}'")
    assert skills == 1


@pytest.mark.postgresql
def test_the_client_retries_state_busy_for_a_call_that_is_not_idempotent(
    pg_state: State, base: Path, project: Path
) -> None:
    """RecordSkill without its time is not idempotent; refused STATE_BUSY with a RetryInfo it
    was not applied, and the client retries it as it retries OVERLOADED. The lock is released
    once the daemon has answered STATE_BUSY at least once."""
    run = base / "d"
    run.mkdir(mode=0o700)
    d = start_daemon(_args(pg_state), runtime_dir=run)
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("retry"))
        s.record_skill("kept", content="Kept.")
        with psycopg.connect(pg_state.url, autocommit=True) as pg:
            pg.execute("BEGIN")
            pg.execute("LOCK TABLE skills IN ACCESS EXCLUSIVE MODE")

            def release_once_refused() -> None:
                deadline = time.monotonic() + 30
                while '"STATE_BUSY"' not in d.stderr() and time.monotonic() < deadline:
                    time.sleep(0.05)
                pg.execute("ROLLBACK")

            releaser = threading.Thread(target=release_once_refused)
            releaser.start()
            try:
                assert s.record_skill("retried", content="Retried after STATE_BUSY.") == 2
            finally:
                releaser.join()
        assert '"STATE_BUSY"' in d.stderr()
        assert "Retried after STATE_BUSY." in _preview(s)
    finally:
        d.stop()


@pytest.mark.postgresql
def test_a_session_first_read_under_a_lock_is_read_once_the_lock_is_gone(
    pg_state: State, base: Path, project: Path
) -> None:
    """Daemon B reads a session daemon A made while its tasks are locked: STATE_BUSY. Before, the
    half-done read left B believing it knew the session's version: every later call answered
    SESSION_NOT_FOUND and OpenSession made it anew, empty, until a restart."""
    (base / "a").mkdir(mode=0o700)
    (base / "b").mkdir(mode=0o700)
    a = start_daemon(pg_state.args, runtime_dir=base / "a")
    b = start_daemon(_args(pg_state), runtime_dir=base / "b")
    client = Client(b.address, auto_start=False, retry=RetryPolicy.none())
    try:
        sid = new_session_id("first")
        sa = a.client.open_session(str(project), session_id=sid)
        sa.upsert_task(_task("t1", "rename alpha everywhere"))
        sa.record_skill("lint", content="Run the linter first.")
        with pg_state.table_locked(b, "tasks"):
            with pytest.raises(PostcompactError) as exc:
                client.attach_session(sid)
            _busy(exc.value)
        sb = client.attach_session(sid)
        assert sb.resumed
        text = _preview(sb)
        assert "rename alpha everywhere" in text
        assert "Run the linter first." in text
        assert client.open_session(str(project), session_id=sid).resumed
    finally:
        client.close()
        a.stop()
        b.stop()


# --- rows another daemon wrote that this one cannot use -----------------------------------------


def _execute(state: State, statement: str) -> None:
    """Change the database as another daemon (or a tool) would."""
    with psycopg.connect(state.url, autocommit=True) as pg:
        pg.execute(statement)


BAD_SESSION_ROWS = [
    pytest.param("profile = 9", "profile 9 is not a known profile", id="profile"),
    pytest.param("templates = '\\xffff'::bytea", "templates is not a serialised", id="templates"),
    pytest.param('roots = \'{"a": "/x"}\'', "roots is not a JSON array", id="roots"),
]


@pytest.mark.postgresql
@pytest.mark.parametrize(("change", "why"), BAD_SESSION_ROWS)
def test_a_bad_session_row_from_another_daemon_is_quarantined_when_read(
    pg_state: State, base: Path, project: Path, change: str, why: str
) -> None:
    """Daemon A makes the session; its row is then changed to one no daemon can use (as another
    daemon, or a tool, could). Daemon B, reading it when a call names it, quarantines it as
    start-up does and answers NOT_FOUND `SESSION_QUARANTINED` naming the reason — every time,
    never INTERNAL; OpenSession with its settings then makes it anew."""
    (base / "a").mkdir(mode=0o700)
    (base / "b").mkdir(mode=0o700)
    a = start_daemon(pg_state.args, runtime_dir=base / "a")
    b = start_daemon(pg_state.args, runtime_dir=base / "b")
    try:
        sid = new_session_id("bad")
        sa = a.client.open_session(str(project), session_id=sid)
        sa.upsert_task(_task("t1", "rename alpha everywhere"))
        sa.record_skill("lint", content="Run the linter first.")
        _execute(pg_state, f"UPDATE sessions SET {change} WHERE session_id = '{sid}'")
        for call in (lambda: b.client.attach_session(sid), b.client.session(sid).preview_compact):
            with pytest.raises(PostcompactError) as exc:
                call()
            assert exc.value.code == grpc.StatusCode.NOT_FOUND, exc.value
            assert exc.value.reason == "SESSION_QUARANTINED", exc.value
            assert why in exc.value.message
        moved = pg_state.sql(
            a, f"SELECT table_name FROM quarantine WHERE row_key LIKE '%{sid}%' ORDER BY id"
        )
        assert sorted(r[0] for r in moved) == ["agents", "sessions", "skills", "tasks"]
        assert not pg_state.sql(a, f"SELECT 1 FROM sessions WHERE session_id = '{sid}'")
        assert "quarantine" in b.stderr()
        assert not b.client.open_session(str(project), session_id=sid).resumed
    finally:
        a.stop()
        b.stop()


@pytest.mark.postgresql
def test_a_bad_task_row_from_another_daemon_goes_alone(
    pg_state: State, base: Path, project: Path
) -> None:
    """A bad row of the session's own (a task blob that does not parse) is quarantined alone
    when the session is read; the session is served with the rest."""
    (base / "a").mkdir(mode=0o700)
    (base / "b").mkdir(mode=0o700)
    a = start_daemon(pg_state.args, runtime_dir=base / "a")
    b = start_daemon(pg_state.args, runtime_dir=base / "b")
    try:
        sid = new_session_id("badtask")
        sa = a.client.open_session(str(project), session_id=sid)
        sa.upsert_task(_task("t1", "rename alpha everywhere"))
        sa.upsert_task(_task("t2", "this one is broken"))
        sa.record_skill("lint", content="Run the linter first.")
        _execute(
            pg_state,
            f"UPDATE tasks SET task = '\\xffff'::bytea WHERE session_id = '{sid}' "
            "AND task_id = 't2'",
        )
        sb = b.client.attach_session(sid)
        assert sb.resumed
        text = _preview(sb)
        assert "rename alpha everywhere" in text
        assert "Run the linter first." in text
        assert "this one is broken" not in text
        moved = pg_state.sql(a, f"SELECT table_name FROM quarantine WHERE row_key LIKE '%{sid}%'")
        assert [r[0] for r in moved] == ["tasks"]
    finally:
        a.stop()
        b.stop()


@pytest.mark.postgresql
def test_the_timeouts_a_url_sets_win_over_the_stores_defaults(pg_state: State) -> None:
    """How the tests above shrink lock_timeout, and how an operator sets either timeout."""
    from postcompact.persist.postgres import TIMEOUTS, connect  # (the others run without it)

    own = connect(f"{pg_state.url}&{LOCK_TIMEOUT}")
    default = connect(pg_state.url)
    try:
        for conn, lock in ((own, "1s"), (default, TIMEOUTS["lock_timeout"])):
            assert conn.execute("SHOW lock_timeout").fetchone() == (lock,)
            statement = conn.execute("SHOW statement_timeout").fetchone()
            assert statement == (TIMEOUTS["statement_timeout"],)
    finally:
        own.close()
        default.close()
