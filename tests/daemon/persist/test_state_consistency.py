"""What the live daemon answers equals what it answers after a `kill -9` restart on the same state,
for the cases where the two used to drift apart; and calls that fail or are cancelled half-way
leave the state as it was. Every test runs the real daemon over its socket."""

from __future__ import annotations

import time
from pathlib import Path

import grpc
import pytest
from postcompact_client import PostcompactError, Session
from postcompact_client.types import Outcome, WriteCheck
from postcompact_client.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import RunningDaemon, State, new_session_id, start_daemon, text_of


def _restart(d: RunningDaemon) -> RunningDaemon:
    d.stop(9)
    return start_daemon(d.args, runtime_dir=d.dir)


def _ddir(base: Path) -> Path:
    d = base / "d"
    d.mkdir(mode=0o700, exist_ok=True)
    return d


def _answers(s: Session, paths: list[str], *, ranged: bool = False) -> list[tuple[object, ...]]:
    """What a client sees of the entries: the CheckWrite result, then whether a ReadFile of the
    same range is the "unchanged" stub (which also makes the entry most recently used)."""
    out: list[tuple[object, ...]] = []
    for p in paths:
        write = s.check_write(p).result
        read = s.read_file(p, offset=1, limit=2) if ranged else s.read_file(p)
        out.append((p, write, read.unchanged))
    return out


def test_a_ranged_read_of_a_crlf_file_survives_a_restart(state: State, base: Path) -> None:
    project = base / "proj"
    project.mkdir()
    (project / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (project / "lf.txt").write_bytes(b"one\ntwo\nthree\n")
    d = start_daemon(state.args, runtime_dir=_ddir(base))
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("crlf"))
        paths = ["crlf.txt", "lf.txt"]
        for p in paths:
            assert s.read_file(p, offset=1, limit=2).content.endswith(b"two")
        live = _answers(s, paths, ranged=True)
        assert all(unchanged for _, _, unchanged in live)
        d = _restart(d)
        assert _answers(d.client.session(s.session_id), paths, ranged=True) == live
    finally:
        d.stop()


def test_truncated_compact_seeds_survive_a_restart(state: State, base: Path) -> None:
    """Files restored by TRUNCATE_HEAD re-seed the cache with their head: a CRLF file, a file
    whose first line alone passes the cap, a file that is not valid UTF-8."""
    project = base / "proj"
    project.mkdir()
    files = {
        "lf.txt": b"".join(b"line %d of an LF file\n" % i for i in range(400)),
        "crlf.txt": b"".join(b"line %d of a CRLF file\r\n" % i for i in range(400)),
        "long-first-line.txt": b"x" * 5000 + b"\nsecond line\n",
        "latin1.txt": b"".join(b"caf\xe9 number %d\n" % i for i in range(400)),
    }
    for name, data in files.items():
        (project / name).write_bytes(data)
    d = start_daemon(state.args, runtime_dir=_ddir(base))
    try:
        s = d.client.open_session(
            str(project),
            session_id=new_session_id("seed"),
            policy={"max_tokens_per_file": 200, "oversize": "truncate_head"},
        )
        for name in files:
            s.read_file(name)
        resp = s.compact(skip_hooks=True)
        truncated = [x.name for x in resp.decisions if x.outcome == Outcome.TRUNCATED]
        assert len(truncated) == len(files), resp.decisions
        live = [(p, s.check_write(p).result) for p in files]
        assert all(r == WriteCheck.ALLOWED for _, r in live), live
        d = _restart(d)
        s = d.client.session(s.session_id)
        assert [(p, s.check_write(p).result) for p in files] == live
    finally:
        d.stop()


def test_a_failed_read_file_does_not_move_the_entry(state: State, base: Path) -> None:
    """A ReadFile that fails (here: the file became binary) leaves the entry's recency as it
    was, so the ranking a restart loads is the one the live daemon uses."""
    project = base / "proj"
    project.mkdir()
    names = [f"f{i}.txt" for i in range(6)]
    for n in names:
        (project / n).write_text(f"file {n}\n")
    d = start_daemon(state.args, runtime_dir=_ddir(base))
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("lru"))
        for n in names:
            s.read_file(n)
        # Equal timestamps: recency ranks; every file restored (no budget matched to Claude Code's).
        s.compact(skip_hooks=True, policy={"max_files": 10, "match_budget": "none"})
        (project / "f0.txt").write_bytes(b"\x00binary")
        with pytest.raises(PostcompactError) as exc:
            s.read_file("f0.txt")
        assert exc.value.code == grpc.StatusCode.FAILED_PRECONDITION
        (project / "f0.txt").write_text("file f0.txt\n")

        def ranked(sess: Session) -> list[str]:
            r = sess.preview_compact(skip_hooks=True, policy={"max_files": 5})
            return [x.name for x in r.decisions if x.outcome == Outcome.DROPPED_BY_RANK]

        live = ranked(s)
        assert len(live) == 1
        d = _restart(d)
        assert ranked(d.client.session(s.session_id)) == live
    finally:
        d.stop()


def test_a_cancelled_compact_changes_nothing(state: State, base: Path) -> None:
    """The client gives up while the daemon awaits a session-start hook: the compaction that was
    half done (cache cleared and re-seeded) is undone, in memory as on disk."""
    project = base / "proj"
    project.mkdir()
    names = [f"f{i}.txt" for i in range(6)]
    for n in names:
        (project / n).write_text(f"file {n}\n")
    hook = '[[hooks.session_start]]\ncommand = "sleep 2; echo late"\ntimeout_s = 10\n'
    d = start_daemon(state.args, runtime_dir=_ddir(base), config_toml=hook)
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("cancel"))
        for n in names:
            s.read_file(n)
        before = s.preview_compact(skip_hooks=True)
        req = pb.CompactRequest(session_id=s.session_id, policy=pb.RestorePolicy(max_files=2))
        with pytest.raises(PostcompactError) as exc:
            d.client.call("Compact", req, timeout=0.7)
        assert exc.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
        time.sleep(2.0)  # the hook ends; the cancelled handler has unwound

        def answers(sess: Session) -> tuple[object, ...]:
            info = next(i for i in d.client.list_sessions() if i.session_id == sess.session_id)
            preview = sess.preview_compact(skip_hooks=True)
            return (
                info.cached_entries,
                info.compactions,
                [text_of(a) for a in preview.attachments],
            )

        live = answers(s)
        assert live == (len(names), 0, [text_of(a) for a in before.attachments])
        d = _restart(d)
        assert answers(d.client.session(s.session_id)) == live
    finally:
        d.stop()


def test_a_read_file_answer_over_the_message_limit_is_not_recorded(
    state: State, base: Path
) -> None:
    project = base / "proj"
    project.mkdir()
    (project / "big.txt").write_text("".join(f"line {i:05d} of a file\n" for i in range(2500)))
    d = start_daemon(state.args, runtime_dir=_ddir(base), config_toml="max_message_bytes = 65536\n")
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("big"))
        for _ in range(2):  # the retry fails the same way: no "unchanged" stub
            with pytest.raises(PostcompactError) as exc:
                s.read_file("big.txt")
            assert exc.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert exc.value.reason == "RESPONSE_TOO_LARGE"
            assert "offset and limit" in exc.value.message
        part = s.read_file("big.txt", offset=1, limit=100)
        assert not part.unchanged
        assert part.num_lines == 100
    finally:
        d.stop()
