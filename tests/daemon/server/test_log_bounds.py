"""The log is bounded (issue 11, item 10; docs/reliability.md): no client-chosen value is logged
whole, and the log file rotates, so failing calls cannot fill the state directory."""

from __future__ import annotations

import shutil
import stat
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from postcompact_client import PostcompactError

from tests.daemon.conftest import daemon_env, new_session_id, short_dir, start_daemon

MAX_LOG = 65536


def test_failing_calls_with_huge_values_keep_the_log_small() -> None:
    """A session of 200 roots of 4 KB (800 KB) and 200 ReadFiles outside them: each error line
    stays a few KB (the message used to hold every root: 244 MiB of log for this), and the log
    file rotates at log_max_bytes, keeping log_backups old files, all 0600."""
    base = short_dir("pcg")
    log = base / "logs" / "daemon.log"
    d = start_daemon(
        ["--log-file", str(log)],
        config_toml=f"log_max_bytes = {MAX_LOG}\nlog_backups = 2\n",
        runtime_dir=base,
    )
    root = short_dir("pcgr")
    try:
        roots = [str(root / f"{i:03d}{'r' * 3990}") for i in range(200)]
        s = d.client.open_session(str(root), session_id=new_session_id("log"), roots=roots)
        for i in range(200):
            with pytest.raises(PostcompactError) as exc:
                s.read_file(f"/etc/outside-{i}.txt")
            assert exc.value.reason == "PATH_OUTSIDE_ROOTS"
        assert "and 198 more" in exc.value.message  # the plans directory is a root too
        # A 10 MB path is refused before anything else looks at it.
        with pytest.raises(PostcompactError) as exc:
            s.read_file("/" + "p" * 10_000_000)
        assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert exc.value.reason == "PATH_TOO_LONG"
    finally:
        d.stop()
    files = sorted(log.parent.iterdir())
    assert [f.name for f in files] == ["daemon.log", "daemon.log.1", "daemon.log.2"]
    for f in files:
        assert f.stat().st_size <= MAX_LOG + 8192, f
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
        assert max(len(line) for line in f.read_text().splitlines()) < 8192
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)


def test_a_bad_log_size_is_a_configuration_error(tmp_path: Path) -> None:
    cfg = tmp_path / "config" / "postcompact" / "config.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("log_max_bytes = 10\n")
    r = subprocess.run(
        [sys.executable, "-m", "postcompact", "serve", "--socket", str(tmp_path / "d.sock")],
        env=daemon_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert r.returncode == 2, r.stderr
    assert "log_max_bytes" in r.stderr
    assert "Traceback" not in r.stderr
