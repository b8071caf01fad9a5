"""Bad values in a valid state database (written with sqlite3 while the daemon is stopped): `serve`
starts, moves the rows it cannot use to the quarantine table with a warning and serves the rest;
`state check` reports exactly those rows first (exit 1) and only counts them once they are set
aside (exit 0). Everything goes through the real daemon and CLI."""

from __future__ import annotations

import json
import signal
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest
from postcompact import persist
from postcompact_client import PostcompactError
from postcompact_client.types import WriteCheck

from tests.daemon.cli.test_cli import cli
from tests.daemon.conftest import RunningDaemon, new_session_id, start_daemon, write_project

# Every table holding a session's rows: a bad session row takes all of them along.
SESSION_TABLES = {"sessions", "agents", "catalogs", "files", "skills", "tasks"}
# An agent's own rows: a bad agent row takes these.
AGENT_TABLES = {"agents", "catalogs", "files", "skills"}


@dataclass(frozen=True)
class Case:
    sql: str  # run with :sid (the victim session) and :a_py (its main agent's src/a.py)
    table: str  # where the bad value is
    reason: str  # in the reason that `state check` and the log give
    quarantined: set[str]  # the tables whose rows of the victim go to the quarantine
    loosen: str | None = None  # a table whose schema loses its NOT NULL first (see _loosen)


MAIN_FILE = "session_id = :sid AND agent_id = '' AND path = :a_py"
CASES = {
    "task-blob": Case(
        "UPDATE tasks SET task = x'ffffffff' WHERE session_id = :sid",
        "tasks",
        "not a serialised postcompact.v1.Task",
        {"tasks"},
    ),
    "roots-json": Case(
        "UPDATE sessions SET roots = '{not json' WHERE session_id = :sid",
        "sessions",
        "roots is not valid JSON",
        SESSION_TABLES,
    ),
    "roots-type": Case(
        "UPDATE sessions SET roots = '[\"relative/dir\", 7]' WHERE session_id = :sid",
        "sessions",
        "not an absolute path",
        SESSION_TABLES,
    ),
    "profile": Case(
        "UPDATE sessions SET profile = 99 WHERE session_id = :sid",
        "sessions",
        "profile 99 is not a known profile",
        SESSION_TABLES,
    ),
    "session-id-blob": Case(
        "UPDATE sessions SET session_id = x'00ff' WHERE session_id = :sid",
        "sessions",
        "session_id is BLOB, not text",
        SESSION_TABLES,
    ),
    "cwd-not-utf8": Case(
        "UPDATE sessions SET cwd = CAST(x'2fff' AS TEXT) WHERE session_id = :sid",
        "sessions",
        "cwd is not valid UTF-8",
        SESSION_TABLES,
    ),
    "policy-blob": Case(
        "UPDATE sessions SET policy = x'ffffffff' WHERE session_id = :sid",
        "sessions",
        "not a serialised postcompact.v1.RestorePolicy",
        SESSION_TABLES,
    ),
    "announced-json": Case(
        "UPDATE agents SET announced = '[1,2' WHERE session_id = :sid AND agent_id = ''",
        "agents",
        "announced is not valid JSON",
        AGENT_TABLES,
    ),
    "mode": Case(
        "UPDATE agents SET mode = 42 WHERE session_id = :sid AND agent_id = ''",
        "agents",
        "mode 42 is not a known permission mode",
        AGENT_TABLES,
    ),
    "carried-type": Case(
        'UPDATE agents SET carried = \'{"reads": {"/x": "zz"}}\' '
        "WHERE session_id = :sid AND agent_id = ''",
        "agents",
        "carried.reads",
        AGENT_TABLES,
    ),
    "read-offset": Case(
        f"UPDATE files SET read_offset = -5 WHERE {MAIN_FILE}",
        "files",
        "read_offset is -5, below 0",
        {"files"},
    ),
    "relative-path": Case(
        f"UPDATE files SET path = 'src/a.py' WHERE {MAIN_FILE}",
        "files",
        "path is not an absolute path: 'src/a.py'",
        {"files"},
    ),
    "file-seq-text": Case(
        f"UPDATE files SET seq = 'abc' WHERE {MAIN_FILE}",
        "files",
        "seq is 'abc', not an integer",
        {"files"},
    ),
    "file-digest-text": Case(
        f"UPDATE files SET content_sha256 = 'not a digest' WHERE {MAIN_FILE}",
        "files",
        "content_sha256 is TEXT, not a BLOB",
        {"files"},
    ),
    "catalog-blob": Case(
        "UPDATE catalogs SET parts = x'ffffffff' WHERE session_id = :sid",
        "catalogs",
        "not a serialised postcompact.v1.SetCatalogRequest",
        {"catalogs"},
    ),
    "skill-content-null": Case(
        "UPDATE skills SET content = NULL WHERE session_id = :sid AND agent_id = ''",
        "skills",
        "content is NULL, not a BLOB",
        {"skills"},
        loosen="skills",
    ),
    "skill-content-text": Case(
        "UPDATE skills SET content = 'plain text' WHERE session_id = :sid AND agent_id = ''",
        "skills",
        "content is TEXT, not a BLOB",
        {"skills"},
    ),
    "orphan-file": Case(
        "UPDATE files SET agent_id = 'nobody' WHERE " + MAIN_FILE,
        "files",
        "its agent is not stored",
        {"files"},
    ),
}


