"""The `postcompact` CLI: version, status [--json], start, stop, demo, preview."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from postcompact_client import Client

from tests.daemon.conftest import RunningDaemon, daemon_env, new_session_id, short_dir


def cli(
    args: list[str], env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "postcompact", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_version(daemon: RunningDaemon) -> None:
    r = cli(["version"], daemon.env)
    assert r.returncode == 0
    assert re.fullmatch(r"postcompact \S+ \(api postcompact\.v1\)\n", r.stdout)


def test_status_json(daemon: RunningDaemon, project: Path) -> None:
    s = daemon.client.open_session(str(project), session_id=new_session_id())
    s.read_file("src/a.py")
    r = cli(["status", "--json", "--socket", str(daemon.socket_path)], daemon.env)
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)
    assert st["running"] is True
    assert st["pid"] == daemon.proc.pid
    assert st["api_version"] == "postcompact.v1"
    assert st["sessions"] >= 1
    assert st["agents"] >= 1
    assert st["cached_bytes"] >= len("alpha = 1\nbeta = 2\ngamma = 3\n")
    assert st["compactions"] >= 0
    assert s.session_id in {x["session_id"] for x in st["session_infos"]}
    text = cli(["status", "--socket", str(daemon.socket_path)], daemon.env)
    assert text.returncode == 0
    assert "running, pid" in text.stdout


def test_status_when_not_running_exits_3() -> None:
    base = short_dir()
    try:
        env = daemon_env(base)
        r = cli(["status", "--socket", str(base / "d.sock")], env)
        assert r.returncode == 3
        assert "not running" in r.stdout
        j = cli(["status", "--json", "--socket", str(base / "d.sock")], env)
        assert j.returncode == 3
        assert json.loads(j.stdout)["running"] is False
        assert cli(["stop", "--socket", str(base / "d.sock")], env).returncode == 3
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_start_then_stop() -> None:
    base = short_dir()
    sock = base / "d.sock"
    try:
        env = daemon_env(base)
        r = cli(["start", "--socket", str(sock)], env)
        assert r.returncode == 0, r.stderr
        assert "started" in r.stdout
        c = Client(f"unix://{sock}", auto_start=False)
        try:
            assert c.health()
            pid = c.server_info().pid
        finally:
            c.close()
        again = cli(["start", "--socket", str(sock)], env)
        assert again.returncode == 0
        assert "already running" in again.stdout
        stop = cli(["stop", "--socket", str(sock)], env)
        assert stop.returncode == 0, stop.stderr
        assert f"pid {pid}" in stop.stdout
        assert not sock.exists()
        assert not (base / "server.json").exists()
        assert cli(["status", "--socket", str(sock)], env).returncode == 3
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _restored(out: str) -> list[list[str]]:
    return [
        [p.strip() for p in line.split(":", 1)[1].split(",")]
        for line in out.splitlines()
        if line.strip().startswith("Restored (in order):")
    ]


def test_demo(daemon: RunningDaemon) -> None:
    r = cli(["demo", "--no-start", "--socket", str(daemon.socket_path)], daemon.env)
    assert r.returncode == 0, r.stdout + r.stderr
    four, eight, again = _restored(r.stdout)
    assert sorted(four) == sorted(
        ["src/utils/format.ts", "tests/unit/format.test.ts", "src/types/index.ts", "README.md"]
    )
    assert eight == [
        ".eslintrc.js",
        "CONTRIBUTING.md",
        "src/utils/validation.ts",
        "src/config/default.ts",
        "README.md",
    ]
    # The re-read file first, then the previous compaction's files in their rank order (the
    # re-seed keeps it): README.md, its last, is the one that no longer fits.
    assert again == ["src/utils/format.ts", *eight[:4]]
    assert "dropped_by_rank" in r.stdout
    assert "Called the Read tool" in r.stdout


def test_preview_shows_what_a_compaction_would_restore(
    daemon: RunningDaemon, project: Path
) -> None:
    s = daemon.client.open_session(
        str(project),
        session_id=new_session_id(),
        policy={"complement": "claude_code", "file_token_budget": 4_800},
    )
    s.read_file("src/a.py")
    sock = ["--socket", str(daemon.socket_path)]
    r = cli(["preview", s.session_id, "--json", *sock], daemon.env)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["session_id"] == s.session_id
    assert d["compaction"] == 1
    # Complement mode: Claude Code restores the one file itself; postcompact attaches nothing.
    assert d["attachments"] == []
    files = [x for x in d["decisions"] if x["subject"] == "FILE"]
    assert [(Path(x["name"]).name, x["outcome"]) for x in files] == [
        ("a.py", "RESTORED_BY_HARNESS")
    ]
    assert "Claude Code restores it itself" in files[0]["detail"]
    text = cli(["preview", s.session_id, *sock], daemon.env)
    assert text.returncode == 0, text.stderr
    assert "would restore 0 attachment(s)" in text.stdout
    assert "RESTORED_BY_HARNESS" in text.stdout
    # Without the complement the file is restored: shown with its lines, tokens and text.
    plain = daemon.client.open_session(str(project), session_id=new_session_id())
    plain.read_file("src/a.py")
    out = cli(["preview", plain.session_id, "--text", *sock], daemon.env)
    assert out.returncode == 0, out.stderr
    assert "file                     src/a.py  lines 1-4 of 4" in out.stdout
    assert "1\talpha = 1" in out.stdout
    js = json.loads(cli(["preview", plain.session_id, "--json", *sock], daemon.env).stdout)
    (att,) = js["attachments"]
    assert att["kind"] == "FILE"
    assert att["chars"] == len("\n".join(att["blocks"]))
    # A preview changes nothing.
    info = {x.session_id: x for x in daemon.client.list_sessions()}
    assert info[plain.session_id].compactions == 0


def test_preview_of_an_unknown_session_or_no_daemon() -> None:
    base = short_dir()
    try:
        env = daemon_env(base)
        r = cli(["preview", "nope", "--socket", str(base / "d.sock")], env)
        assert r.returncode == 3
        assert "not running" in r.stdout
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_preview_of_a_session_the_daemon_does_not_hold(daemon: RunningDaemon) -> None:
    r = cli(["preview", "no-such-session", "--socket", str(daemon.socket_path)], daemon.env)
    assert r.returncode == 1
    assert "SESSION_NOT_FOUND" in r.stderr
