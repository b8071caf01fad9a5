"""The PostgreSQL store's own cases through the real daemon and CLI (docs/fleet.md): state_url
and its aliases, a database that cannot be reached or used at start-up (one clear line), a newer
schema, rows quarantined at load and reported by `state check`, `state reset` refused. The
cases that need no server (configuration errors) run in the default selection."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from postcompact import persist
from postcompact.config import (
    Config,
    ConfigError,
    load_config,
    parse_state_url,
    redact_url,
    state_location,
)
from postcompact.errors import Aborted, Unavailable
from postcompact.persist.postgres import PostgresStore
from postcompact.service.files import FileService
from postcompact.service.sessions import SessionService
from postcompact.service.work import WorkService
from postcompact.state.registry import Registry
from postcompact.state.worker import finish_inline as done
from postcompact.v1 import postcompact_pb2 as dpb
from postcompact_client import PostcompactError

from tests.daemon.conftest import (
    State,
    daemon_env,
    new_session_id,
    serve_once,
    start_daemon,
    write_project,
)


def _run(base: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "postcompact", *args],
        env=daemon_env(base),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# --- configuration (no server needed) ---------------------------------------------------------


def test_state_url_forms() -> None:
    assert parse_state_url("sqlite:").path is None
    assert parse_state_url("sqlite://").kind == "sqlite"
    assert parse_state_url("sqlite:///var/lib/pc/state.db").path == Path("/var/lib/pc/state.db")
    pg = parse_state_url("postgresql:///fleet?host=/run/postgresql")
    assert (pg.kind, pg.url) == ("postgresql", "postgresql:///fleet?host=/run/postgresql")
    assert parse_state_url("postgres://u@h/db").kind == "postgresql"
    for bad in ("sqlite://relative/x.db", "sqlite:rel.db", "mysql://h/db", "", "sqlite:///dir/"):
        with pytest.raises(ConfigError, match="state_url"):
            parse_state_url(bad)


def test_passwords_are_never_shown() -> None:
    assert redact_url("postgresql://u:s3cret@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redact_url("postgresql:///db?host=/s&password=s3cret&x=1") == (
        "postgresql:///db?host=/s&password=***&x=1"
    )
    with pytest.raises(ConfigError) as exc:
        parse_state_url("mysql://u:s3cret@h/db")
    assert "s3cret" not in str(exc.value)


def test_state_url_and_its_aliases() -> None:
    env = {"XDG_CONFIG_HOME": "/nonexistent"}
    url = "postgresql:///fleet?host=/tmp"
    assert state_location(load_config({"state_url": url}, env=env)).url == url
    from_env = load_config(env={**env, "POSTCOMPACT_STATE_URL": "sqlite:///x/s.db"})
    assert state_location(from_env).path == Path("/x/s.db")
    assert state_location(load_config({"state_path": "/y/s.db"}, env=env)).path == Path("/y/s.db")
    assert state_location(load_config({"state_dir": "/z"}, env=env)).dir == Path("/z")
    for alias in ("state_path", "state_dir"):
        with pytest.raises(ConfigError, match=f"both state_url .* and {alias}"):
            load_config({"state_url": url, alias: "/y"}, env=env)


def test_a_bad_state_url_is_a_configuration_error(base: Path) -> None:
    r = serve_once(base, "--state-url", "mysql://u:pw@h/db")
    assert r.returncode == 2, r.stderr
    assert "state_url" in r.stderr
    assert "pw" not in r.stderr
    r = serve_once(base, "--state-url", "sqlite:///x.db", "--state-path", str(base / "s.db"))
    assert r.returncode == 2
    assert "both state_url" in r.stderr


def test_a_sqlite_url_names_the_file(base: Path) -> None:
    db = base / "via-url.db"
    d = start_daemon(["--state-url", f"sqlite://{db}"], runtime_dir=base)
    try:
        d.client.open_session(str(write_project(base / "p")), session_id=new_session_id("u"))
    finally:
        d.stop()
    r = _run(base, "state", "check", "--json", "--state-url", f"sqlite://{db}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["counts"]["sessions"] == 1


# --- against the server -----------------------------------------------------------------------


@pytest.mark.postgresql
def test_an_unreachable_database_stops_the_start_with_one_line(base: Path) -> None:
    url = f"postgresql://pc:s3cret@/nodb?host={base}/nosuchdir"
    r = serve_once(base, "--state-url", url)
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "cannot connect to the state database postgresql://pc:***@/nodb" in lines[0]
    assert "s3cret" not in r.stderr
    r = _run(base, "state", "check", "--state-url", url)
    assert r.returncode == 1
    assert "cannot connect" in r.stderr


@pytest.mark.postgresql
def test_a_newer_schema_is_refused(pg_state: State, base: Path) -> None:
    d = start_daemon(pg_state.args, runtime_dir=base)  # creates the tables
    d.stop()
    assert pg_state.cluster is not None
    db = pg_state.url.split("///", 1)[1].split("?", 1)[0]
    pg_state.cluster.psql("INSERT INTO schema_history VALUES (99, 0, '9.9.9')", db=db)
    r = serve_once(base, *pg_state.args)
    assert r.returncode == 1
    assert "schema version 99, newer than this postcompact" in r.stderr
    r = _run(base, "state", "check", *pg_state.args)
    assert r.returncode == 1
    assert "newer" in r.stdout


@pytest.mark.postgresql
def test_a_database_with_other_tables_is_refused(pg_state: State, base: Path) -> None:
    assert pg_state.cluster is not None
    db = pg_state.url.split("///", 1)[1].split("?", 1)[0]
    pg_state.cluster.psql("CREATE TABLE sessions (id int)", db=db)
    r = serve_once(base, *pg_state.args)
    assert r.returncode == 1
    assert "not a postcompact database" in r.stderr


@pytest.mark.postgresql
def test_bad_rows_are_quarantined_and_reported(pg_state: State, base: Path) -> None:
    project = write_project(base / "p")
    d = start_daemon(pg_state.args, runtime_dir=base)
    good = d.client.open_session(str(project), session_id=new_session_id("good"))
    bad = d.client.open_session(str(project), session_id=new_session_id("bad"))
    good.read_file("src/a.py")
    bad.read_file("src/a.py")
    bad.upsert_task({"task_id": "t1", "task_type": "shell"})
    d.stop()
    assert pg_state.cluster is not None
    db = pg_state.url.split("///", 1)[1].split("?", 1)[0]
    pg_state.cluster.psql(
        f"UPDATE sessions SET roots = '{{not json' WHERE session_id = '{bad.session_id}'", db=db
    )
    r = _run(base, "state", "check", "--json", *pg_state.args)
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    assert report["schema_version"] == persist.SCHEMA_VERSION
    tables = sorted(b["table"] for b in report["bad_rows"])
    assert tables == ["agents", "files", "sessions", "tasks"]
    assert any("roots is not valid JSON" in b["reason"] for b in report["bad_rows"])
    d = start_daemon(pg_state.args, runtime_dir=base)
    try:
        # Listed from the database, unread; quarantined when first named.
        assert [i.session_id for i in d.client.list_sessions()] == sorted(
            [good.session_id, bad.session_id]
        )
        assert "quarantine" not in d.stderr()
        assert d.client.session(good.session_id).read_file("src/a.py").unchanged
        with pytest.raises(PostcompactError) as exc:
            d.client.session(bad.session_id).read_file("src/a.py")
        assert exc.value.reason == "SESSION_QUARANTINED"
        assert "quarantine" in d.stderr()
        assert [i.session_id for i in d.client.list_sessions()] == [good.session_id]
    finally:
        d.stop()
    ((moved,),) = pg_state.sql(d, "SELECT count(*) FROM quarantine")
    assert moved == 4
    r = _run(base, "state", "check", *pg_state.args)
    assert r.returncode == 0, r.stdout
    assert "quarantined     4 rows" in r.stdout
    r = _run(base, "state", "reset", "--yes", *pg_state.args)
    assert r.returncode == 2
    assert "PostgreSQL" in r.stderr


@pytest.mark.postgresql
def test_a_lost_connection_is_made_again(pg_state: State, base: Path) -> None:
    """The server ends the daemon's connection (as a restart of it would): the next call
    connects again and is served; nothing is lost."""
    d = start_daemon(pg_state.args, runtime_dir=base)
    try:
        s = d.client.open_session(str(write_project(base / "p")), session_id=new_session_id("c"))
        s.read_file("src/a.py")
        assert pg_state.cluster is not None
        ended = pg_state.cluster.psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = 'postcompact'"
        )
        assert ended == str(Config().state_pool_size)  # every connection of its pool
        assert not s.read_file("src/b.py").unchanged
        assert s.read_file("src/a.py").unchanged
        assert "reconnected to the state database" in d.stderr()
    finally:
        d.stop()
    ((files,),) = pg_state.sql(d, f"SELECT count(*) FROM files WHERE session_id = '{s.session_id}'")
    assert files == 2


def _in_process(url: str, project: Path) -> tuple[Registry, FileService, SessionService]:
    store = PostgresStore(url, max_bytes=1 << 30)
    reg = Registry(Config(), store=store)
    return reg, FileService(reg, Config()), SessionService(reg, reg.config)


@pytest.mark.postgresql
def test_a_failed_write_re_reads_what_it_wrote_or_all_if_changed_elsewhere(
    pg_state: State, tmp_path: Path
) -> None:
    """In process, the server refusing writes to `skills`: a failed write of one agent re-reads
    that agent only, as with SQLite; once another daemon (a second store) has written the
    session, a failed write re-reads all of it, the other daemon's change included."""
    project = write_project(tmp_path / "proj")
    reg, _, sessions = _in_process(pg_state.url, project)
    work = WorkService(reg, Config())  # RecordSkill's service
    other, other_files, _ = _in_process(pg_state.url, project)
    try:
        s, _ = done(sessions.open(dpb.OpenSessionRequest(session_id="s", cwd=str(project))))
        done(sessions.start_agent(dpb.StartAgentRequest(session_id="s", agent_id="sub")))
        main, sub = s.agents[""], s.agents["sub"]
        main_cache = main.files
        assert pg_state.cluster is not None
        db = pg_state.url.split("///", 1)[1].split("?", 1)[0]
        pg_state.cluster.psql(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "RAISE EXCEPTION 'refused' USING ERRCODE = 'io_error'; END $$; "
            "CREATE TRIGGER refuse BEFORE INSERT ON skills FOR EACH STATEMENT "
            "EXECUTE FUNCTION refuse()",
            db=db,
        )
        skill = dpb.RecordSkillRequest(session_id="s", agent_id="sub", name="x", content=b"x")
        with pytest.raises(Unavailable):
            done(work.record_skill(skill))
        assert reg.resyncs == 1
        assert "x" not in sub.skills
        assert s.agents["sub"] is sub
        assert main.files is main_cache  # not named, not re-read
        # Another daemon reads a file into the main agent: this one's next failure re-reads all.
        done(
            other_files.record_read(
                dpb.RecordReadRequest(session_id="s", path="src/a.py", content=b"alpha = 1\n")
            )
        )
        with pytest.raises(Aborted) as exc:
            done(work.record_skill(skill))
        assert exc.value.reason == "SESSION_CHANGED_ELSEWHERE"
        assert main.files is not main_cache
        assert list(main.files.keys()) == [str(project / "src/a.py")]
        assert s.agents[""] is main  # in place: calls awaiting a read hold it
    finally:
        reg.store.close()
        other.store.close()


