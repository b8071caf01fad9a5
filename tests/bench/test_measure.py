"""The server-CPU measurement of B4 (bench/_measure.py): the blocks go round the sides forwards
then backwards, and the run time read from /proc is the process's own CPU. No daemon."""

from __future__ import annotations

import os
import subprocess
import threading
import time

from bench import _measure as m


def test_blocks_go_round_the_sides_forwards_then_backwards() -> None:
    """The blocks' order, and each block's CPU read from the side's server process: here a
    sleeping child, which spends none, whatever the calls (run in this process) cost. (This
    process's own figure can even go down: a thread of an earlier test that ends between the two
    reads takes its time with it.)"""
    calls: list[str] = []
    server = subprocess.Popen(["sleep", "60"])
    try:
        time.sleep(0.05)  # past its start-up
        sides = {name: (server.pid, lambda name=name: calls.append(name)) for name in "abc"}
        cycles = m.cpu_interleaved(sides, calls=6, warmup=2, block=2)
    finally:
        server.kill()
        server.wait()
    assert calls[:6] == ["a", "a", "b", "b", "c", "c"]  # the warm-up, side by side
    blocks = [calls[i] for i in range(6, len(calls), 2)]
    assert blocks == ["a", "b", "c", "c", "b", "a", "a", "b", "c"]
    assert all(calls[i] == calls[i + 1] for i in range(6, len(calls), 2))
    assert {name: len(c) for name, c in cycles.items()} == {"a": 3, "b": 3, "c": 3}
    assert all(x == 0 for c in cycles.values() for x in c)


def test_run_time_counts_every_live_thread_of_the_process() -> None:
    """CPU burnt in another thread of this process (alive when read, as a server's threads are)
    shows in `run_time_s` as in the process's own clock (time.process_time: every thread, user
    and system)."""
    burnt, release = threading.Event(), threading.Event()

    def burn() -> None:
        end = time.thread_time() + 0.3
        while time.thread_time() < end:
            pass

    def worker() -> None:
        burn()
        burnt.set()
        release.wait()

    before, cpu_before = m.run_time_s(os.getpid()), time.process_time()
    thread = threading.Thread(target=worker)
    thread.start()
    try:
        burn()
        assert burnt.wait(60)
        ran, cpu = m.run_time_s(os.getpid()) - before, time.process_time() - cpu_before
    finally:
        release.set()
        thread.join()
    assert ran >= 0.6 * 0.95  # both threads' 0.3 s (thread_time ticks at the scheduler's grain)
    assert abs(ran - cpu) <= 0.1 * cpu
