"""`python -m bench._bare_readfile ADDRESS`: a bare grpc.aio server whose ReadFile only reads the
requested file whole and answers it through the core (`core.read_answer`, the one call the
daemon's ReadFile makes for such a file), as bytes, with none of the daemon around it: no session,
path resolution, deny rules or roots, no state, no store, no wrappers. B4 measures its CPU per call
as the least a ReadFile served by Python's grpc.aio can cost. Prints READY once listening.
"""

from __future__ import annotations

import asyncio
import os
import sys

import grpc
from postcompact import core, fileread
from postcompact.config import DEFAULT_MAX_MESSAGE_BYTES
from postcompact.restore.policy import Policy
from postcompact.v1 import postcompact_pb2 as pb

from bench._servers import OPTIONS

SERVICE = "postcompact.v1.PostcompactService"


def answer(path: str) -> bytes:
    """The serialised ReadFileResponse for the whole of `path`, as the daemon's core path builds
    it under the default policy; ValueError when the core would hand the read to the general
    path (the benchmark's file must be plain UTF-8 text)."""
    res = core.read_answer(
        path,
        fileread.binary_name(path),
        1,
        None,
        path,
        "",
        None,
        Policy().max_file_size_bytes,
        fileread.SNIFF_BYTES,
        None,
        DEFAULT_MAX_MESSAGE_BYTES,
    )
    if isinstance(res, str):
        raise ValueError(f"the core does not answer {path}: {res}")
    return res[0]


async def serve(address: str) -> None:
    async def read_file(
        req: pb.ReadFileRequest, context: grpc.aio.ServicerContext[pb.ReadFileRequest, bytes]
    ) -> bytes:
        try:
            return answer(req.path)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
            raise  # pragma: no cover  (abort raises)

    server = grpc.aio.server(options=OPTIONS)
    handler: grpc.RpcMethodHandler[pb.ReadFileRequest, bytes] = grpc.unary_unary_rpc_method_handler(
        read_file, request_deserializer=pb.ReadFileRequest.FromString
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE, {"ReadFile": handler}),)
    )
    server.add_insecure_port(address)
    await server.start()
    print("READY", flush=True)
    await server.wait_for_termination()


def main() -> None:
    if os.environ.get("BENCH_CPU"):
        os.sched_setaffinity(0, {int(os.environ["BENCH_CPU"])})
    asyncio.run(serve(sys.argv[1]))


if __name__ == "__main__":
    main()
