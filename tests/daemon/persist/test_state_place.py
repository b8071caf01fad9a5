"""The state on disk (issue 11, items 13 and 14; docs/reliability.md, docs/security.md): a
session can be closed on a full disk, and the state directory must be the user's and private.

The full-disk test mounts a small tmpfs and so needs root (CI is root); it skips otherwise."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from postcompact_client import PostcompactError, Session

from tests.daemon.conftest import daemon_env, new_session_id, short_dir, start_daemon

ROOT = os.geteuid() == 0


def _serve(base: Path, state_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "postcompact",
            "serve",
            "--socket",
            str(base / "d.sock"),
            "--state-dir",
            str(state_dir),
        ],
        env=daemon_env(base),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize("mode", [0o777, 0o755, 0o750])
def test_a_shared_state_directory_is_refused(mode: int) -> None:
    base = short_dir("pcp")
    state = base / "state"
    state.mkdir(mode=0o700)
    os.chmod(state, mode)
    r = _serve(base, state)
    shutil.rmtree(base, ignore_errors=True)
    assert r.returncode != 0
    assert f"state directory {state} has mode {mode:04o}" in r.stderr
    assert "chmod 700" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.skipif(not ROOT, reason="needs root to make a directory owned by another user")
def test_a_state_directory_of_another_user_is_refused() -> None:
    base = short_dir("pcp")
    state = base / "state"
    state.mkdir(mode=0o700)
    os.chown(state, 65534, 65534)
    r = _serve(base, state)
    shutil.rmtree(base, ignore_errors=True)
    assert r.returncode != 0
    assert f"state directory {state} is owned by uid 65534" in r.stderr
    assert "Traceback" not in r.stderr


@contextlib.contextmanager
def _tmpfs(size: str) -> Iterator[Path]:
    mount = short_dir("pcfs")
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(mount)],
                   check=True)  # fmt: skip
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
        shutil.rmtree(mount, ignore_errors=True)


def _fill(mount: Path) -> None:
    """Write a filler file until the file system refuses (ENOSPC)."""
    chunk = b"\0" * (1 << 16)
    with open(mount / "filler", "wb", buffering=0) as f, contextlib.suppress(OSError):
        while True:
            f.write(chunk)


def _write_until_refused(s: Session, proj: Path) -> PostcompactError:
    for i in range(200):
        try:
            s.record_read(str(proj / f"g{i}.txt"), os.urandom(32 * 1024).hex())
        except PostcompactError as exc:
            return exc
    raise AssertionError("200 writes of 64 KiB fit a full 16 MiB file system")


@pytest.mark.skipif(not ROOT or not shutil.which("mount"), reason="needs root to mount a tmpfs")
def test_close_session_works_on_a_full_disk() -> None:
    """The state database on a 16 MiB tmpfs filled to the last byte: writes fail STATE_FULL,
    whose message says to close sessions, and closing one works (the reserve beside the database
    is given up for it); the session is gone, also after a restart."""
    with _tmpfs("16m") as mount:
        state = mount / "state"
        d = start_daemon(["--state-dir", str(state)])
        proj = short_dir("pcpj")
        try:
            reserve = [p for p in state.iterdir() if p.name.endswith(".reserve")]
            assert len(reserve) == 1
            s = d.client.open_session(str(proj), session_id=new_session_id("full"))
            keep = d.client.open_session(str(proj), session_id=new_session_id("keep"))
            for i in range(20):
                s.record_read(str(proj / f"f{i}.txt"), os.urandom(32 * 1024).hex())
            _fill(mount)
            refused = _write_until_refused(s, proj)
            assert refused.reason in ("STATE_FULL", "STATE_WRITE_FAILED"), refused
            s.close()  # what the error advises: it must work
            assert {x.session_id for x in d.client.list_sessions()} == {keep.session_id}
            assert "its reserve was given up" in d.stderr()
            (mount / "filler").unlink()
            d.stop()
            d = start_daemon(["--state-dir", str(state)], runtime_dir=d.dir)
            assert {x.session_id for x in d.client.list_sessions()} == {keep.session_id}
        finally:
            d.stop()
            shutil.rmtree(d.dir, ignore_errors=True)
            shutil.rmtree(proj, ignore_errors=True)
