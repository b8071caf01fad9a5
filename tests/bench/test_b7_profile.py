"""B7's reading of py-spy's output and of /proc (bench/b7_agents.py): what each kind of
loop-thread stack counts as, GIL held or not, and the thread groups. No daemon, no timings."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from bench import b7_agents as b7

LOOP = [
    "thread (100): MainThread",
    "<module> (postcompact/__main__.py:7)",
    "serve (postcompact/server.py:521)",
    "BaseEventLoop.run_forever (asyncio/base_events.py:607)",
    "BaseEventLoop._run_once (asyncio/base_events.py:1922)",
]
CYGRPC = "0x7f00 (grpc/_cython/cygrpc.cpython-311-x86_64-linux-gnu.so)"
HANDLER = [
    *LOOP,
    "Handle._run (asyncio/events.py:80)",
    CYGRPC,
    "guard.<locals>.wrapper (postcompact/errmap.py:163)",
]
CORE = "(postcompact/_core.abi3.so)"


def rpc(name: str, *leaf: str) -> list[str]:
    return [*HANDLER, f"Servicer.{name} (postcompact/server.py:150)", *leaf]


@pytest.mark.parametrize(
    ("frames", "expected"),
    [
        (
            rpc(
                "ReadFile",
                "read_text (postcompact/diskaccess.py:311)",
                f"_core::py::py_fsutil::__pyfunction_read_whole::h27e04e95fe7d203e {CORE}",
                f"_core::diskread::Io::read::h9cd237c36dab2a44 {CORE}",
            ),
            "Rust core, GIL released (reads, numbering, realpath, token counts)",
        ),
        (
            rpc("ReadFile", f"_core::py::py_cache::FileState::__pymethod___new____::h1 {CORE}"),
            "Rust core, GIL held (cache, argument conversion)",
        ),
        (
            rpc(
                "RecordWrite",
                "SqliteStore.tx (postcompact/persist/sqlstore.py:227)",
                "_pysqlite_query_execute (cursor.c:850)",
                "stmt_step (cursor.c:520)",
                "0x7f01 (libsqlite3.so.0.8.6)",
            ),
            "SQLite sqlite3_step (write-through commits; GIL released)",
        ),
        (
            rpc("RecordWrite", "bind_param (cursor.c:600)", "0x7f01 (libsqlite3.so.0.8.6)"),
            "SQLite, GIL held (binding parameters)",
        ),
        (
            rpc(
                "RecordRead",
                "content_digest (postcompact/state/model.py:30)",
                "0x7 (libcrypto.so.3)",
            ),
            "SHA-256 of contents (hashlib; GIL released)",
        ),
        (rpc("Compact", "0x7f02 (google/_upb/_message.abi3.so)"), "protobuf (upb)"),
        (
            rpc("Compact", "js_json_stringify (postcompact/render.py:580)"),
            "postcompact Python (handlers, pipeline, rendering, store)",
        ),
        (
            [*LOOP, "Handle._run (asyncio/events.py:80)", CYGRPC, CYGRPC],
            "gRPC aio (Cython, C-core glue)",
        ),
        (
            [
                *LOOP,
                "EpollSelector.select (selectors.py:468)",
                "select_epoll_poll_impl (selectmodule.c:1598)",
            ],
            "epoll_wait (the loop's poll; GIL released)",
        ),
        # postcompact's own frames under the loop (`serve`) do not make a loop turn postcompact's.
        ([*LOOP, "BaseEventLoop.create_task (asyncio/base_events.py:436)"], "asyncio scheduling"),
    ],
)
def test_category(frames: list[str], expected: str) -> None:
    assert b7.category(frames) == expected
    assert expected in b7.CATEGORIES


def test_rpc_of() -> None:
    assert (
        b7.rpc_of(rpc("CheckWrite", "mtime_ms (postcompact/service/files.py:98)")) == "CheckWrite"
    )
    assert b7.rpc_of([*LOOP, "Handle._run (asyncio/events.py:80)", CYGRPC]) == ""


def test_profile_counts_only_the_loop_thread(tmp_path: Path) -> None:
    worker = ["thread (101): postcompact-worker_0", "_worker (concurrent/futures/thread.py:81)"]
    free = rpc("ReadFile", f"_core::textops::number_lines::h3 {CORE}")
    held = rpc("ReadFile", "resolve_path (postcompact/service/files.py:124)")
    raw = tmp_path / "raw.txt"
    raw.write_text(
        f"{';'.join(free)} 3\n{';'.join(held)} 1\n{';'.join(worker)} 50\nnot a sample line\n"
    )
    p = b7.Profile.read(raw)
    assert p.samples == 4
    assert p.by_rpc["ReadFile"] == 4
    assert p.free_by_rpc["ReadFile"] == 3
    assert p.free == pytest.approx(0.75)


def test_amdahl() -> None:
    assert b7.amdahl(0.0, 16) == pytest.approx(1.0)
    assert b7.amdahl(0.5, 2) == pytest.approx(1 / 0.75)
    assert b7.amdahl(1.0, 16) == pytest.approx(16.0)


def test_thread_groups_of_this_process() -> None:
    done = threading.Event()
    t = threading.Thread(target=done.wait)
    t.start()
    try:
        groups = b7.thread_cpu(os.getpid())
    finally:
        done.set()
        t.join()
    assert groups[os.getpid()][0] == "loop"  # the main thread
    assert {g for g, _ in groups.values()} <= set(b7.GROUPS)
    assert len(groups) >= 2
    assert b7.rss_mib(os.getpid()) > 0


@pytest.mark.parametrize(
    ("two", "pool", "pays"),
    [
        (1.27, 0.91, False),  # the unpinned daemon's own gain is no reason to change it
        (1.05, 1.30, True),  # the pool beats the daemon as it ships on the same cores
        (1.27, 1.40, False),  # 1.10x over it: not enough
        (1.00, 1.20, True),
        (None, 1.50, False),  # not measured: nothing says threads pay
        (1.30, None, False),
    ],
)
def test_threads_pay_only_over_the_daemon_as_it_ships(
    two: float | None, pool: float | None, pays: bool
) -> None:
    assert b7.threads_would_pay(two, pool) is pays
