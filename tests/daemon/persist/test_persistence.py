"""Persistence through the real daemon: state survives a graceful restart and `kill -9`; changed
files are not "unchanged" after a restart; migrations; corrupt and newer databases; the `state`
CLI; `--no-persist`."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from postcompact import persist, render
from postcompact_client import PostcompactError, Session
from postcompact_client.types import (
    AttachmentKind,
    CompactResponse,
    PreviewCompactResponse,
    TaskStatus,
    WriteCheck,
)

from tests.daemon.conftest import (
    RunningDaemon,
    State,
    daemon_env,
    new_session_id,
    serve_once,
    short_dir,
    start_daemon,
    text_of,
    write_project,
)


def _restart(d: RunningDaemon, sig: int, args: tuple[str, ...] = ()) -> RunningDaemon:
    code = d.stop(sig)
    assert code == (-signal.SIGKILL if sig == signal.SIGKILL else 0), d.stderr()
    return start_daemon(args or d.args, runtime_dir=d.dir)


def _texts(resp: CompactResponse | PreviewCompactResponse) -> list[str]:
    return [text_of(a) for a in resp.attachments]


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "postcompact", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _populate(d: RunningDaemon, project: Path) -> tuple[Session, Session, str]:
    """A session with everything the durable record holds; returns (main, sub, plan path)."""
    plans = project / "plans"
    plans.mkdir()
    plan = plans / "plan.md"
    plan.write_text("# Plan\n\n1. do it\n")
    main = d.client.open_session(
        str(project),
        session_id=new_session_id("persist"),
        plans_directory=str(plans),
        policy={"max_files": 3},
    )
    main.read_file("src/a.py")
    main.record_read("README.md", "# demo\n\nhello\n", nested_memory=True)
    assert main.compact().compaction == 1  # re-seeds the cache; the count must survive
    main.read_file("docs/notes.txt", offset=2, limit=2)
    main.read_file("src/b.py")
    main.read_file("src/a.py")  # the stub, and a.py becomes the most recently used
    main.record_skill("lint", path="/skills/lint/SKILL.md", content="Run the linter.")
    main.set_plan(str(plan))
    main.set_mode("plan")
    sub = main.start_agent("sub", mode="clone_parent")
    sub.record_skill("deploy", path="/skills/deploy/SKILL.md", content="Ship it carefully.")
    main.upsert_task(
        {
            "task_id": "t1",
            "task_type": "local_agent",
            "description": "explore the code",
            "status": TaskStatus.RUNNING,
            "progress_summary": "read 3 files",
            "agent_id": "sub",
        }
    )
    first = main.set_catalog(
        deferred_tools=["WebFetch", "Bash"],
        agent_types=[{"agent_type": "explorer", "when_to_use": "to look around"}],
        mcp_servers={"db": "Query with care."},
        skill_listing=[("lint", "run the linter")],
    )
    assert len(first) == 4  # three deltas and the skill listing
    return main, sub, str(plan)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["graceful", "kill-9"])
def test_state_survives_a_restart(state: State, base: Path, sig: int) -> None:
    project = write_project(base / "p")
    d = start_daemon(state.args, runtime_dir=base)
    main, sub, _ = _populate(d, project)
    before_main = _texts(main.preview_compact())
    before_sub = _texts(sub.preview_compact())
    assert any("plan.md" in t for t in before_main)
    assert any("Ship it carefully." in t for t in before_sub)
    before_info = {s.session_id: s for s in d.client.list_sessions()}[main.session_id]

    d = _restart(d, sig)
    try:
        info = {s.session_id: s for s in d.client.list_sessions()}[main.session_id]
        assert list(info.agent_ids) == ["", "sub"]
        assert info.cached_entries == before_info.cached_entries
        assert info.cached_bytes == before_info.cached_bytes
        assert info.compactions == 1
        assert info.created_at_ms == before_info.created_at_ms
        main = d.client.session(main.session_id)
        sub = d.client.session(main.session_id, "sub")
        # The same restoration: files (order, ranges, policy max_files), plan and plan mode,
        # skills, the sub-agent's task, and the full re-announcement of the catalogue.
        assert _texts(main.preview_compact()) == before_main
        assert _texts(sub.preview_compact()) == before_sub
        # Announced sets and the skill listing already sent survived: nothing new to announce.
        again = main.set_catalog(
            deferred_tools=["WebFetch", "Bash"],
            agent_types=[{"agent_type": "explorer", "when_to_use": "to look around"}],
            mcp_servers={"db": "Query with care."},
            skill_listing=[("lint", "run the linter")],
        )
        assert again == []
        # The dedup stub and the write precondition work on the restored entries.
        stub = main.read_file("src/a.py")
        assert stub.unchanged
        assert stub.text.decode() == render.FILE_UNCHANGED_STUB
        assert main.read_file("docs/notes.txt", offset=2, limit=2).unchanged
        assert not main.read_file("docs/notes.txt").unchanged  # another range
        assert main.check_write("src/b.py").result == WriteCheck.ALLOWED
        assert sub.check_write("src/a.py").result == WriteCheck.ALLOWED
        assert main.check_write("src/new.py").result == WriteCheck.ALLOWED
        # A real Compact after the restart (the reads above changed the cache) counts on.
        expected = _texts(main.preview_compact())
        resp = main.compact()
        assert resp.compaction == 2
        assert _texts(resp) == expected
        assert _texts(sub.compact()) == before_sub
        assert main.record_skill("lint", content="again") == 1
    finally:
        d.stop()


def test_acknowledged_calls_survive_kill_9(state: State, base: Path) -> None:
    project = write_project(base / "p")
    d = start_daemon(state.args, runtime_dir=base)
    s = d.client.open_session(str(project), session_id=new_session_id("ack"))
    for i in range(20):
        s.record_skill(f"skill-{i}", content=f"body {i}")
        s.upsert_task({"task_id": f"t{i}", "task_type": "shell", "description": f"job {i}"})
    s.record_write("src/c.py", "x = 1\n", timestamp_ms=1234)
    s.set_mode("accept_edits")
    d.proc.send_signal(signal.SIGKILL)  # right after the last acknowledged call
    d = _restart(d, signal.SIGKILL)
    try:
        s = d.client.session(s.session_id)
        assert s.record_skill("skill-0", content="body 0") == 20  # all 20 are there
        texts = _texts(s.preview_compact())
        assert any("skill-19" in t for t in texts)
        s.upsert_task({"task_id": "t20", "task_type": "shell"})  # accepted: under the limits
        info = {i.session_id: i for i in d.client.list_sessions()}[s.session_id]
        assert info.cached_entries == 1
        (project / "src/c.py").write_text("x = 1\n")  # mtime > 1234: modified since the write
        assert s.check_write("src/c.py").result == WriteCheck.MODIFIED
    finally:
        d.stop()


def test_what_a_compaction_carried_survives_kill_9(state: State, base: Path) -> None:
    """Under claude-code: the reads carried over a compaction (the Edit/Write check), the files
    restored as too-large notes (candidates again) and the skills the budget rewrote are in the
    database."""
    project = write_project(base / "p")
    big = project / "big.txt"
    big.write_text("".join(f"line {i:05d} of a long file\n" for i in range(2000)))
    d = start_daemon(state.args, runtime_dir=base)
    s = d.client.open_session(
        str(project), session_id=new_session_id("carry"), profile="claude-code"
    )
    s.read_file("src/a.py")
    s.read_file("big.txt")
    s.record_skill("huge", content="h" * 40_000)
    first = s.compact(skip_hooks=True, policy={"max_files": 1, "skills_token_budget": 10})
    assert [a.kind for a in first.attachments] == [AttachmentKind.COMPACT_FILE_REFERENCE]
    d.proc.send_signal(signal.SIGKILL)
    d = _restart(d, signal.SIGKILL)
    try:
        s = d.client.session(s.session_id)
        assert s.check_write("src/a.py").result == WriteCheck.ALLOWED  # carried
        again = s.preview_compact(skip_hooks=True)
        kinds = [a.kind for a in again.attachments]
        assert AttachmentKind.COMPACT_FILE_REFERENCE in kinds  # still a candidate
        assert AttachmentKind.INVOKED_SKILLS not in kinds  # emptied by the budget
        dropped = [d for d in again.decisions if d.name == "huge"]
        assert "emptied" in dropped[0].detail
    finally:
        d.stop()


def test_a_file_changed_while_the_daemon_was_down(state: State, base: Path) -> None:
    project = write_project(base / "p")
    d = start_daemon(state.args, runtime_dir=base)
    s = d.client.open_session(str(project), session_id=new_session_id("changed"))
    for rel in ("src/a.py", "src/b.py", "README.md"):
        assert not s.read_file(rel).unchanged
    d.proc.send_signal(signal.SIGKILL)
    d.proc.wait()
    # a.py: new content, the same mtime (only the content hash tells); b.py: a normal edit.
    a = project / "src/a.py"
    st = os.stat(a)
    a.write_text("alpha = 100\nbeta = 2\ngamma = 3\n")
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))
    b = project / "src/b.py"
    b.write_text("print('edited')\n")
    os.utime(b, ns=(st.st_mtime_ns + 10**9 * 60, st.st_mtime_ns + 10**9 * 60))
    d = _restart(d, signal.SIGKILL)
    try:
        s = d.client.session(s.session_id)
        assert s.check_write("src/a.py").result == WriteCheck.MODIFIED
        assert s.check_write("src/b.py").result == WriteCheck.MODIFIED
        assert s.check_write("README.md").result == WriteCheck.ALLOWED
        r = s.read_file("src/a.py")
        assert not r.unchanged
        assert r.content == b"alpha = 100\nbeta = 2\ngamma = 3\n"
        r = s.read_file("src/b.py")
        assert not r.unchanged
        assert r.content == b"print('edited')\n"
        assert s.read_file("README.md").unchanged
        # Re-read, both are current again.
        assert s.read_file("src/a.py").unchanged
        assert s.check_write("src/a.py").result == WriteCheck.ALLOWED
        # Compact restores the new contents.
        texts = "".join(_texts(s.compact()))
        assert "alpha = 100" in texts
        assert "print('edited')" in texts
    finally:
        d.stop()


def test_a_restart_keeps_the_most_recently_used_order(state: State, base: Path) -> None:
    project = write_project(base / "p")
    d = start_daemon(state.args, runtime_dir=base, config_toml="[limits]\ncache_max_entries = 3\n")
    s = d.client.open_session(str(project), session_id=new_session_id("mru"))
    for rel in ("src/a.py", "src/b.py", "README.md"):
        s.record_read(rel, (project / rel).read_text(), timestamp_ms=1000)
    s.check_write("src/a.py")  # a promoting get: b.py is now the least recently used
    d = _restart(d, signal.SIGKILL)
    try:
        s = d.client.session(s.session_id)
        s.record_read("docs/notes.txt", "one", timestamp_ms=1000)  # evicts the LRU entry
        assert s.check_write("src/b.py").result == WriteCheck.NOT_READ
        assert s.check_write("src/a.py").result == WriteCheck.ALLOWED
        assert s.check_write("README.md").result == WriteCheck.ALLOWED
    finally:
        d.stop()
    d = start_daemon(state.args, runtime_dir=base)  # and the eviction itself was persisted
    try:
        info = {i.session_id: i for i in d.client.list_sessions()}[s.session_id]
        assert info.cached_entries == 3
    finally:
        d.stop()


def test_close_session_is_durable(state: State, base: Path) -> None:
    project = write_project(base / "p")
    d = start_daemon(state.args, runtime_dir=base)
    keep = d.client.open_session(str(project), session_id=new_session_id("keep"))
    gone = d.client.open_session(str(project), session_id=new_session_id("gone"))
    gone.read_file("src/a.py")
    gone.close()
    d = _restart(d, signal.SIGKILL)
    try:
        assert [i.session_id for i in d.client.list_sessions()] == [keep.session_id]
    finally:
        d.stop()


def test_no_persist(base: Path) -> None:
    project = write_project(base / "p")
    state = base / "nope.db"
    d = start_daemon(["--no-persist", "--state-path", str(state)], runtime_dir=base)
    d.client.open_session(str(project), session_id=new_session_id("mem"))
    d = _restart(d, signal.SIGTERM, ("--no-persist", "--state-path", str(state)))
    try:
        assert d.client.list_sessions() == []
        assert not state.exists()
    finally:
        d.stop()


# --- the database file: location, migrations, corruption, newer versions, the CLI ------------


def test_default_location_and_permissions(base: Path) -> None:
    d = start_daemon(runtime_dir=base)
    try:
        d.client.open_session(str(write_project(base / "p")), session_id=new_session_id("loc"))
        db = persist.state_db_path(socket=d.socket_path, env=d.env)
        assert db.parent == base / "state" / "postcompact"
        assert db.exists()
        assert (db.stat().st_mode & 0o777) == 0o600
        r = _cli("state", "check", "--socket", str(d.socket_path), env=d.env)
        assert r.returncode == 0, r.stderr
        assert str(db) in r.stdout
        assert f"schema version  {persist.SCHEMA_VERSION}" in r.stdout
        assert "integrity       ok" in r.stdout
        # While the daemon runs the database is its own: reset refuses.
        r = _cli("state", "reset", "--yes", "--socket", str(d.socket_path), env=d.env)
        assert r.returncode == 1
        assert "in use by a running daemon" in r.stderr
        assert db.exists()
    finally:
        d.stop()


def _v1_database(path: Path, project: Path) -> None:
    """A database as schema version 1 left it, with one session, agent, file and skill."""
    conn = persist.connect(path)
    assert persist.migrate(conn, target=1) == (0, 1)
    conn.execute(
        "INSERT INTO sessions VALUES ('old', 1, ?, ?, ?, '[]', ?, x'', 0, 5, ?)",
        (str(project), str(project), f'["{project}"]', str(project / "plans"), 2**62),
    )
    conn.execute("INSERT INTO agents VALUES ('old', '', 2, NULL, 0, 3, '[]', '{}')")
    content = (project / "src/a.py").read_bytes()
    conn.execute(
        "INSERT INTO files VALUES ('old', '', ?, 3, 77, 1, NULL, 0, ?, ?, NULL, NULL)",
        (str(project / "src/a.py"), persist.content_digest(content), len(content)),
    )
    conn.execute("INSERT INTO skills VALUES ('old', '', 'legacy', 4, '/s', x'6869', 9)")
    conn.close()


def test_migrates_a_version_1_database(base: Path) -> None:
    project = write_project(base / "p")
    db = base / "old.db"
    _v1_database(db, project)
    env = daemon_env(base)
    r = _cli("state", "check", "--state-path", str(db), "--json", env=env)
    assert r.returncode == 0, r.stderr
    assert '"schema_version": 1' in r.stdout
    d = start_daemon(["--state-path", str(db)], runtime_dir=base)
    try:
        (info,) = d.client.list_sessions()
        assert info.session_id == "old"
        assert info.compactions == 3
        assert info.cached_entries == 1
        s = d.client.session("old")
        texts = "".join(_texts(s.preview_compact()))
        assert "legacy" in texts
        assert "alpha = 1" in texts
        assert s.check_write("src/a.py").result == WriteCheck.MODIFIED  # mtime > 77
    finally:
        d.stop()
    r = _cli("state", "check", "--state-path", str(db), env=env)
    assert r.returncode == 0, r.stderr
    assert f"schema version  {persist.SCHEMA_VERSION}" in r.stdout
    assert "migrated to v2" in r.stdout
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == persist.SCHEMA_VERSION
    conn.close()


def _serve_fails(base: Path, *args: str) -> str:
    r = serve_once(base, *args)
    assert r.returncode == 1, (r.returncode, r.stderr)
    return r.stderr


def _corrupt_database(db: Path) -> bytes:
    """An SQLite database whose pages after the header are garbage; returns its bytes."""
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (x TEXT)")
    conn.executemany("INSERT INTO t VALUES (?)", [(f"row {i}",) for i in range(2000)])
    conn.commit()
    conn.close()
    data = bytearray(db.read_bytes())
    data[4096:12288] = b"garbage!" * 1024
    db.write_bytes(bytes(data))
    return bytes(data)


def test_a_file_that_is_not_a_database_is_never_moved(base: Path) -> None:
    db = base / "notes.db"
    db.write_bytes(b"this is not an SQLite database, just text " * 200)
    err = _serve_fails(base, "--state-path", str(db))
    assert f"{db} is not an SQLite database" in err
    env = daemon_env(base)
    r = _cli("state", "reset", "--yes", "--state-path", str(db), env=env)
    assert r.returncode == 1
    assert "not an SQLite database" in r.stderr
    assert db.read_bytes().startswith(b"this is not an SQLite database")
    assert not list(base.glob("notes.db.bak-*"))


def test_corrupt_database_refuses_to_start_and_reset_recovers(base: Path) -> None:
    db = base / "bad.db"
    original = _corrupt_database(db)
    err = _serve_fails(base, "--state-path", str(db))
    assert str(db) in err
    assert "corrupt" in err
    assert "postcompact state reset" in err
    env = daemon_env(base)
    r = _cli("state", "check", "--state-path", str(db), env=env)
    assert r.returncode == 1
    assert "PROBLEM" in r.stdout
    r = _cli("state", "reset", "--state-path", str(db), env=env)
    assert r.returncode == 2  # no --yes and stdin is not a terminal: nothing happens
    assert db.exists()
    r = _cli("state", "reset", "--yes", "--state-path", str(db), env=env)
    assert r.returncode == 0, r.stderr
    (backup,) = base.glob("bad.db.bak-*")
    assert backup.read_bytes() == original  # never lost
    assert not db.exists()
    d = start_daemon(["--state-path", str(db)], runtime_dir=base)
    try:
        assert d.client.list_sessions() == []
    finally:
        d.stop()
    assert _cli("state", "check", "--state-path", str(db), env=env).returncode == 0


def test_newer_schema_version_is_refused(base: Path) -> None:
    db = base / "new.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE future (x)")
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    err = _serve_fails(base, "--state-path", str(db))
    assert str(db) in err
    assert "schema version 99" in err
    assert "newer" in err
    r = _cli("state", "check", "--state-path", str(db), env=daemon_env(base))
    assert r.returncode == 1
    assert "newer" in r.stdout
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 99  # untouched
    conn.close()


def test_state_check_without_a_database(base: Path) -> None:
    r = _cli("state", "check", "--state-path", str(base / "none.db"), env=daemon_env(base))
    assert r.returncode == 0
    assert "no state database" in r.stdout


def test_two_daemons_cannot_share_one_database(base: Path) -> None:
    db = base / "shared.db"
    d = start_daemon(["--state-path", str(db)], runtime_dir=base)
    try:
        other = short_dir("pco")
        try:
            err = _serve_fails(other, "--state-path", str(db))
            assert "in use by another postcompact daemon" in err
        finally:
            shutil.rmtree(other, ignore_errors=True)
    finally:
        d.stop()


def test_unknown_session_after_a_restart(state: State, base: Path) -> None:
    """An unknown session after a restart is still NOT_FOUND (nothing invented on load)."""
    d = start_daemon(state.args, runtime_dir=base)
    d = _restart(d, signal.SIGKILL)
    try:
        with pytest.raises(PostcompactError) as exc:
            d.client.session("never-opened").read_file("x")
        assert exc.value.reason == "SESSION_NOT_FOUND"
    finally:
        d.stop()
