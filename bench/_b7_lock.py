"""B7's lock experiment (bench/b7_agents.py): while agents work against a daemon on PostgreSQL,
a database session of its own holds a lock on one of the daemon's tables for a few seconds, and
a pinger measures how long the daemon takes to answer a trivial call meanwhile.

The pinger is open loop: a GetServerInfo (the soak's ping) every PING_EVERY seconds on a channel
of its own, each sent at its scheduled time whether or not the previous ones were answered, and
timed from then: a daemon that stalls for 5 s delays every ping sent during those 5 s, and the
pings' percentiles over the window show it (a closed loop would send one ping per stall and
hide it). Nothing here depends on how the daemon runs its store: the same run measures a daemon
whose store waits on the event loop and one whose store runs on threads.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
from postcompact.v1 import postcompact_pb2 as pb
from postcompact.v1 import postcompact_pb2_grpc as pbg

from bench.report import percentile

PING_EVERY = 0.02  # seconds between pings
PING_TIMEOUT = 30.0  # a ping not answered by then counts as failed
LOCK_TABLE = "files"  # every call that records a read or a write inserts into it
LOCK_MODE = "ACCESS EXCLUSIVE"
LOCK_AT = 5.0  # seconds into the measured window
LOCK_SECONDS = 5.0
LOCK_WINDOW = LOCK_AT + LOCK_SECONDS + 5.0  # the measured window of each run


class Pinger:
    """GetServerInfo every PING_EVERY s to `address`, open loop (see the module docstring):
    `samples` holds (sent at, perf_counter; latency in s, or None when the ping failed)."""

    def __init__(self, address: str, every: float = PING_EVERY) -> None:
        self.every = every
        self.channel = grpc.insecure_channel(address)
        self.stub = pbg.PostcompactServiceStub(self.channel)
        self.samples: list[tuple[float, float | None]] = []
        self._lock = threading.Lock()
        self._pending: set[Any] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        req = pb.GetServerInfoRequest()
        due = time.perf_counter()
        while not self._stop.is_set():
            wait = due - time.perf_counter()
            if wait > 0 and self._stop.wait(wait):
                break
            sent = time.perf_counter()
            fut = self.stub.GetServerInfo.future(req, timeout=PING_TIMEOUT)
            with self._lock:
                self._pending.add(fut)
            fut.add_done_callback(functools.partial(self._done, sent=sent))
            due += self.every
            if due < time.perf_counter() - self.every:  # this thread fell behind: no burst
                due = time.perf_counter()

    def _done(self, fut: Any, *, sent: float) -> None:
        took = time.perf_counter() - sent
        ok = fut.exception() is None
        with self._lock:
            self._pending.discard(fut)
            self.samples.append((sent, took if ok else None))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop sending, wait for the answers still due (at most PING_TIMEOUT), close."""
        self._stop.set()
        self._thread.join()
        deadline = time.monotonic() + PING_TIMEOUT + 5
        while time.monotonic() < deadline:
            with self._lock:
                if not self._pending:
                    break
            time.sleep(0.01)
        self.channel.close()

    def window(self, start: float, end: float) -> PingStats:
        """The pings sent between perf_counter times `start` and `end`."""
        with self._lock:
            inside = [lat for sent, lat in self.samples if start <= sent <= end]
        ok = sorted(x * 1e3 for x in inside if x is not None)
        return PingStats(
            pings=len(inside),
            failed=len(inside) - len(ok),
            p50_ms=percentile(ok, 0.50),
            p99_ms=percentile(ok, 0.99),
            max_ms=ok[-1] if ok else float("nan"),
        )


@dataclass
class PingStats:
    pings: int
    failed: int
    p50_ms: float
    p99_ms: float
    max_ms: float


@dataclass
class TableLock:
    """`LOCK TABLE {table} IN {mode} MODE` held for `seconds` from `at` seconds after `start()`
    by a database session of its own (`url`); with `url` None nothing is locked and the window
    is the nominal one (the run without the lock). Times are perf_counter's."""

    url: str | None
    at: float = LOCK_AT
    seconds: float = LOCK_SECONDS
    table: str = LOCK_TABLE
    mode: str = LOCK_MODE
    asked: float = float("nan")  # when the lock was asked for
    held_from: float = float("nan")  # when it was granted (the window's start)
    held_to: float = float("nan")  # when it was released (the window's end)
    error: str = ""
    _thread: threading.Thread | None = field(default=None, repr=False)

    def start(self) -> None:
        t0 = time.perf_counter()
        if self.url is None:
            self.asked = self.held_from = t0 + self.at
            self.held_to = self.held_from + self.seconds
            return
        self._thread = threading.Thread(target=self._run, args=(t0,), daemon=True)
        self._thread.start()

    def _run(self, t0: float) -> None:
        import psycopg

        assert self.url is not None
        try:
            with psycopg.connect(self.url, autocommit=True) as conn:
                time.sleep(max(0.0, t0 + self.at - time.perf_counter()))
                self.asked = time.perf_counter()
                with conn.transaction():
                    conn.execute(f"LOCK TABLE {self.table} IN {self.mode} MODE")
                    self.held_from = time.perf_counter()
                    time.sleep(self.seconds)
                self.held_to = time.perf_counter()
        except psycopg.Error as exc:
            self.error = f"the lock: {exc}"

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join(self.at + self.seconds + 120)


@dataclass
class LockWindow:
    """What `during` measured in one run: the lock (or the nominal window) and the pings."""

    locked: bool
    lock: TableLock
    pinger: Pinger | None = None

    def pings(self) -> PingStats:
        assert self.pinger is not None
        return self.pinger.window(self.lock.held_from, self.lock.held_to)

    @contextlib.contextmanager
    def during(self, addresses: Any) -> Iterator[None]:
        """b7_agents.run_step's `during`: the pinger and the lock over the measured window."""
        self.pinger = Pinger(addresses[0])
        self.pinger.start()
        self.lock.start()
        try:
            yield
        finally:
            self.lock.join()
            self.pinger.stop()
