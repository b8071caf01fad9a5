"""Baseline servers for the transport benchmarks, run in their own process.

    python -m bench._servers {raw,grpc-sync,grpc-aio} ADDRESS

ADDRESS is `unix:///path` or `127.0.0.1:PORT`. Every server answers a request whose first 8
bytes are the decimal response size with that many bytes, and prints READY once listening.
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import sys
import threading
from concurrent import futures

import grpc

SIZES = (100, 20 * 1024, 100 * 1024)
PAYLOADS = {n: b"x" * n for n in SIZES}
ECHO_METHOD = "/bench.Echo/Echo"
OPTIONS = [("grpc.so_reuseport", 0)]


def _size(req: bytes) -> int:
    return int(req[:8])


def _payload(size: int) -> bytes:
    """`size` bytes (made once per size: B5 asks for the size of a real Compact response)."""
    payload = PAYLOADS.get(size)
    if payload is None:
        payload = PAYLOADS[size] = b"x" * size
    return payload


def serve_raw(address: str) -> None:
    if address.startswith("unix://"):
        path = address.removeprefix("unix://")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
    else:
        host, port = address.rsplit(":", 1)
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((host, int(port)))
    srv.listen(64)
    print("READY", flush=True)

    def handle(conn: socket.socket) -> None:
        if conn.family == socket.AF_INET:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with conn:
            while True:
                head = _recv_exact(conn, 4)
                if not head:
                    return
                (n,) = struct.unpack("!I", head)
                body = _recv_exact(conn, n)
                payload = _payload(_size(body))
                conn.sendall(struct.pack("!I", len(payload)) + payload)

    while True:
        conn, _ = srv.accept()
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = conn.recv(n - len(buf))
        if not chunk:
            return b""
        buf += chunk
    return bytes(buf)


def serve_grpc_sync(address: str) -> None:
    def echo(req: bytes, _ctx: grpc.ServicerContext) -> bytes:
        return _payload(_size(req))

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16), options=OPTIONS)
    handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.unary_unary_rpc_method_handler(echo)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler}),)
    )
    server.add_insecure_port(address)
    server.start()
    print("READY", flush=True)
    server.wait_for_termination()


async def serve_grpc_aio(address: str) -> None:
    async def echo(req: bytes, _ctx: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        return _payload(_size(req))

    server = grpc.aio.server(options=OPTIONS)
    handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.unary_unary_rpc_method_handler(echo)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler}),)
    )
    server.add_insecure_port(address)
    await server.start()
    print("READY", flush=True)
    await server.wait_for_termination()


FRONT_TOKEN = "bench-front-token"


async def serve_grpc_aio_fronted(address: str) -> None:
    """The aio echo behind the daemon's own TCP front (`postcompact.tcpfront`, in this process's
    event loop as in the daemon's): the front's cost alone, beside the bare echo. Callers show
    `FRONT_TOKEN`."""
    import tempfile
    from pathlib import Path

    from postcompact.tcpfront import TcpFront

    async def echo(req: bytes, _ctx: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
        return _payload(_size(req))

    with tempfile.TemporaryDirectory(prefix="pcfront-") as tmp:
        upstream = Path(tmp) / "echo.sock"
        server = grpc.aio.server(options=OPTIONS)
        handler: grpc.RpcMethodHandler[bytes, bytes] = grpc.unary_unary_rpc_method_handler(echo)
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler}),)
        )
        server.add_insecure_port(f"unix://{upstream}")
        await server.start()
        host, port = address.rsplit(":", 1)
        front = TcpFront(FRONT_TOKEN, upstream, max_authenticated=64)
        await front.start(host, int(port))
        print("READY", flush=True)
        await server.wait_for_termination()


def pin_to_bench_cpu() -> None:
    """Run on the CPU `BENCH_CPU` names, when it names one (`_measure.spawn` sets it)."""
    if os.environ.get("BENCH_CPU"):
        os.sched_setaffinity(0, {int(os.environ["BENCH_CPU"])})


def main() -> None:
    kind, address = sys.argv[1], sys.argv[2]
    pin_to_bench_cpu()
    if kind == "raw":
        serve_raw(address)
    elif kind == "grpc-sync":
        serve_grpc_sync(address)
    elif kind == "grpc-aio":
        asyncio.run(serve_grpc_aio(address))
    elif kind == "grpc-aio-fronted":
        asyncio.run(serve_grpc_aio_fronted(address))
    else:
        sys.exit(f"unknown server kind {kind!r}")


if __name__ == "__main__":
    main()
