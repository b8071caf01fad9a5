"""Auto-start and calls the daemon may already have applied (docs/clients.md, "Retries across a
daemon restart"): after an auto-start only an idempotent call, or one that was never sent, is
sent again (how often the daemon is started again: test_autostart_restart.py).

A fake daemon (an in-process gRPC server) sits behind a Unix-socket proxy; once armed, its Compact
and PreviewCompact apply the call, then drop every connection through the proxy before answering:
a daemon that went away after it acted. It stays up, so auto-start's health check finds it."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from postcompact_client import AsyncClient, Client, PostcompactError
from postcompact_client.v1 import postcompact_pb2 as pb

NOT_RETRIED = "which is not retried: the daemon may have applied it"


class CutProxy:
    """Forwards a Unix socket to another; `cut()` drops every connection made through it."""

    def __init__(self, listen: str, upstream: str) -> None:
        self.upstream = upstream
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(listen)
        self._server.listen()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return  # closed
            up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            up.connect(self.upstream)
            with self._lock:
                self._socks += [client, up]
            for src, dst in ((client, up), (up, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        with self._lock:
            for s in self._socks:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.cut()
        self._server.close()
        with self._lock:
            for s in self._socks:
                s.close()


class CuttingDaemon:
    """Compact and PreviewCompact of postcompact.v1, counted; once armed, the connection is cut
    after the call was applied."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.armed = False
        self.proxy: CutProxy | None = None

    def _apply(self, method: str) -> None:
        self.calls[method] += 1
        if self.armed and self.proxy is not None:
            self.armed = False
            self.proxy.cut()

    def compact(self, request: pb.CompactRequest, context: object) -> pb.CompactResponse:
        self._apply("Compact")
        return pb.CompactResponse(compaction=1)

    def preview_compact(
        self, request: pb.PreviewCompactRequest, context: object
    ) -> pb.PreviewCompactResponse:
        self._apply("PreviewCompact")
        return pb.PreviewCompactResponse(compaction=1)

    def handler(self) -> grpc.GenericRpcHandler:
        methods: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
            "Compact": grpc.unary_unary_rpc_method_handler(
                self.compact,
                request_deserializer=pb.CompactRequest.FromString,
                response_serializer=pb.CompactResponse.SerializeToString,
            ),
            "PreviewCompact": grpc.unary_unary_rpc_method_handler(
                self.preview_compact,
                request_deserializer=pb.PreviewCompactRequest.FromString,
                response_serializer=pb.PreviewCompactResponse.SerializeToString,
            ),
        }
        return grpc.method_handlers_generic_handler("postcompact.v1.PostcompactService", methods)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[CuttingDaemon, str]]:
    # Auto-start finds the fake serving; should its health check miss it, the "daemon" it
    # spawns exits at once and the health wait finds the fake.
    monkeypatch.setenv("POSTCOMPACT_BIN", "/bin/true")
    tmp = Path(tempfile.mkdtemp(prefix="pcpy-resend-", dir="/tmp"))
    daemon = CuttingDaemon()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((daemon.handler(),))
    checker = health.HealthServicer()
    checker.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)
    server.add_insecure_port(f"unix://{tmp}/fake.sock")
    server.start()
    daemon.proxy = CutProxy(str(tmp / "proxy.sock"), str(tmp / "fake.sock"))
    yield daemon, f"unix://{tmp}/proxy.sock"
    daemon.proxy.close()
    server.stop(None).wait()
    shutil.rmtree(tmp, ignore_errors=True)


def test_sync_client_does_not_resend_what_may_have_been_applied(
    fake: tuple[CuttingDaemon, str],
) -> None:
    daemon, address = fake
    with Client(address, auto_start=True) as client:
        s = client.session("s")
        s.preview_compact()  # connected
        daemon.armed = True
        with pytest.raises(PostcompactError, match=NOT_RETRIED) as info:
            s.compact()
        assert info.value.code == grpc.StatusCode.UNAVAILABLE
        assert info.value.reason == "CONNECTION_LOST"  # named: no daemon answered
        assert info.value.transport
    assert daemon.calls["Compact"] == 1

    # An idempotent call is sent again after the auto-start.
    with Client(address, auto_start=True) as client:
        s = client.session("s")
        s.preview_compact()
        before = daemon.calls["PreviewCompact"]
        daemon.armed = True
        assert s.preview_compact().compaction == 1
    assert daemon.calls["PreviewCompact"] - before == 2


def test_async_client_does_not_resend_what_may_have_been_applied(
    fake: tuple[CuttingDaemon, str],
) -> None:
    daemon, address = fake

    async def run() -> None:
        async with AsyncClient(address, auto_start=True) as client:
            s = client.session("s")
            await s.preview_compact()
            daemon.armed = True
            with pytest.raises(PostcompactError, match=NOT_RETRIED):
                await s.compact()

    asyncio.run(run())
    assert daemon.calls["Compact"] == 1


def test_a_call_past_its_deadline_is_named(tmp_path: Path) -> None:
    """A server that answers GetStats too late: the call runs out of its deadline, and the
    client names what no daemon answered (DEADLINE_EXCEEDED), as every client does."""
    release = threading.Event()

    def slow(request: pb.GetStatsRequest, context: object) -> pb.GetStatsResponse:
        release.wait(10)
        return pb.GetStatsResponse()

    handler = grpc.method_handlers_generic_handler(
        "postcompact.v1.PostcompactService",
        {
            "GetStats": grpc.unary_unary_rpc_method_handler(
                slow,
                request_deserializer=pb.GetStatsRequest.FromString,
                response_serializer=pb.GetStatsResponse.SerializeToString,
            )
        },
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(f"unix://{tmp_path / 'slow.sock'}")
    server.start()
    client = Client(f"unix://{tmp_path / 'slow.sock'}", auto_start=False, timeout=0.3)
    try:
        with client, pytest.raises(PostcompactError) as info:
            client.stats()
        assert info.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
        assert info.value.reason == "DEADLINE_EXCEEDED"
        assert info.value.transport
    finally:
        release.set()
        server.stop(None).wait()
