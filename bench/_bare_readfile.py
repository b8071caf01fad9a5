"""`python -m bench._bare_readfile ADDRESS [DATABASE]`: a bare grpc.aio server whose ReadFile only
reads the requested file whole and answers it through the core (`core.read_file`, the one call
the daemon's ReadFile makes), as bytes, with none of the daemon around it: no
session, path resolution, deny rules or roots, no state, no wrappers. B4 measures its CPU per call
as the least a ReadFile served by Python's grpc.aio can cost.

With DATABASE, each read is also recorded before it is answered the way the daemon's store
records a re-read: the read's row rewritten in one transaction (the store's own schema, opened as
the store opens it — WAL, `synchronous = NORMAL` — and its own statement, `_MOVE_FILE`), on the
event loop as the daemon's write-through runs: the least *durable* ReadFile over grpc.aio.
Prints READY once listening.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from pathlib import Path

import grpc
from postcompact import core, diskaccess, render
from postcompact.config import DEFAULT_MAX_MESSAGE_BYTES
from postcompact.persist import sqlstore
from postcompact.persist.schema import open_checked
from postcompact.restore.policy import Policy
from postcompact.v1 import postcompact_pb2 as pb

from bench._servers import OPTIONS, pin_to_bench_cpu

SERVICE = "postcompact.v1.PostcompactService"
SESSION, AGENT = "b4-bare", "main"


def answer(path: str) -> tuple[bytes, int, int]:
    """The serialised ReadFileResponse for the whole of `path`, as the daemon's ReadFile builds
    it under the default policy (without the malware reminder), the file's mtime in ms and its
    lines; ValueError when the core refuses it (the benchmark's file must be a small text)."""
    spec = core.ReadSpec(
        real=path,
        binary_name=diskaccess.binary_name(path),
        path=path,
        max_answer=DEFAULT_MAX_MESSAGE_BYTES,
    )
    policy = Policy()
    plan = core.ReadPlan(
        templates=render.file_templates(render.DEFAULT_TEMPLATES),
        malware=False,
        max_tokens=policy.max_read_tokens,
        max_bytes=policy.max_file_size_bytes,
        sniff_bytes=diskaccess.SNIFF_BYTES,
        exact=False,
        encoding=policy.encoding,
        api_units=None,
        page=False,
    )
    res = core.read_file(spec, plan)
    if not isinstance(res, core.ReadAnswer):
        raise ValueError(f"the core does not answer {path}: {res!r}")
    return res.wire, res.mtime_ns // 1_000_000, res.num_lines


class Record:
    """Each read's row rewritten in one committed transaction, as the store does for a re-read."""

    def __init__(self, database: Path) -> None:
        self.conn: sqlite3.Connection = open_checked(database)
        self.seq = 0
        self.paths: set[str] = set()

    def read(self, path: str, mtime_ms: int, num_lines: int) -> None:
        if path not in self.paths:  # the first read's row (the daemon inserts it once too)
            self.conn.execute(
                "INSERT OR IGNORE INTO files (session_id, agent_id, path, seq, timestamp_ms, "
                "partial_view, content_sha256, content_len) VALUES (?, ?, ?, 0, 0, 0, ?, 0)",
                (SESSION, AGENT, path, bytes(32)),
            )
            self.paths.add(path)
        self.seq += 1
        self.conn.execute("BEGIN")
        self.conn.execute(
            sqlstore._MOVE_FILE,
            (self.seq, mtime_ms, mtime_ms, mtime_ms, 1, num_lines, 0, SESSION, AGENT, path),
        )
        self.conn.execute("COMMIT")


async def serve(address: str, record: Record | None) -> None:
    async def read_file(
        req: pb.ReadFileRequest, context: grpc.aio.ServicerContext[pb.ReadFileRequest, bytes]
    ) -> bytes:
        try:
            wire, mtime_ms, num_lines = answer(req.path)
        except ValueError as exc:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
            raise  # pragma: no cover  (abort raises)
        if record is not None:
            record.read(req.path, mtime_ms, num_lines)
        return wire

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
    pin_to_bench_cpu()
    record = Record(Path(sys.argv[2])) if len(sys.argv) > 2 else None
    asyncio.run(serve(sys.argv[1], record))


if __name__ == "__main__":
    main()
