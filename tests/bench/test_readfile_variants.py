"""B4's ReadFile variants (bench/_readfile_variants.py) do what their rows say: each answers
ReadFile through its own path, not the real one, and the appends it is measured for happen."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from postcompact.v1 import postcompact_pb2 as pb

from bench import _measure as m
from bench._daemon import running_daemon
from bench._readfile_variants import read_log
from bench.b4_transport import _read_call

MODULE = "bench._readfile_variants"
READS = 20


def _reads(tmp: Path, variant: str, *args: str) -> tuple[Path, int]:
    """The daemon of `variant` in `tmp` (short: its socket is in it) after a first ReadFile of
    B4's file and READS re-reads (each with a new mtime): its directory, and the size of its
    answers."""
    (tmp / "d").mkdir(mode=0o700)
    root = tmp / "proj"
    root.mkdir()
    env = {"BENCH_READ_VARIANT": variant}
    with (
        running_daemon(tmp / "d", module=MODULE, env_extra=env, extra_args=args, cpus="0-1") as d,
        grpc.insecure_channel(d.address, options=m.GRPC_OPTIONS) as ch,
    ):
        read, size = _read_call(ch, root)
        for _ in range(READS):
            resp = read()
            assert isinstance(resp, pb.ReadFileResponse)
            assert resp.num_lines == resp.total_lines > 0
            assert not resp.unchanged
            assert resp.ByteSize() == size  # the whole numbered file every time
    return tmp / "d", size


@pytest.fixture
def tmp() -> Iterator[Path]:
    with m.short_tmpdir() as short:
        yield short


def test_least_appends_one_record_per_read_and_keeps_no_state_database(tmp: Path) -> None:
    d, _ = _reads(tmp, "least", "--no-persist")
    records = read_log(d / "state" / "reads.log", 2)
    assert len(records) == READS + 1  # the first read too: every read is the least's own
    path = str(tmp / "proj" / "module.ts")
    assert {tuple(names[1:]) for _, names in records} == {("", path)}
    stamps = [numbers[0] for numbers, _ in records]
    assert stamps == sorted(stamps)
    assert not list(d.rglob("*.db"))


def test_journal_appends_the_moves_sqlite_would_have_written(tmp: Path) -> None:
    d, _ = _reads(tmp, "journal")
    (moves,) = d.rglob("*.db.moves")
    records = read_log(moves, 7)
    # The first read inserts the row (SQLite); a re-read whose activity time is due goes to
    # SQLite too (at most one per second): every other re-read is one appended move.
    assert READS - 3 <= len(records) <= READS
    seqs = [numbers[0] for numbers, _ in records]
    assert seqs == sorted(set(seqs))  # each move takes the next place
    path = str(tmp / "proj" / "module.ts")
    assert {tuple(names[1:]) for _, names in records} == {("", path)}


def test_an_unknown_variant_is_refused_by_name() -> None:
    env = {"BENCH_READ_VARIANT": "nope", "PYTHONPATH": ":".join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-m", MODULE, "serve"],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "BENCH_READ_VARIANT='nope': canned, io, journal or least" in done.stderr


def test_a_torn_record_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00short")
    with pytest.raises(ValueError, match="a bad record at byte 0"):
        read_log(log, 1)
