"""File access that races the daemon, through the real daemon: a directory on the way swapped for
a symlink out of the roots between the check and the open never leaks the outside file (and is
never INTERNAL); the start-up re-read of recorded contents reads only what a read may read, so a
restart is no oracle on outside or denied files; SetPlan does not take memory files."""

from __future__ import annotations

import ctypes
import os
import signal
import threading
from pathlib import Path

import grpc
import pytest
from postcompact_client import PostcompactError, RetryPolicy

from tests.daemon.conftest import RunningDaemon, new_session_id, start_daemon, text_of

SECRET = "TOPSECRET-OUTSIDE"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _swapper(a: Path, b: Path, stop: threading.Event) -> None:
    """Exchange `a` and `b` atomically (renameat2 RENAME_EXCHANGE) until `stop`."""
    libc = ctypes.CDLL(None, use_errno=True)
    while not stop.is_set():
        if libc.renameat2(_AT_FDCWD, bytes(a), _AT_FDCWD, bytes(b), _RENAME_EXCHANGE) != 0:
            raise OSError(ctypes.get_errno(), "renameat2")


def _tree(base: Path) -> tuple[Path, Path]:
    root, outside = base / "root", base / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (root / "d" / "data.txt").write_text("inside\n")
    (outside / "data.txt").write_text(SECRET + "\n")
    (root / "evil").symlink_to(outside)
    return root, outside


@pytest.mark.parametrize("via", ["read_file", "compact"])
def test_a_directory_swapped_for_a_symlink_never_leaks(
    daemon: RunningDaemon, base: Path, via: str
) -> None:
    root, _ = _tree(base)
    daemon.client.retry = RetryPolicy.none()
    s = daemon.client.open_session(str(root), session_id=new_session_id("race"))
    s.record_read("d/data.txt", "inside\n", timestamp_ms=1)
    stop = threading.Event()
    swapper = threading.Thread(target=_swapper, args=(root / "d", root / "evil", stop))
    swapper.start()
    seen = {"inside": 0, "refused": 0}
    codes: set[grpc.StatusCode] = set()
    try:
        for i in range(400):
            try:
                if via == "read_file":
                    text = s.read_file("d/data.txt", limit=1 + i).content.decode()
                else:
                    text = "\n".join(text_of(a) for a in s.preview_compact().attachments)
            except PostcompactError as exc:
                codes.add(exc.code)
                seen["refused"] += 1
                continue
            assert SECRET not in text, f"the outside file leaked after {i} tries"
            seen["inside"] += 1
    finally:
        stop.set()
        swapper.join()
    assert codes <= {grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.NOT_FOUND}, codes
    assert sum(seen.values()) == 400


def test_a_restart_is_no_oracle_on_outside_or_denied_files(base: Path) -> None:
    """An agent records a guess of a file it may not read; a restart re-reads recorded contents
    to verify them, which must not read such files: the guess stays unverified, right or wrong."""
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret\n")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / ".env").write_text("TOKEN=s3cret\n")
    (root / "env-link.txt").symlink_to(root / ".env")  # .env itself cannot be recorded
    run = base / "d"
    run.mkdir(mode=0o700)
    d = start_daemon(runtime_dir=run)
    try:
        sid = new_session_id("oracle")
        right = d.client.open_session(str(root), session_id=sid)
        wrong = right.start_agent("wrong")
        for rel, content in (("link.txt", "s3cret\n"), ("env-link.txt", "TOKEN=s3cret\n")):
            right.record_read(rel, content, timestamp_ms=2**62)
            wrong.record_read(rel, "a wrong guess\n", timestamp_ms=2**62)
        d.stop(signal.SIGKILL)
        d = start_daemon(runtime_dir=run)
        s = d.client.session(sid)
        for rel in ("link.txt", "env-link.txt"):
            assert s.check_write(rel).result == s.agent("wrong").check_write(rel).result
    finally:
        d.stop()


def test_set_plan_does_not_take_a_memory_file(daemon: RunningDaemon, base: Path) -> None:
    root, outside = base / "root", base / "outside"
    root.mkdir()
    outside.mkdir()
    memory = outside / "notes.md"
    memory.write_text("private\n")
    s = daemon.client.open_session(
        str(root), session_id=new_session_id("planmem"), memory_paths=[str(memory)]
    )
    with pytest.raises(PostcompactError) as exc:
        s.set_plan(str(memory))
    assert exc.value.reason == "PATH_OUTSIDE_ROOTS"


def test_the_swap_helper_works(base: Path) -> None:
    """The race tests above rely on RENAME_EXCHANGE really exchanging the two names."""
    root, _ = _tree(base)
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.renameat2(_AT_FDCWD, bytes(root / "d"), _AT_FDCWD, bytes(root / "evil"), 2) == 0
    assert (root / "d").is_symlink()
    assert (root / "evil" / "data.txt").read_text() == "inside\n"
    assert os.path.realpath(root / "d" / "data.txt").endswith("outside/data.txt")
