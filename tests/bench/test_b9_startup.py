"""B9 (bench/b9_startup.py) at a tiny N: its seed is what the daemon's row checks accept (`state
check` finds nothing to quarantine) and its files verify at load; a start-up is measured on the
seeded database; the SQLite seed is cached. On PostgreSQL too (marked `postgresql`, run by `make
test-postgres`, against a throwaway cluster given to the benchmark as BENCH_PG_URL would be).
No timings are asserted, and nothing about what start-up loads (issue 39 changes it): only that
a stored session opens and its file is known unchanged."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import b9_startup as b9
from bench._pg import PgServer, PgUnavailable
from tests.pg_cluster import Cluster, ClusterError

N = 20


def state_check(url: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "postcompact", "state", "check", "--state-url", url],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def check_counts(report: str) -> None:
    rows = dict(line.split(None, 1) for line in report.splitlines()[1:] if line.strip())
    assert rows["sessions"].strip() == str(N)
    assert rows["agents"].strip() == str(N)
    assert rows["files"].strip() == str(N * b9.FILES_PER_SESSION)
    assert "quarantine" not in report


def check_point(point: b9.Point) -> None:
    (run,) = point.runs
    assert run.seconds > 0
    assert run.hwm_mib > 0
    assert 0 <= run.sessions <= N
    assert run.first_open_ms is not None
    assert run.verified is True  # the stored digest matched the file on disk


@pytest.fixture
def project(tmp_path: Path) -> b9.Project:
    return b9.write_project(tmp_path / "project")


def test_sqlite_seed_passes_the_row_checks_and_a_start_up_is_measured(
    tmp_path: Path, project: b9.Project
) -> None:
    cache = tmp_path / "cache"
    seed = b9.sqlite_seed(N, project, cache)
    check_counts(state_check(f"sqlite://{seed}"))
    made = seed.stat().st_mtime_ns
    check_point(b9.measure_sqlite(N, project, 1, cache))
    assert b9.sqlite_seed(N, project, cache) == seed  # cached, not seeded again
    assert seed.stat().st_mtime_ns == made  # the runs used copies

    empty = b9.measure_sqlite(0, project, 1, cache)
    (run,) = empty.runs
    assert run.sessions == 0
    assert run.first_open_ms is None


def test_the_project_is_written_once() -> None:
    assert b9._content(0) == b9._content(0)
    assert len({b9._content(i) for i in range(b9.PROJECT_FILES)}) == b9.PROJECT_FILES


def test_counts_take_the_million_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(b9.MILLION_ENV, raising=False)
    assert b9.counts() == (0, *b9.COUNTS)
    monkeypatch.setenv(b9.MILLION_ENV, "1")
    assert b9.counts()[-1] == b9.MILLION


def test_a_server_elsewhere_is_refused() -> None:
    for url in (
        "postgresql://db.example.com/x",
        "postgresql:///x?host=10.0.0.1",
        "postgresql:///x",
    ):
        with pytest.raises(PgUnavailable):
            PgServer(url).start()


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[PgServer]:
    try:
        cluster = Cluster(fsync=False).start()
    except ClusterError as exc:
        pytest.fail(f"the PostgreSQL cluster for the test did not start: {exc}", pytrace=False)
    try:
        yield PgServer(cluster.url("postgres")).start()
    finally:
        cluster.stop()


@pytest.mark.postgresql
def test_postgres_seed_passes_the_row_checks_and_a_start_up_is_measured(
    pg: PgServer, project: b9.Project
) -> None:
    template = b9.pg_template(pg, N, project)
    check_counts(state_check(pg.url(template)))
    check_point(b9.measure_pg(pg, N, project, 1))
    assert b9.pg_template(pg, N, project) == template  # kept on the server, not seeded again
    with pg.admin() as conn:
        left = conn.execute("SELECT count(*) FROM pg_database WHERE datname LIKE 'pcbench_run%'")
        assert left.fetchone() == (0,)  # each run's copy dropped
