"""B4's in-process ReadFile (bench/_readfile_cold.py) runs the real handler on the SQLite store,
every call a re-read answered by the core, under each cache mode; its rows are per warm."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bench import _readfile_cold
from bench.b4_transport import FILE_TEXT


def test_each_mode_measures_real_reads(tmp_path: Path) -> None:
    cpu = _readfile_cold.measure(tmp_path, FILE_TEXT, calls=20, block=10)
    assert list(cpu) == list(_readfile_cold.FILLS)
    assert all(us > 0 for us in cpu.values())
    # Each call re-read the file and recorded it: the store holds its row.
    with sqlite3.connect(tmp_path / "cold-state.db") as db:
        stored = db.execute("SELECT path FROM files WHERE session_id = 'b4-cold'").fetchall()
    assert stored == [(str(tmp_path / "cold-proj" / "module.ts"),)]
    rows = _readfile_cold.rows(cpu)
    assert rows[0][2] == 1.0
    assert [r[0] for r in rows] == list(_readfile_cold.FILLS)
    warm, evicted = cpu[next(iter(cpu))], cpu[list(cpu)[-1]]
    assert rows[-1][1:] == [evicted, pytest.approx(evicted / warm)]