@pytest.mark.postgresql
def test_expiry_on_one_daemon_spares_a_session_another_daemon_used(
    pg_state: State, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Expiry works from the database: daemon A's sweep finds the sessions idle past its TTL
    there (sessions it never read included) and deletes one only if it is still idle. Session
    `used` was opened on A, then used on daemon B after A's cut-off: A's sweep leaves it; session
    `idle`, opened on B and never used since, is expired by A although A never held it."""
    project = write_project(tmp_path / "proj")
    ttl_s = 1000
    a = Registry(Config(session_ttl_s=ttl_s), store=PostgresStore(pg_state.url, max_bytes=1 << 30))
    b = Registry(Config(session_ttl_s=ttl_s), store=PostgresStore(pg_state.url, max_bytes=1 << 30))
    try:
        a_sessions, b_sessions = SessionService(a, a.config), SessionService(b, b.config)
        b_files = FileService(b, b.config)
        done(a_sessions.open(dpb.OpenSessionRequest(session_id="used", cwd=str(project))))
        done(b_sessions.open(dpb.OpenSessionRequest(session_id="idle", cwd=str(project))))
        ((opened,),) = _rows(pg_state.url, "SELECT max(last_active_ms) FROM sessions")
        # Daemon A's clock is ttl_s + 1 s past both openings: both are idle by what it holds...
        a_now = int(opened) + (ttl_s + 1) * 1000
        # ...but `used`, which B holds, is used on B (a write, which stores its activity) after
        # A's cut-off.
        done(b.session("used"))
        monkeypatch.setattr("postcompact.state.registry.now_ms", lambda: a_now - 500)
        done(
            b_files.record_read(
                dpb.RecordReadRequest(session_id="used", path="src/a.py", content=b"alpha = 1\n")
            )
        )
        gone = done(a.expire_idle(now=a_now))
        assert gone == ["idle"]
        rows = _rows(pg_state.url, "SELECT session_id FROM sessions ORDER BY session_id")
        assert [r[0] for r in rows] == ["used"]
        assert "used" not in a.expired
        assert done(b.session("used")).agents[""].files.peek(str(project / "src/a.py")) is not None
    finally:
        a.store.close()
        b.store.close()


def _rows(url: str, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as pg:
        return [tuple(r) for r in pg.execute(query)]
