"""Two daemons on one PostgreSQL database stand in for two sandboxes of a fleet (docs/fleet.md).

Each daemon has its own runtime directory and sees its own copy of the repository at the same
absolute path, `REPO`, as containers do: it runs in a mount namespace of its own (`unshare
--mount`, as root) where its copy is bind-mounted there. The copies differ by one byte. A session
worked on through daemon A and resumed through daemon B restores the files re-read from B's copy,
the skills, the plan and the tasks; writers of one session on both daemons are serialised or
refused (ABORTED `SESSION_CHANGED_ELSEWHERE`), never lost; and daemons killed with SIGKILL under
load lose nothing they acknowledged.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from postcompact_client import Client, PostcompactError
from postcompact_client.types import TaskStatus

from tests.daemon.conftest import (
    PROJECT_FILES,
    RunningDaemon,
    State,
    new_session_id,
    start_daemon,
    text_of,
    write_project,
)

pytestmark = pytest.mark.postgresql

# Where both daemons see their own copy of the repository: a mount point of this process's own
# (the fixture makes and removes it; a run beside this one, e.g. in another checkout, has its own).
REPO = f"/srv/pc-repo-{os.getpid()}"
# The load tests record many skills per agent (a restart reads the config file again).
LIMITS = "[limits]\nmax_skills_per_agent = 1000000\n"
# The one byte the copies differ in: src/a.py's first line.
A_LINE, B_LINE = "alpha = 1", "alpha = 2"


def _in_namespace(copy: Path) -> list[str]:
    """A command prefix: a mount namespace of its own in which `copy` is seen at REPO."""
    if os.geteuid() != 0:
        pytest.fail("the fleet tests make mount namespaces: they run as root (CI does)")
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        'mount --bind "$1" "$2" && shift 2 && exec "$@"',
        "sh",
        str(copy),
        REPO,
    ]


def _copies(base: Path) -> tuple[Path, Path]:
    a = write_project(base / "copy-a")
    plans = a / "plans"
    plans.mkdir()
    (plans / "plan.md").write_text("# Plan\n\n1. refactor alpha\n")
    b = base / "copy-b"
    shutil.copytree(a, b)
    text = PROJECT_FILES["src/a.py"]
    assert text.startswith(A_LINE)
    (b / "src/a.py").write_text(B_LINE + text[len(A_LINE) :])  # one byte apart
    return a, b


@pytest.fixture
def fleet(pg_state: State, base: Path) -> Iterator[tuple[RunningDaemon, RunningDaemon]]:
    made = not os.path.exists(REPO)  # the mount point, removed again if this fixture made it
    os.makedirs(REPO, exist_ok=True)
    copy_a, copy_b = _copies(base)
    daemons: list[RunningDaemon] = []
    try:
        for name, copy in (("a", copy_a), ("b", copy_b)):
            run = base / f"daemon-{name}"
            run.mkdir(mode=0o700)
            daemons.append(
                start_daemon(
                    pg_state.args, runtime_dir=run, prefix=_in_namespace(copy), config_toml=LIMITS
                )
            )
        yield daemons[0], daemons[1]
    finally:
        for d in daemons:
            d.stop(signal.SIGKILL)
        if made:
            with contextlib.suppress(OSError):  # not empty: something else uses it, keep it
                os.rmdir(REPO)


def _text(resp: object) -> str:
    return "\n".join(text_of(a) for a in resp.attachments)  # type: ignore[attr-defined]


def test_a_session_resumed_on_another_daemon(
    pg_state: State, fleet: tuple[RunningDaemon, ...]
) -> None:
    a, b = fleet
    sid = new_session_id("fleet")
    sa = a.client.open_session(REPO, session_id=sid, plans_directory=f"{REPO}/plans")
    assert sa.read_file("src/a.py").content.startswith(A_LINE.encode())  # A reads A's copy
    sa.read_file("README.md")
    sa.record_skill("lint", path="/skills/lint/SKILL.md", content="Run the linter first.")
    sa.set_plan(f"{REPO}/plans/plan.md")
    sa.upsert_task(
        {
            "task_id": "t1",
            "task_type": "local_agent",
            "description": "rename alpha everywhere",
            "status": TaskStatus.RUNNING,
        }
    )

    # B never saw the session: it comes from the database, files re-read from B's disk.
    sb = b.client.open_session(REPO, session_id=sid)
    assert sb.resumed
    info = {i.session_id: i for i in b.client.list_sessions()}[sid]
    assert info.cached_entries == 2
    # What A recorded of a.py is not what B's disk has: not "unchanged" on B, B's content.
    (restored_first,) = [x for x in sb.preview_compact().attachments if "a.py" in text_of(x)]
    assert B_LINE in text_of(restored_first)
    read = sb.read_file("src/a.py")
    assert not read.unchanged
    assert read.content.startswith(B_LINE.encode())
    restored = _text(sb.compact())
    assert B_LINE in restored  # the differing byte, from B's copy
    assert A_LINE not in restored
    assert "Run the linter first." in restored
    assert "plan.md" in restored
    assert "refactor alpha" in restored
    assert "rename alpha everywhere" in restored

    # Both hold the session now. B wrote last (the Compact, the read): A's write is refused...
    with pytest.raises(PostcompactError) as exc:
        sa.record_skill("review", content="Review the diff.")
    assert exc.value.code == grpc.StatusCode.ABORTED
    assert exc.value.reason == "SESSION_CHANGED_ELSEWHERE"
    # ...and A re-read the session: redone, the call lands on B's state, which A now has.
    assert sa.record_skill("review", content="Review the diff.") == 2
    a_info = {i.session_id: i for i in a.client.list_sessions()}[sid]
    assert a_info.compactions == 1  # B's Compact
    # B attaching again re-reads what A changed since.
    sb = b.client.attach_session(sid)
    assert "Review the diff." in _text(sb.preview_compact())
    ((stored,),) = pg_state.sql(a, f"SELECT count(*) FROM skills WHERE session_id = '{sid}'")
    assert stored == 2


def _writer(
    address: str, sid: str, names: list[str], acked: set[str], refused: list[int], stop: float
) -> None:
    """Record each skill of `names`, redoing a call refused by the other daemon's writes, until
    it is acknowledged (or `stop`)."""
    with Client(address, auto_start=False, timeout=30.0) as client:
        s = client.session(sid)
        for name in names:
            while time.monotonic() < stop:
                try:
                    s.record_skill(name, content=f"body of {name}")
                except PostcompactError as exc:
                    if exc.reason != "SESSION_CHANGED_ELSEWHERE":
                        raise
                    refused[0] += 1
                    continue
                acked.add(name)
                break


def test_concurrent_writers_on_two_daemons_lose_nothing(
    pg_state: State, fleet: tuple[RunningDaemon, ...]
) -> None:
    a, b = fleet
    sid = new_session_id("race")
    a.client.open_session(REPO, session_id=sid)
    b.client.attach_session(sid)
    acked: set[str] = set()
    refused = [0]
    stop = time.monotonic() + 120
    threads = [
        threading.Thread(
            target=_writer,
            args=(d.address, sid, [f"{tag}-{i}" for i in range(40)], acked, refused, stop),
        )
        for d, tag in ((a, "a1"), (a, "a2"), (b, "b1"), (b, "b2"))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(acked) == 160
    stored = {r[0] for r in pg_state.sql(a, f"SELECT name FROM skills WHERE session_id = '{sid}'")}
    assert acked <= stored, f"acknowledged but not stored: {sorted(acked - stored)[:10]}"
    assert refused[0] > 0  # the daemons did interleave on the session
    # Each daemon, re-reading on attach, has all of them.
    for d in (a, b):
        text = _text(
            d.client.attach_session(sid).preview_compact(policy={"skills_token_budget": 10**6})
        )
        assert all(f"body of {n}" in text for n in acked)


# What a call may meet besides success: the other daemon's write first, or its own daemon killed
# under it (a transport failure the client names: the call was in flight, or the client gave up
# while the daemon restarted). Never an empty reason.
_EXPECTED = {
    "SESSION_CHANGED_ELSEWHERE",
    "CONNECTION_LOST",
    "TRANSPORT_ERROR",
    "DAEMON_UNAVAILABLE",
}


def _load(
    d: list[RunningDaemon],
    sids: list[str],
    acked: set[str],
    errors: Counter[str],
    lock: threading.Lock,
    stop: float,
) -> None:
    """Write unique skills to the sessions through whichever daemon `d[0]` is now, until
    `stop`; an acknowledged name goes into `acked`, every error's reason into `errors`."""
    n = 0
    while time.monotonic() < stop:
        with Client(d[0].address, auto_start=False, timeout=5.0) as client:
            while time.monotonic() < stop:
                sid = sids[n % len(sids)]
                name = f"k-{threading.get_ident()}-{n}"
                n += 1
                try:
                    client.session(sid).record_skill(name, content=name)
                except PostcompactError as exc:  # not acknowledged
                    with lock:
                        errors[exc.reason] += 1
                    if exc.reason != "SESSION_CHANGED_ELSEWHERE":
                        break  # its daemon was killed: a new client, on the new daemon
                    continue
                with lock:
                    acked.add(f"{sid}/{name}")
        time.sleep(0.05)


