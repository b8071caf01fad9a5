"""`server_implementation = "native"` (issue 41, part 2; nativeserver.py): every method of the
daemon's service and of health is served by pygrpc-native's front itself, none by the grpc.aio
fallback behind it, over the Unix socket and over TCP (behind the token gate); reflection
(bidirectional) and unknown methods are the fallback's, and answer as on grpc.aio.

The daemon runs in this test's process, so that the native front's dispatch can be watched:
`pygrpc_native.aio.Server._run` is the one place a natively served call goes through (a private
method of pygrpc-native 0.5.0, wrapped here only to record the methods)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from postcompact.config import Config, load_config
from postcompact.server import SERVICE_DESCRIPTOR, SERVICE_NAME, Daemon
from postcompact.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import short_dir

pygrpc_native_aio = pytest.importorskip("pygrpc_native.aio")

HEALTH = "grpc.health.v1.Health"


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The methods the native front served, in order."""
    methods: list[str] = []
    run = pygrpc_native_aio.Server._run

    async def recording(self: Any, call: Any, payload: bytes) -> None:
        methods.append(call.method)
        await run(self, call, payload)

    monkeypatch.setattr(pygrpc_native_aio.Server, "_run", recording)
    return methods


@contextlib.asynccontextmanager
async def native_daemon() -> AsyncIterator[tuple[str, str, str]]:
    """A native daemon in this process: its Unix address, its TCP address and its token."""
    base = short_dir()
    cfg = Config(
        socket=base / "d.sock",
        tcp_port=0,
        persist=False,
        server_implementation="native",
        shutdown_grace_s=1.0,
    )
    daemon = Daemon(cfg)
    task = asyncio.create_task(daemon.run())
    server_json = base / "server.json"
    for _ in range(200):
        if daemon.tcp_port and await asyncio.to_thread(server_json.exists):
            break
        await asyncio.sleep(0.05)
    info, token = await asyncio.to_thread(_server_info, server_json)
    try:
        yield f"unix://{cfg.socket}", info["tcp_address"], token
    finally:
        daemon.stopping.set()
        assert await asyncio.wait_for(task, 30) == 0


def _server_info(server_json: Path) -> tuple[dict[str, Any], str]:
    info = json.loads(server_json.read_text())
    return info, Path(info["token_file"]).read_text().strip()


async def _every_method(address: str, metadata: tuple[tuple[str, str], ...]) -> None:
    """Each method of the service with an empty request (most answer an error: still the
    handler's), health's Check and Watch."""
    async with grpc.aio.insecure_channel(address) as ch:
        for m in SERVICE_DESCRIPTOR.methods:
            call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = ch.unary_unary(
                f"/{SERVICE_NAME}/{m.name}"
            )
            with contextlib.suppress(grpc.aio.AioRpcError):
                await call(b"", metadata=metadata, timeout=10)
        health = health_pb2_grpc.HealthStub(ch)
        got = await health.Check(health_pb2.HealthCheckRequest(), metadata=metadata, timeout=10)
        assert got.status == health_pb2.HealthCheckResponse.SERVING
        watch = health.Watch(health_pb2.HealthCheckRequest(), metadata=metadata, timeout=10)
        async for first in watch:
            assert first.status == health_pb2.HealthCheckResponse.SERVING
            break
        watch.cancel()


async def _fallback_answers(address: str, metadata: tuple[tuple[str, str], ...]) -> None:
    async with grpc.aio.insecure_channel(address) as ch:
        stub = reflection_pb2_grpc.ServerReflectionStub(ch)
        req = reflection_pb2.ServerReflectionRequest(list_services="")
        names = []
        async for resp in stub.ServerReflectionInfo(iter([req]), metadata=metadata, timeout=10):
            names = [s.name for s in resp.list_services_response.service]
        assert SERVICE_NAME in names
        nothing: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = ch.unary_unary(
            "/x.Nowhere/Nothing"
        )
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await nothing(b"", metadata=metadata, timeout=10)
        assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
        assert "unknown method" in (err.value.details() or "")


async def test_every_method_is_served_natively(served: list[str]) -> None:
    expected = {f"/{SERVICE_NAME}/{m.name}" for m in SERVICE_DESCRIPTOR.methods}
    expected |= {f"/{HEALTH}/Check", f"/{HEALTH}/Watch"}
    async with native_daemon() as (uds, tcp, token):
        auth = (("authorization", f"Bearer {token}"),)
        for address, md in ((uds, ()), (tcp, auth)):
            served.clear()
            await _every_method(address, md)
            assert set(served) == expected, address
            served.clear()
            await _fallback_answers(address, md)
            assert served == [], f"reflection and unknown methods are the fallback's ({address})"


async def test_the_token_gate_holds_on_native_methods(served: list[str]) -> None:
    async with native_daemon() as (_uds, tcp, _token), grpc.aio.insecure_channel(tcp) as ch:
        for name in ("GetServerInfo", "ReadFile"):
            method: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = ch.unary_unary(
                f"/{SERVICE_NAME}/{name}"
            )
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await method(b"\xff", timeout=10)
            assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
            reason = dict(err.value.trailing_metadata() or ())
            assert reason.get("postcompact-error-reason") == "UNAUTHENTICATED"
        health = health_pb2_grpc.HealthStub(ch)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            async for _ in health.Watch(health_pb2.HealthCheckRequest(), timeout=10):
                pass
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert f"/{SERVICE_NAME}/GetServerInfo" in served  # refused by the gate on the native path


def test_the_implementation_is_a_setting() -> None:
    assert load_config({}, env={}).server_implementation == "grpcio"
    env = {"POSTCOMPACT_SERVER_IMPLEMENTATION": "native"}
    assert load_config({}, env=env).server_implementation == "native"
    flags = {"server_implementation": "grpcio"}
    assert load_config(flags, env=env).server_implementation == "grpcio"
    from postcompact.config import ConfigError

    with pytest.raises(ConfigError, match="server_implementation"):
        load_config({"server_implementation": "uvloop"}, env={})


def test_the_refused_option_is_left_out() -> None:
    from postcompact.nativeserver import REFUSED_OPTIONS, Registrations, new_server

    opts = [("grpc.max_connection_idle_ms", 5000), ("grpc.keepalive_time_ms", 4000)]
    assert "grpc.max_connection_idle_ms" in REFUSED_OPTIONS
    server = new_server(opts, Registrations(), [], None)  # would raise with the option
    assert isinstance(server, pygrpc_native_aio.Server)
    assert pb.DESCRIPTOR.services_by_name["PostcompactService"] is SERVICE_DESCRIPTOR
