"""An older and a newer daemon on one PostgreSQL database during a migration (docs/fleet.md,
"Rolling upgrades").

"The last migration" is the schema step between the two versions, N-1 and N; the older daemon
is simulated honestly with this same build, by `schema_launcher.py` (real daemons, `postcompact
serve` on real Unix sockets, called through the Python client):

- when this build can run without its last step of `persist.schema.MIGRATIONS` (the step adds
  nothing its statements name: an index, a column it does not use), the older daemon is this
  build with that step withheld (MIGRATIONS, SCHEMA_VERSION and every copy a module imported by
  value patched before the daemon starts): it creates and speaks schema N-1 and refuses N, the
  previous release's view of the database; the newer daemons are this build;
- when it cannot (today: v7 adds `sessions.version`, which every write of the PostgreSQL store
  checks; there was no PostgreSQL store before v7), the older daemon is this build as it is and
  the newer ones are this build with a stand-in step N+1 (`schema_launcher.STAND_IN`: an index
  and a column with a default on `files`).

Either way the older daemon's code is this build's: what is tested is the database shared
across a schema step, not the previous release's code. The scenario:

1. The older daemon starts on an empty database (schema N-1), serves sessions and acknowledged
   writes (OpenSession, ReadFile, RecordWrite, RecordSkill, SetPlan, UpsertTask), and is
   restarted once: it loads its sessions, so its statements reading them are prepared on the
   server, as in a daemon that has run a while.
2. While a writer keeps calling it, two newer daemons start together: the step runs once, in
   one transaction, holding the migration's advisory lock (an event trigger records its DDL),
   schema_history has one row for N, both serve. A writer on a newer daemon then writes to the
   older daemon's sessions too. Every call is acknowledged or refused by name with a status to
   redo it on (UNAVAILABLE STATE_BUSY, ABORTED SESSION_CHANGED_ELSEWHERE): never INTERNAL,
   UNKNOWN, or any other answer.
3. The older daemon, still running at N, opens a session a newer one made and wrote after the
   migration: it serves it (its rows have a column it does not know, or an index it does not),
   and their writes after each other are refused and redone by name. A row it cannot read (a
   profile number past this build's, as a newer release might write) is quarantined: NOT_FOUND
   SESSION_QUARANTINED, the rows kept in the quarantine table, the daemon serving on.
4. The older daemon restarted refuses to start, exit status 1, naming the schema version.
5. Nothing acknowledged is lost: every session, resumed by id through a newer daemon started
   afterwards, has every acknowledged file, skill and task, and the plan last set.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
from postcompact.persist.postgres import _MIGRATION_LOCK, pg_script
from postcompact.persist.schema import MIGRATIONS, SCHEMA_VERSION
from postcompact.v1 import postcompact_pb2 as daemon_pb
from postcompact_client import Client, PostcompactError, RetryPolicy, Session
from postcompact_client.types import Subject, TaskStatus

from tests.daemon.conftest import (
    RunningDaemon,
    State,
    daemon_env,
    new_session_id,
    serve_command,
    serve_once,
    start_daemon,
    write_project,
)
from tests.daemon.persist import schema_launcher

LAUNCHER = Path(schema_launcher.__file__)
# What a call may answer besides success, each a refusal that changed nothing and names the
# call to redo: the database busy past lock_timeout (the migration's locks), another daemon's
# write to the session first.
REDO = {
    (grpc.StatusCode.UNAVAILABLE, "STATE_BUSY"),
    (grpc.StatusCode.ABORTED, "SESSION_CHANGED_ELSEWHERE"),
}
# The calls of the writers, in turn on each session.
OLDER_CALLS = ("read", "write", "skill", "task", "plan")
NEWER_CALLS = ("read", "skill", "task")


@dataclass(frozen=True)
class Upgrade:
    """The two versions: each one's command prefix (empty: this build as it is), schema version,
    and the step between them."""

    older: tuple[str, ...]
    newer: tuple[str, ...]
    before: int
    after: int
    step: str


def _upgrade() -> Upgrade:
    version, step = MIGRATIONS[-1]
    if schema_launcher.withholdable(step):
        prev = MIGRATIONS[-2][0]
        return Upgrade(_launch("withhold"), (), prev, version, step)
    return Upgrade(
        (), _launch("stand-in"), SCHEMA_VERSION, SCHEMA_VERSION + 1, schema_launcher.STAND_IN
    )


def _launch(mode: str) -> tuple[str, ...]:
    return (sys.executable, str(LAUNCHER), mode, "--")


# --- what was acknowledged, what was answered ------------------------------------------------


@dataclass
class Written:
    """What a session was acknowledged: file paths (as the daemon keys them), skill names, task
    ids, and the plan last set."""

    files: set[str] = field(default_factory=set)
    skills: set[str] = field(default_factory=set)
    tasks: set[str] = field(default_factory=set)
    plan: str = ""


class Ledger:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sessions: dict[str, Written] = {}
        self.acked: list[tuple[float, str]] = []  # (when, by whom)
        self.answers: Counter[tuple[str, str]] = Counter()  # refusals to redo: (code, reason)
        self.unexpected: list[str] = []  # any other failure

    def ack(self, by: str, sid: str, kind: str = "", value: str = "") -> None:
        with self.lock:
            w = self.sessions.setdefault(sid, Written())
            if kind == "file":
                w.files.add(value)
            elif kind == "skill":
                w.skills.add(value)
            elif kind == "task":
                w.tasks.add(value)
            elif kind == "plan":
                w.plan = value
            self.acked.append((time.monotonic(), by))

    def refused(self, by: str, what: str, exc: BaseException) -> bool:
        """Whether `exc` names a refusal to redo (counted); anything else is kept as
        unexpected."""
        with self.lock:
            if isinstance(exc, PostcompactError) and (exc.code, exc.reason) in REDO:
                self.answers[(exc.code.name, exc.reason)] += 1
                return True
            self.unexpected.append(f"{by} {what}: {exc!r}")
            return False

    def acked_after(self, by: str, moment: float) -> int:
        with self.lock:
            return sum(1 for t, who in self.acked if who == by and t > moment)


def _call(s: Session, repo: Path, i: int, tag: str, kind: str) -> tuple[str, str]:
    """One call on `s` of `kind`; (what it wrote, its key)."""
    if kind == "read":
        return "file", s.read_file(f"src/f{i % 10}.py").path
    if kind == "write":
        rel = f"src/w{i % 10}.py"
        text = f"w = {i}  # {tag}\n"
        (repo / rel).write_text(text)  # the agent's Write, then its record
        return "file", s.record_write(rel, text)
    if kind == "skill":
        name = f"{tag}-skill-{i}"
        s.record_skill(name, path=f"/skills/{name}/SKILL.md", content=f"Body of {name}.")
        return "skill", name
    if kind == "task":
        task_id = f"{tag}-task-{i}"
        s.upsert_task(
            {
                "task_id": task_id,
                "task_type": "local_agent",
                "description": f"task {task_id}",
                "status": TaskStatus.RUNNING,
            }
        )
        return "task", task_id
    return "plan", s.set_plan(str(repo / "plans" / f"plan-{i % 3}.md"))


def _open(client: Client, repo: Path, sid: str) -> Session:
    return client.open_session(str(repo), session_id=sid, plans_directory=str(repo / "plans"))


def _writer(
    address: str,
    by: str,
    sids: list[str],
    calls: tuple[str, ...],
    repo: Path,
    ledger: Ledger,
    stop: threading.Event,
    open_every: int = 0,
) -> None:
    """Call `address` until `stop`: each session of `sids` in turn, each of `calls` in turn, a
    new session opened every `open_every` calls; a call refused by name to redo is redone."""
    try:
        with Client(address, auto_start=False, timeout=30.0, retry=RetryPolicy.none()) as client:
            i = 0
            while not stop.is_set():
                sid = sids[i % len(sids)]
                kind = calls[(i // len(sids)) % len(calls)]
                try:
                    if open_every and i % open_every == open_every - 1:
                        sid, kind = new_session_id(by), "open"
                        _open(client, repo, sid)
                        ledger.ack(by, sid)
                        sids.append(sid)
                    else:
                        ledger.ack(by, sid, *_call(client.session(sid), repo, i, by, kind))
                except PostcompactError as exc:
                    if ledger.refused(by, f"{kind} on {sid}", exc):
                        continue  # nothing was applied: the same call again
                i += 1
    except BaseException as exc:  # the thread's end, said
        ledger.refused(by, "the writer", exc)


def _threads(*targets: Callable[[], None]) -> list[threading.Thread]:
    threads = [threading.Thread(target=t, daemon=True) for t in targets]
    for t in threads:
        t.start()
    return threads


def _redone(ledger: Ledger, by: str, fn: Callable[[], tuple[str, str]], sid: str) -> None:
    """`fn` until acknowledged, each refusal one to redo (asserted)."""
    for _ in range(10):
        try:
            ledger.ack(by, sid, *fn())
            return
        except PostcompactError as exc:
            if not ledger.refused(by, f"a call on {sid}", exc):
                raise AssertionError(f"not a refusal to redo: {ledger.unexpected}") from exc
    raise AssertionError(f"a call on {sid} refused 10 times: {ledger.answers}")


# --- what a daemon holds of a session --------------------------------------------------------


def _held(client: Client, sid: str) -> Written:
    """The session as `client`'s daemon has it, resumed by id: the files and skills Compact
    would decide on, the tasks and the plan it would restore (a preview: nothing changes)."""
    preview = client.attach_session(sid).preview_compact()
    held = Written()
    for d in preview.decisions:
        if d.subject == Subject.FILE:
            held.files.add(d.name)
        elif d.subject == Subject.SKILL:
            held.skills.add(d.name)
    for a in preview.attachments:
        if a.task_status is not None:
            held.tasks.add(a.task_status.task_id)
        if a.plan_file_reference is not None:
            held.plan = a.plan_file_reference.plan_file_path
    return held


def _lost(acked: Written, held: Written) -> list[str]:
    lost = [*(acked.files - held.files), *(acked.skills - held.skills)]
    lost += sorted(acked.tasks - held.tasks)
    if acked.plan and acked.plan != held.plan:
        lost.append(f"plan {acked.plan} (held: {held.plan or 'none'})")
    return lost


# --- the database ----------------------------------------------------------------------------


def _sql(url: str, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return [tuple(r) for r in conn.execute(query)]


def _record_ddl(url: str) -> None:
    """An event trigger recording each DDL command run in the database from now on: its
    backend, transaction, tag, and whether that backend holds the migration's advisory lock
    (`pg_advisory_xact_lock(_MIGRATION_LOCK)`: key's high and low 32 bits, objsubid 1)."""
    high, low = _MIGRATION_LOCK >> 32, _MIGRATION_LOCK & 0xFFFFFFFF
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE pc_test_ddl (pid INT NOT NULL, xid BIGINT NOT NULL, tag TEXT NOT NULL, "
            "locked BOOLEAN NOT NULL)"
        )
        conn.execute(
            "CREATE FUNCTION pc_test_ddl_seen() RETURNS event_trigger LANGUAGE plpgsql AS $$ "
            "BEGIN INSERT INTO pc_test_ddl VALUES (pg_backend_pid(), "
            "pg_current_xact_id()::text::bigint, tg_tag, EXISTS (SELECT 1 FROM pg_locks WHERE "
            "locktype = 'advisory' AND pid = pg_backend_pid() AND granted AND "
            f"classid = {high} AND objid = {low} AND objsubid = 1)); END $$"
        )
        conn.execute(
            "CREATE EVENT TRIGGER pc_test_ddl ON ddl_command_end "
            "EXECUTE FUNCTION pc_test_ddl_seen()"
        )


# --- the scenario ----------------------------------------------------------------------------


@pytest.fixture
def repo(base: Path) -> Path:
    root = write_project(base / "repo")
    for k in range(10):
        (root / f"src/f{k}.py").write_text(f"f{k} = {k}\n")
        (root / f"src/w{k}.py").write_text("")
    (root / "plans").mkdir()
    for k in range(3):
        (root / f"plans/plan-{k}.md").write_text(f"# Plan {k}\n\n1. step {k}\n")
    return root


@pytest.fixture
def stop() -> Iterator[threading.Event]:
    """What stops the writers: set by the test, or after it when it failed first."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def daemons(stop: threading.Event) -> Iterator[list[RunningDaemon]]:
    """The daemons a test starts (appended), stopped after it (its writers first)."""
    started: list[RunningDaemon] = []
    yield started
    stop.set()
    for d in started:
        if d.proc.poll() is None:
            d.stop(signal.SIGKILL)


@pytest.mark.postgresql
@pytest.mark.timeout(300)
def test_an_older_and_a_newer_daemon_during_a_migration(
    pg_state: State,
    base: Path,
    repo: Path,
    daemons: list[RunningDaemon],
    stop: threading.Event,
) -> None:
    up = _upgrade()
    args = pg_state.args
    ledger = Ledger()

    def start(name: str, prefix: tuple[str, ...]) -> RunningDaemon:
        run = base / name
        run.mkdir(mode=0o700, exist_ok=True)
        d = start_daemon(args, runtime_dir=run, prefix=prefix)
        daemons.append(d)
        return d

    def version() -> int:
        ((v,),) = _sql(pg_state.url, "SELECT max(version) FROM schema_history")
        return int(v)

    # 1. The older daemon alone: schema N-1, sessions, acknowledged writes, a restart.
    older = start("older", up.older)
    assert version() == up.before
    sids = [new_session_id("older") for _ in range(8)]
    for sid in sids:
        s = _open(older.client, repo, sid)
        ledger.ack("older", sid)
        for i, kind in enumerate(OLDER_CALLS):
            ledger.ack("older", sid, *_call(s, repo, i, "older", kind))
    older.stop()
    older = start("older", up.older)  # loads the 8 sessions
    assert {i.session_id for i in older.client.list_sessions()} >= set(sids)
    _record_ddl(pg_state.url)

    # 2. A writer on the older daemon; meanwhile two newer daemons start together and migrate.
    older_sids, idle = sids[:6], sids[6:]  # the writer's sessions, the others
    writers = _threads(
        lambda: _writer(
            older.address, "older", older_sids, OLDER_CALLS, repo, ledger, stop, open_every=25
        )
    )
    while ledger.acked_after("older", 0) < 8 * 6 + 10 and not ledger.unexpected:
        time.sleep(0.02)
    before_start = time.monotonic()
    starting: dict[str, RunningDaemon] = {}
    failed: list[BaseException] = []

    def start_newer(name: str) -> None:
        try:
            starting[name] = start(name, up.newer)
        except BaseException as exc:
            failed.append(exc)

    for t in _threads(lambda: start_newer("newer-a"), lambda: start_newer("newer-b")):
        t.join()
    assert not failed, failed
    newer_a, newer_b = starting["newer-a"], starting["newer-b"]
    migrated = time.monotonic()
    assert version() == up.after
    # The older daemon resumes a session a newer one changed since: read with the statements
    # it prepared on the server before the migration (no refusal of its own in between, whose
    # ROLLBACK may have made psycopg forget them).
    _redone(
        ledger,
        "newer",
        lambda: _call(newer_a.client.session(idle[0]), repo, 80, "newer", "skill"),
        idle[0],
    )
    assert older.client.attach_session(idle[0]).resumed
    assert not _lost(ledger.sessions[idle[0]], _held(older.client, idle[0]))
    # A writer on a newer daemon, on the older daemon's sessions and sessions of its own.
    newer_sids = sids[:4]
    writers += _threads(
        lambda: _writer(
            newer_a.address, "newer", newer_sids, NEWER_CALLS, repo, ledger, stop, open_every=10
        )
    )
    while ledger.acked_after("newer", 0) < 40 and not ledger.unexpected:
        time.sleep(0.02)
    time.sleep(1.0)
    stop.set()
    for t in writers:
        t.join()
    # Every call was acknowledged or refused by name to redo: none INTERNAL, UNKNOWN or else.
    assert not ledger.unexpected, ledger.unexpected
    # The older daemon's calls went on during and after the migration.
    assert ledger.acked_after("older", migrated) > 0
    assert ledger.acked_after("older", before_start) > ledger.acked_after("older", migrated)
    # The step ran once: its statements, in one transaction of one backend holding the lock,
    # which wrote schema_history's one row for N.
    ddl = _sql(pg_state.url, "SELECT pid, xid, tag, locked FROM pc_test_ddl")
    steps = schema_launcher.statements(pg_script(up.step))
    assert len(ddl) == len(steps), (ddl, steps)
    assert len({(pid, xid) for pid, xid, _, _ in ddl}) == 1, ddl
    assert all(locked for *_, locked in ddl), ddl
    history = _sql(
        pg_state.url,
        f"SELECT xmin::text::bigint FROM schema_history WHERE version = {up.after}",
    )
    assert history == [(ddl[0][1],)], (history, ddl)

    # 3. The older daemon, still running at N, meets rows written since by a newer one.
    made_after = new_session_id("newer")
    s = _open(newer_b.client, repo, made_after)
    ledger.ack("newer", made_after)
    for i, kind in enumerate(OLDER_CALLS):
        ledger.ack("newer", made_after, *_call(s, repo, i, "newer-b", kind))
    opened = older.client.attach_session(made_after)
    assert opened.resumed
    assert not _lost(ledger.sessions[made_after], _held(older.client, made_after))
    # Their writes after each other: the second refused by name, redone, acknowledged.
    _redone(ledger, "older", lambda: _call(opened, repo, 90, "older", "skill"), made_after)
    after_b = newer_b.client.session(made_after)
    with pytest.raises(PostcompactError) as exc:
        after_b.record_skill("refused", content="x")
    assert (exc.value.code, exc.value.reason) in REDO
    _redone(ledger, "newer", lambda: _call(after_b, repo, 91, "newer-b", "skill"), made_after)
    # A row this build cannot read (a profile past its last, as a newer release might write):
    # quarantined when the older daemon reads it; NOT_FOUND SESSION_QUARANTINED; it serves on.
    unreadable = new_session_id("unreadable")
    _open(newer_b.client, repo, unreadable).record_skill("kept", content="set aside, not lost")
    profile = max(daemon_pb.Profile.values()) + 1
    changed = _sql(
        pg_state.url,
        f"UPDATE sessions SET profile = {profile} WHERE session_id = '{unreadable}' RETURNING 1",
    )
    assert changed == [(1,)]
    with pytest.raises(PostcompactError) as exc:
        older.client.attach_session(unreadable)
    assert exc.value.code == grpc.StatusCode.NOT_FOUND
    assert exc.value.reason == "SESSION_QUARANTINED"
    assert f"profile {profile} is not a known profile" in exc.value.message
    set_aside = _sql(
        pg_state.url,
        "SELECT table_name FROM quarantine WHERE row_key::jsonb ->> 'session_id' = "
        f"'{unreadable}' ORDER BY id",
    )
    assert ("sessions",) in set_aside
    assert ("skills",) in set_aside
    # The newer daemon holding it finds it gone from the database: refused by name.
    with pytest.raises(PostcompactError) as exc:
        newer_b.client.session(unreadable).record_skill("after", content="x")
    assert exc.value.code == grpc.StatusCode.ABORTED
    assert exc.value.reason == "SESSION_CLOSED_ELSEWHERE"
    _redone(
        ledger,
        "older",
        lambda: _call(older.client.session(sids[0]), repo, 92, "older", "skill"),
        sids[0],
    )

    # 4. The older daemon restarted refuses the database, naming its schema version.
    assert older.stop() == 0
    refused = subprocess.run(
        [*older.prefix, *serve_command(older.socket_path, older.args)],
        env=older.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 1, refused.stderr
    assert f"has schema version {up.after}, newer than this postcompact" in refused.stderr, (
        refused.stderr
    )
    assert f"understands (up to {up.before})" in refused.stderr
    assert version() == up.after  # left as it was

    # 5. Nothing acknowledged is lost: every session, through a newer daemon started now.
    assert not ledger.unexpected, ledger.unexpected
    newer_c = start("newer-c", up.newer)
    lost = {
        sid: missing
        for sid, acked in sorted(ledger.sessions.items())
        if (missing := _lost(acked, _held(newer_c.client, sid)))
    }
    assert not lost, f"acknowledged but not held by a newer daemon: {lost}"
    assert len(ledger.sessions) > len(sids) + 2  # sessions opened during the upgrade too
    print(  # the run, for the report (pytest -s)
        f"rolling upgrade v{up.before} -> v{up.after}: {len(ledger.acked)} calls acknowledged, "
        f"refusals redone: {dict(ledger.answers)}"
    )


@pytest.mark.postgresql
def test_a_daemon_starting_during_a_migration_waits_for_it(pg_state: State, base: Path) -> None:
    """A migration holds its advisory lock for as long as its steps take (an index on a big
    table). A daemon starting meanwhile waits for it past lock_timeout, within
    statement_timeout; past that it exits naming the database busy (start it again), never
    advising to move the tables aside. Both timeouts shrunk through the URL."""
    url = f"{pg_state.url}&options=-c%20lock_timeout%3D200ms%20-c%20statement_timeout%3D2s"
    run = base / "waits"
    run.mkdir(mode=0o700)
    with psycopg.connect(pg_state.url, autocommit=True) as migrating:
        migrating.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
        with open(run / "daemon.stderr", "wb") as err:
            proc = subprocess.Popen(
                serve_command(run / "d.sock", ("--state-url", url)),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=daemon_env(run),
            )
        try:
            time.sleep(1.5)  # over seven times lock_timeout: waiting still
            assert proc.poll() is None, (run / "daemon.stderr").read_text()
            migrating.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))
            with Client(f"unix://{run / 'd.sock'}", auto_start=False) as client:
                client.wait_for_health(30)
                assert client.open_session(str(write_project(base / "repo"))).session_id
            # Past statement_timeout: exit 1, the database named busy.
            migrating.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
            other = base / "other"
            other.mkdir(mode=0o700)
            done = serve_once(other, "--state-url", url)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    assert done.returncode == 1, done.stderr
    assert "is busy (canceling statement due to statement timeout)" in done.stderr
    assert "start the daemon again" in done.stderr
    assert "move its tables aside" not in done.stderr


# --- the launcher itself (no server) ---------------------------------------------------------


def test_which_steps_a_daemon_can_run_without() -> None:
    assert schema_launcher.withholdable(schema_launcher.STAND_IN)
    assert schema_launcher.withholdable("CREATE INDEX IF NOT EXISTS i ON sessions (last_active_ms)")
    assert schema_launcher.withholdable("ALTER TABLE files ADD COLUMN unused INTEGER")
    assert not schema_launcher.withholdable("ALTER TABLE sessions ADD COLUMN version INTEGER")
    assert not schema_launcher.withholdable("CREATE TABLE quarantine (id INTEGER PRIMARY KEY)")
    with pytest.raises(ValueError, match="not additive"):
        schema_launcher.withholdable("ALTER TABLE files DROP COLUMN seen_first")


@pytest.mark.parametrize("mode", schema_launcher.MODES)
def test_the_launcher_changes_every_copy_of_the_schema_version(mode: str, base: Path) -> None:
    """`state check` reports the version the daemon supports from `persist.admin`'s copy of
    SCHEMA_VERSION, imported by value: the launcher changed it too."""
    done = subprocess.run(
        [
            *_launch(mode),
            "state",
            "check",
            "--json",
            "--state-path",
            str(base / "none.db"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if mode == "withhold" and not schema_launcher.withholdable(MIGRATIONS[-1][1]):
        assert done.returncode != 0
        assert "cannot run without its last step" in done.stderr
        return
    assert done.returncode == 0, done.stderr
    expected = MIGRATIONS[-2][0] if mode == "withhold" else SCHEMA_VERSION + 1
    assert json.loads(done.stdout)["supported_version"] == expected
    assert f"schema version {expected} (this build's: {SCHEMA_VERSION})" in done.stderr
