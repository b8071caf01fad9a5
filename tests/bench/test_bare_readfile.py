"""B4's bare ReadFile server (bench/_bare_readfile.py) does the read work the daemon's ReadFile
does for B4's file: every call re-reads it and answers what the daemon answers, but for the
timestamp (the daemon's default profile stamps the read time, the bare server the file's mtime);
given a database, it commits each read's row before answering."""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from postcompact.v1 import postcompact_pb2 as pb

from bench import _measure as m
from bench._bare_readfile import SERVICE
from bench._daemon import running_daemon
from bench.b4_transport import FILE_TEXT, _bare_read_call, _read_call


@pytest.fixture
def tmp() -> Iterator[Path]:
    with m.short_tmpdir() as short:
        yield short


def _fields(resp: pb.ReadFileResponse) -> pb.ReadFileResponse:
    out = pb.ReadFileResponse()
    out.CopyFrom(resp)
    out.ClearField("timestamp_ms")
    return out


def test_answers_what_the_daemon_answers_on_every_re_read(tmp: Path) -> None:
    root = tmp / "proj"
    root.mkdir()
    (tmp / "d").mkdir(mode=0o700)
    bare_address = f"unix://{tmp}/bare.sock"
    with (
        running_daemon(tmp / "d", cpus="0-1") as d,
        grpc.insecure_channel(d.address, options=m.GRPC_OPTIONS) as d_ch,
        m.spawn([sys.executable, "-m", "bench._bare_readfile", bare_address]),
        grpc.insecure_channel(bare_address, options=m.GRPC_OPTIONS) as bare_ch,
    ):
        read, _ = _read_call(d_ch, root)
        read_bare = _bare_read_call(bare_ch, root)
        path = root / "module.ts"
        for _ in range(5):
            daemon_answer = read()
            assert isinstance(daemon_answer, pb.ReadFileResponse)
            raw = read_bare()
            assert isinstance(raw, bytes)
            bare_answer = pb.ReadFileResponse.FromString(raw)
            assert bare_answer.content == path.read_bytes()
            assert bare_answer.timestamp_ms == path.stat().st_mtime_ns // 1_000_000
            assert _fields(bare_answer) == _fields(daemon_answer)


def test_a_file_the_core_does_not_answer_is_refused_by_name(tmp: Path) -> None:
    binary = tmp / "blob.bin"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    address = f"unix://{tmp}/bare.sock"
    with (
        m.spawn([sys.executable, "-m", "bench._bare_readfile", address]),
        grpc.insecure_channel(address, options=m.GRPC_OPTIONS) as ch,
    ):
        method: grpc.UnaryUnaryMultiCallable[bytes, bytes] = ch.unary_unary(f"/{SERVICE}/ReadFile")
        with pytest.raises(grpc.RpcError) as err:
            method(pb.ReadFileRequest(path=str(binary)).SerializeToString(), timeout=10)
    e: grpc.Call = err.value  # type: ignore[assignment]
    assert e.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert f"the core does not answer {binary}" in str(e.details())


def test_with_a_database_each_read_is_committed_before_its_answer(tmp: Path) -> None:
    root = tmp / "proj"
    root.mkdir()
    path = root / "module.ts"
    path.write_text(FILE_TEXT)
    database = tmp / "state" / "state.db"
    address = f"unix://{tmp}/bare.sock"
    with (
        m.spawn([sys.executable, "-m", "bench._bare_readfile", address, str(database)]),
        grpc.insecure_channel(address, options=m.GRPC_OPTIONS) as ch,
    ):
        read = _bare_read_call(ch, root)  # the first read
        for n in range(2, 6):
            raw = read()
            assert isinstance(raw, bytes)
            lines = pb.ReadFileResponse.FromString(raw).num_lines
            # Committed before the answer: another connection sees the row as of this read.
            with contextlib.closing(sqlite3.connect(database)) as db:
                row = db.execute(
                    "SELECT seq, timestamp_ms, seen_last FROM files WHERE path = ?", (str(path),)
                ).fetchone()
            assert row == (n, path.stat().st_mtime_ns // 1_000_000, lines)
