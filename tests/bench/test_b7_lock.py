"""B7's lock experiment (bench/_b7_lock.py): the pings of a window are the ones sent in it, each
timed from when it was sent, failures counted apart; the run without the lock measures the
same nominal window. No daemon, no server, no timings."""

from __future__ import annotations

import time

import pytest

from bench._b7_lock import LockWindow, Pinger, TableLock


def test_a_window_holds_the_pings_sent_in_it() -> None:
    pinger = Pinger("unix:///nonexistent/pcbench.sock")  # never used: no call is made
    try:
        pinger.samples = [
            (0.5, 0.001),  # before the window
            (1.0, 0.002),
            (1.5, None),  # failed
            *((1.6 + i * 0.01, 0.003) for i in range(96)),
            (2.6, 4.8),  # stalled: sent in the window, answered long after it
            (2.62, 4.9),
            (3.5, 0.001),  # after the window
        ]
        p = pinger.window(1.0, 3.0)
    finally:
        pinger.channel.close()
    assert p.pings == 100
    assert p.failed == 1
    assert p.p50_ms == pytest.approx(3.0)
    assert p.max_ms == pytest.approx(4900.0)
    assert p.p99_ms == pytest.approx(4800.0)


def test_without_the_lock_the_window_is_the_nominal_one() -> None:
    lock = TableLock(None, at=5.0, seconds=2.0)
    before = time.perf_counter()
    lock.start()
    lock.join()  # no thread: returns at once
    assert before + 5.0 <= lock.held_from <= time.perf_counter() + 5.0
    assert lock.held_to - lock.held_from == pytest.approx(2.0)
    assert not lock.error
    assert not LockWindow(False, lock).locked