def _db(d: RunningDaemon) -> Path:
    return persist.state_db_path(socket=d.socket_path, env=d.env)


def _check(d: RunningDaemon, *flags: str) -> tuple[int, str]:
    r = cli(["state", "check", "--socket", str(d.socket_path), *flags], d.env)
    assert "Traceback" not in r.stderr, r.stderr
    return r.returncode, r.stdout


def _populate(d: RunningDaemon, project: Path) -> tuple[str, str]:
    """A session that keeps its rows (recorded first) and a victim with a row in every table;
    returns their ids."""
    keeper = d.client.open_session(str(project), session_id=new_session_id("keeper"))
    keeper.read_file("src/b.py")
    victim = d.client.open_session(str(project), session_id=new_session_id("victim"))
    victim.read_file("src/a.py")
    victim.read_file("README.md")
    victim.record_skill("lint", path="/skills/lint/SKILL.md", content="Run the linter.")
    victim.upsert_task({"task_id": "t1", "task_type": "shell", "description": "build"})
    victim.set_catalog(deferred_tools=["WebFetch"], mcp_servers={"db": "Query with care."})
    sub = victim.start_agent("sub")
    sub.read_file("docs/notes.txt")
    sub.record_skill("deploy", content="Ship it.")
    return keeper.session_id, victim.session_id