def test_kill_9_under_load_on_the_shared_database(
    pg_state: State, fleet: tuple[RunningDaemon, ...]
) -> None:
    a, b = fleet
    sids = [new_session_id("load") for _ in range(3)]
    for sid in sids:
        a.client.open_session(REPO, session_id=sid)
    for sid in sids:
        b.client.attach_session(sid)
    current = [[a], [b]]
    acked: set[str] = set()
    errors: Counter[str] = Counter()
    lock = threading.Lock()
    stop = time.monotonic() + 12
    threads = [
        threading.Thread(target=_load, args=(current[i % 2], sids, acked, errors, lock, stop))
        for i in range(4)
    ]
    for t in threads:
        t.start()
    for kills, moment in enumerate((2, 5, 8)):
        time.sleep(max(0.0, moment - (12 - (stop - time.monotonic()))))
        slot = current[kills % 2]
        old = slot[0]
        old.stop(signal.SIGKILL)  # under load: calls in flight are not acknowledged
        slot[0] = start_daemon(old.args, runtime_dir=old.dir, prefix=old.prefix)
    for t in threads:
        t.join()
    try:
        stored = {
            f"{sid}/{name}"
            for sid, name in pg_state.sql(a, "SELECT session_id, name FROM skills")
            if sid in sids
        }
        assert acked
        assert set(errors) <= _EXPECTED, errors
        lost = acked - stored
        assert not lost, f"{len(lost)} acknowledged skills lost: {sorted(lost)[:10]}"
    finally:
        for slot in current:
            if slot[0] not in fleet:
                slot[0].stop()
