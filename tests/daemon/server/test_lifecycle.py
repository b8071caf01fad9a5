"""Lifecycle: permissions, single instance, server.json, graceful SIGTERM, TCP token, health,
reflection, GetServerInfo."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from postcompact_client import Client, PostcompactError

from tests.daemon.conftest import (
    RunningDaemon,
    daemon_env,
    serve_command,
    short_dir,
    start_daemon,
)


def _mode(p: Path) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


def test_permissions_and_server_json(daemon: RunningDaemon) -> None:
    assert _mode(daemon.dir) == 0o700
    assert stat.S_ISSOCK(os.stat(daemon.socket_path).st_mode)
    assert _mode(daemon.socket_path) == 0o600
    assert _mode(daemon.server_json) == 0o600
    info = json.loads(daemon.server_json.read_text())
    assert info["pid"] == daemon.proc.pid
    assert info["api_version"] == "postcompact.v1"
    assert info["socket"] == str(daemon.socket_path)
    assert info["address"] == f"unix://{daemon.socket_path}"
    assert info["tcp_port"] == 0
    assert info["tcp_address"] is None
    assert info["token_file"] is None
    assert isinstance(info["version"], str)
    assert info["version"]
    assert isinstance(info["started_at_ms"], int)


def test_server_info(daemon: RunningDaemon) -> None:
    info = daemon.client.server_info()
    assert info.api_version == "postcompact.v1"
    assert info.pid == daemon.proc.pid
    assert info.socket_path == str(daemon.socket_path)
    assert {"compact.full", "files.read", "tokens.count"} <= set(info.capabilities)


def test_health_and_reflection(daemon: RunningDaemon) -> None:
    assert daemon.client.health()
    assert daemon.client.health("postcompact.v1.PostcompactService")
    with grpc.insecure_channel(daemon.address) as ch:
        stub = reflection_pb2_grpc.ServerReflectionStub(ch)
        reqs = iter([reflection_pb2.ServerReflectionRequest(list_services="")])
        resp = next(iter(stub.ServerReflectionInfo(reqs, timeout=10)))
    names = {s.name for s in resp.list_services_response.service}
    assert "postcompact.v1.PostcompactService" in names
    assert "grpc.health.v1.Health" in names


def test_second_serve_fails_and_first_keeps_serving(daemon: RunningDaemon) -> None:
    second = subprocess.run(
        serve_command(daemon.socket_path),
        env=daemon.env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert second.returncode != 0
    assert b"already running" in second.stderr
    assert daemon.client.health()
    assert daemon.client.server_info().pid == daemon.proc.pid
    assert daemon.socket_path.exists()


def test_sigterm_stops_cleanly() -> None:
    d = start_daemon()
    try:
        assert d.socket_path.exists()
        assert d.server_json.exists()
        assert d.stop(signal.SIGTERM) == 0
        assert not d.socket_path.exists()
        assert not d.server_json.exists()
        assert "shutting down" in d.stderr()
    finally:
        shutil.rmtree(d.dir, ignore_errors=True)


def test_sigint_stops_cleanly_and_a_new_daemon_can_start() -> None:
    d = start_daemon()
    try:
        assert d.stop(signal.SIGINT) == 0
        assert not d.socket_path.exists()
        again = start_daemon(runtime_dir=d.dir)  # the lock was released
        assert again.client.health()
        assert again.stop() == 0
    finally:
        shutil.rmtree(d.dir, ignore_errors=True)


def test_refuses_a_runtime_dir_open_to_others() -> None:
    base = short_dir()
    try:
        os.chmod(base, 0o755)
        r = subprocess.run(
            serve_command(base / "d.sock"),
            env=daemon_env(base),
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert r.returncode != 0
        assert b"0755" in r.stderr
        assert b"0700" in r.stderr
        assert not (base / "d.sock").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("shared", [False, True], ids=["0755", "sticky-1777"])
def test_a_socket_in_a_shared_directory_is_advised_a_private_one(shared: bool) -> None:
    """`serve --socket /tmp/pc.sock`: the socket's directory is not private, and postcompact
    neither changes it nor advises changing it (`chmod 700 /tmp` would break every other user of
    /tmp): it advises a private directory, one line, exit 1."""
    base = short_dir()
    try:
        shared_dir = base / "shared"
        shared_dir.mkdir()
        os.chmod(shared_dir, 0o1777 if shared else 0o755)
        r = subprocess.run(
            serve_command(shared_dir / "pc.sock"),
            env=daemon_env(base),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert r.returncode == 1, r.stderr
        assert r.stderr.startswith("postcompact: "), r.stderr
        assert r.stderr.count("\n") == 1, r.stderr
        assert "chmod" not in r.stderr, r.stderr
        private = shared_dir / f"postcompact-{os.getuid()}"
        assert f"mkdir -m 700 {private}" in r.stderr, r.stderr
        assert f"--socket {private / 'pc.sock'}" in r.stderr, r.stderr
        # ... or the default place, in the runtime directory the daemon makes private itself.
        assert str(base / "run" / "postcompact" / "daemon.sock") in r.stderr, r.stderr
        assert stat.S_IMODE(os.stat(shared_dir).st_mode) == (0o1777 if shared else 0o755)
        assert not (shared_dir / "pc.sock").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_default_socket_under_xdg_runtime_dir() -> None:
    base = short_dir()
    run = base / "run"
    run.mkdir(mode=0o700)
    proc = subprocess.Popen(
        [sys.executable, "-m", "postcompact", "serve"],
        env=daemon_env(base),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = Client(f"unix://{run / 'postcompact' / 'daemon.sock'}", auto_start=False)
    try:
        client.wait_for_health(30)
        assert _mode(run / "postcompact") == 0o700
        assert _mode(run / "postcompact" / "daemon.sock") == 0o600
        assert (run / "postcompact" / "server.json").exists()
    finally:
        client.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        shutil.rmtree(base, ignore_errors=True)


def test_socket_path_too_long_is_a_clear_error() -> None:
    base = short_dir()
    try:
        long_dir = base / ("x" * 60) / ("y" * 60)
        r = subprocess.run(
            serve_command(long_dir / "d.sock"),
            env=daemon_env(base),
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert r.returncode != 0
        assert b"107-byte limit" in r.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_tcp_requires_the_token() -> None:
    d = start_daemon(["--tcp-port", "0"])
    try:
        info = json.loads(d.server_json.read_text())
        port = info["tcp_port"]
        assert port > 0
        token_file = Path(info["token_file"])
        assert _mode(token_file) == 0o600
        token = token_file.read_text().strip()
        info_rpc = d.client.server_info()  # the Unix socket needs no token
        assert (info_rpc.tcp_port, info_rpc.tcp_address) == (port, f"127.0.0.1:{port}")
        assert info["tcp_address"] == f"127.0.0.1:{port}"
        status = subprocess.run(
            [sys.executable, "-m", "postcompact", "status", "--socket", str(d.socket_path)],
            env=d.env,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        assert f"tcp 127.0.0.1:{port}" in status.stdout

        for bad in (None, "wrong-token"):
            with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
                md = (("authorization", f"Bearer {bad}"),) if bad else ()
                call: Any = ch.unary_unary("/postcompact.v1.PostcompactService/GetServerInfo")
                with pytest.raises(grpc.RpcError) as err:
                    call(b"", timeout=10, metadata=md)
                assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
                trailers: dict[str, Any] = dict(err.value.trailing_metadata() or ())  # type: ignore[arg-type]
                assert trailers.get("postcompact-error-reason") == "UNAUTHENTICATED"

        no_token = Client(f"127.0.0.1:{port}", token="nope", auto_start=False)
        try:
            with pytest.raises(PostcompactError) as perr:
                no_token.server_info()
            assert perr.value.code == grpc.StatusCode.UNAUTHENTICATED
            assert not no_token.health()
        finally:
            no_token.close()

        tcp = Client(f"127.0.0.1:{port}", token=token, auto_start=False)
        try:
            assert tcp.server_info().pid == d.proc.pid
            assert tcp.health()
        finally:
            tcp.close()
        assert d.stop() == 0
        assert not token_file.exists()
    finally:
        shutil.rmtree(d.dir, ignore_errors=True)