def _loosen(db: Path, table: str) -> None:
    """Drop the NOT NULL constraints of `table` from its schema text, as a database made by
    hand (or edited with writable_schema) has them: the file stays a valid database."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute(
            "UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') WHERE name = ?", (table,)
        )
        conn.execute("PRAGMA writable_schema = OFF")
    finally:
        conn.close()


def _corrupt(db: Path, case: Case, sid: str, project: Path) -> None:
    if case.loosen is not None:
        _loosen(db, case.loosen)
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        cur = conn.execute(case.sql, {"sid": sid, "a_py": str(project / "src/a.py")})
        assert cur.rowcount >= 1, case.sql
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    finally:
        conn.close()


def _rows_of(db: Path, sid: str) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        return {
            t: conn.execute(f"SELECT count(*) FROM {t} WHERE session_id = ?", (sid,)).fetchone()[0]
            for t in sorted(SESSION_TABLES)
        }
    finally:
        conn.close()


def _quarantine(db: Path) -> list[tuple[str, dict[str, object], dict[str, object], str]]:
    conn = sqlite3.connect(db)
    try:
        return [
            (table, json.loads(key), json.loads(row), reason)
            for table, key, row, reason in conn.execute(
                "SELECT table_name, row_key, row_data, reason FROM quarantine ORDER BY id"
            )
        ]
    finally:
        conn.close()


@pytest.mark.parametrize("name", list(CASES))
def test_serve_quarantines_a_bad_row_and_serves_the_rest(base: Path, name: str) -> None:
    case = CASES[name]
    project = write_project(base / "p")
    d = start_daemon(runtime_dir=base)
    keeper, victim = _populate(d, project)
    assert d.stop() == 0, d.stderr()
    db = _db(d)
    before = _rows_of(db, victim)
    _corrupt(db, case, victim, project)

    # `state check` finds it, names table and reason, and changes nothing.
    code, out = _check(d)
    assert code == 1, out
    assert f"{'BAD ROW':<15} {case.table} " in out, out
    assert case.reason in out, out
    code, out = _check(d, "--json")
    report = json.loads(out)
    assert code == 1
    assert not report["ok"]
    found = report["bad_rows"]
    assert {b["table"] for b in found} == case.quarantined, found
    assert any(b["table"] == case.table and case.reason in b["reason"] for b in found), found
    assert report["quarantined_rows"] == 0

    d = start_daemon(runtime_dir=base)  # raises (with the daemon's stderr) if it did not start
    try:
        # Start-up reads no session: nothing is quarantined until the victim is first used.
        assert "quarantine" not in d.stderr()
        assert _quarantine(db) == []
        # The untouched session is served with its state (read when named: nothing to move).
        assert d.client.session(keeper).check_write("src/b.py").result == WriteCheck.ALLOWED
        assert _quarantine(db) == []
        # The victim's first use reads it, and moves its bad rows then.
        if "sessions" in case.quarantined:
            with pytest.raises(PostcompactError) as refused:
                d.client.session(victim).check_write("README.md")
            assert refused.value.reason == "SESSION_QUARANTINED", refused.value
        else:
            got = d.client.session(victim).check_write("README.md").result
            if "agents" not in case.quarantined:
                # The victim's other rows were kept: its README.md entry still answers.
                assert got == WriteCheck.ALLOWED
        err = d.stderr()
        assert "Traceback" not in err, err
        warnings = [json.loads(line) for line in err.splitlines() if "quarantine" in line]
        assert warnings, err
        table = "agents" if name == "session-id-blob" else case.table  # (its row is not named)
        first = next(w for w in warnings if w.get("table") == table)
        assert first["level"] == "warning"
        assert first["state_db"] == str(db)
        assert (case.reason if table == case.table else "its session") in first["reason"]
        assert any(victim in w["key"] for w in warnings)

        sessions = {i.session_id: i for i in d.client.list_sessions()}
        assert sessions[keeper].cached_entries == 1
        assert (victim in sessions) == ("sessions" not in case.quarantined)
        if "sessions" not in case.quarantined:  # an agent's rows gone, the agent is made anew
            assert list(sessions[victim].agent_ids) == ["", "sub"]

        # The rows moved: each recorded whole, deleted from its table, nothing else touched.
        moved = _quarantine(db)
        # Exactly what `state check` reported, for the same reasons; but a session row whose
        # own id is not text is named by no call: it stays, and `state check` reports it.
        unnamed = (
            [b for b in found if b["table"] == "sessions"] if name == "session-id-blob" else []
        )
        assert sorted((t, json.dumps(k), r) for t, k, _, r in moved) == sorted(
            (b["table"], json.dumps(b["key"]), b["reason"]) for b in found if b not in unnamed
        )
        after = _rows_of(db, victim)
        for table in SESSION_TABLES:
            gone = sum(1 for t, _, _, _ in moved if t == table)
            if table == "sessions":
                gone += len(unnamed)  # (under another id now)
            assert after[table] == before[table] - gone, (table, before, after)
        for _, key, row, reason in moved:
            assert row["session_id"] == key["session_id"]
            assert reason
        if name == "task-blob":
            (task,) = [row for t, _, row, _ in moved if t == "tasks"]
            assert task["task"] == "ffffffff"  # BLOBs hex-encoded
        if "sessions" in case.quarantined:
            assert after == dict.fromkeys(after, 0)
        if unnamed:
            code, out = _check(d, "--json")
            assert code == 1
            assert json.loads(out)["bad_rows"] == unnamed
            return

        # `state check` is satisfied now and counts what is set aside.
        code, out = _check(d)
        assert code == 0, out
        assert f"{'quarantined':<15} {len(moved)} rows" in out, out
        code, out = _check(d, "--json")
        assert code == 0
        assert json.loads(out)["quarantined_rows"] == len(moved)
        assert json.loads(out)["bad_rows"] == []
    finally:
        d.stop()

    # A restart finds nothing more to quarantine and the quarantine stays.
    d = start_daemon(runtime_dir=base)
    try:
        assert "quarantine" not in d.stderr()
        assert len(_quarantine(db)) == len(moved)
    finally:
        d.stop(signal.SIGKILL)


def _serve_refuses(d: RunningDaemon, db: Path) -> str:
    """`serve` exits 1 with one line (no traceback) naming the database and the way out."""
    r = cli(["serve", "--socket", str(d.socket_path)], d.env, timeout=60)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("postcompact: "), r.stderr
    assert str(db) in lines[0], r.stderr
    assert "postcompact state reset" in lines[0], r.stderr
    return lines[0]


def test_a_table_without_its_columns_is_one_line(base: Path) -> None:
    """What quarantining cannot fix (a table lacks a column of its schema version) is one line
    naming the file and the way out, from `serve` and from `state check`."""
    project = write_project(base / "p")
    d = start_daemon(runtime_dir=base)
    d.client.open_session(str(project), session_id=new_session_id("x")).read_file("src/a.py")
    assert d.stop() == 0
    db = _db(d)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("ALTER TABLE files DROP COLUMN mark_mtime_ms")
    conn.close()
    line = _serve_refuses(d, db)
    assert "mark_mtime_ms" in line
    code, out = _check(d)
    assert code == 1
    assert "mark_mtime_ms" in out


def test_rows_that_cannot_be_moved_are_one_line(base: Path) -> None:
    """When the quarantine itself fails (here a trigger refuses the delete), the session's first
    use is refused FAILED_PRECONDITION `STATE_ROW_UNUSABLE`, naming the file and the way out,
    and the database is as it was."""
    project = write_project(base / "p")
    d = start_daemon(runtime_dir=base)
    _, victim = _populate(d, project)
    assert d.stop() == 0
    db = _db(d)
    _corrupt(db, CASES["task-blob"], victim, project)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "CREATE TRIGGER keep BEFORE DELETE ON tasks BEGIN SELECT RAISE(ABORT, 'kept'); END"
    )
    conn.close()
    # Nothing is read at start-up: the session's first use meets the row, and is refused with
    # what failed and the way out; the database is as it was.
    d = start_daemon(runtime_dir=base)
    try:
        with pytest.raises(PostcompactError) as refused:
            d.client.session(victim).check_write("README.md")
        assert refused.value.reason == "STATE_ROW_UNUSABLE", refused.value
        message = refused.value.message
        assert "quarantine table" in message, message
        assert "failed (kept)" in message, message
        assert str(db) in message
        assert "postcompact state reset" in message
    finally:
        d.stop()
    assert _quarantine(db) == []
    assert _rows_of(db, victim)["tasks"] == 1
