"""Recovering across a daemon restart or overload: which calls may be retried, and how long
(docs/clients.md).

An error that carries a `google.rpc.RetryInfo` (the daemon's OVERLOADED) is retried for any
call, after at least the delay it names: the daemon refused it before applying anything. No
other daemon answer is retried (permanent limits such as TOO_MANY_SESSIONS carry none). Besides
those, only a transport failure is retried: UNAVAILABLE or CANCELLED that carries no daemon
reason (a live daemon's UNAVAILABLE, e.g. STATE_WRITE_FAILED, is an answer and is never
retried). An idempotent call (`is_idempotent`) is retried whatever happened to the connection;
any other call only when gRPC reports that the connection could not be established
(`not_sent`): then the request was never written, so the daemon cannot have acted on it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc

from postcompact_client._errors import ClientReason, DaemonUnavailable, PostcompactError

# Calls that change nothing, or whose repetition leaves the same state and the same answer.
ALWAYS_IDEMPOTENT = frozenset(
    {
        "GetServerInfo",
        "GetStats",
        "ListSessions",
        "CheckWrite",
        "CheckStale",
        "PreviewCompact",
        "SetPlan",
        "SetMode",
        "UpsertTask",
        "EstimateTokens",
        "EstimateTokensBatch",
        "CountTokens",
        "CountTokensBatch",
        "TruncateTokens",
        "TruncateTokensBatch",
    }
)

# gRPC core's message when no connection could be made (connect refused, no socket file...).
_NOT_SENT_MARKERS = ("failed to connect to all addresses",)


def is_idempotent(method: str, request: Any) -> bool:
    """True when repeating `request` after the daemon may already have applied it is harmless."""
    if method in ALWAYS_IDEMPOTENT:
        return True
    if method == "OpenSession":  # resumes the named session; an empty id would make a second one
        return bool(getattr(request, "session_id", ""))
    conditional = method == "RecordWrite" and request is not None
    if conditional and request.HasField("if_entry_timestamp_ms"):
        return False  # a repeat of one that was recorded finds its own entry: WRITE_CONFLICT
    if method in ("RecordRead", "RecordWrite"):  # 0 = "now"/"stat": a retry would store another
        return bool(getattr(request, "timestamp_ms", 0))
    if method == "RecordSkill":
        return bool(getattr(request, "invoked_at_ms", 0))
    # ReadFile (a repeat answers the "unchanged" stub), Compact, SetCatalog (the delta is
    # announced once), StartAgent, EndAgent, MergeFileState, CloseSession: only when not sent.
    return False


def is_transport_failure(err: PostcompactError) -> bool:
    """UNAVAILABLE, or CANCELLED (gRPC's answer to a call that reached a daemon as it stopped;
    this client never cancels a call itself), with no daemon reason: the daemon went away. Every
    answer of a live daemon carries a reason."""
    return err.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED) and not err.reason


def not_sent(details: str) -> bool:
    """True when the failure happened before a connection existed: nothing reached the daemon."""
    return any(m in details for m in _NOT_SENT_MARKERS)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries with exponential backoff and jitter.

    A failed attempt waits `initial_backoff` s, then `multiplier` times more each time, at most
    `max_backoff`, each wait scaled by a random factor in [1 - jitter, 1 + jitter]. Retrying stops
    after `max_attempts` attempts or once `max_elapsed` s have passed since the first one; the
    call then fails with DaemonUnavailable (reason DAEMON_UNAVAILABLE). `RetryPolicy.none()`
    turns retrying off.
    """

    max_elapsed: float = 10.0
    max_attempts: int = 40
    initial_backoff: float = 0.05
    max_backoff: float = 1.0
    multiplier: float = 2.0
    jitter: float = 0.2

    @classmethod
    def none(cls) -> RetryPolicy:
        return cls(max_elapsed=0.0, max_attempts=1)

    def backoff(self, retry: int) -> float:
        """The wait before retry number `retry` (1-based)."""
        base = min(self.max_backoff, self.initial_backoff * self.multiplier ** (retry - 1))
        return max(0.0, base * (1.0 + self.jitter * (2.0 * random.random() - 1.0)))


DEFAULT_RETRY = RetryPolicy()


class Attempts:
    """The retry state of one call: `after_failure(err)` raises the error to report, or returns
    how long to wait before the next attempt."""

    def __init__(
        self,
        policy: RetryPolicy,
        address: str,
        method: str,
        request: Any,
        note: Callable[[], str] | None = None,
    ):
        self.policy = policy
        self.address = address
        self.method = method
        self.request = request
        self.note = note  # appended to DAEMON_UNAVAILABLE: why auto-start did not start it
        self.start = time.monotonic()
        self.count = 0  # failed attempts so far

    def after_failure(self, err: PostcompactError) -> float:
        self.count += 1
        if err.retry_after is not None:
            return self._overloaded(err, err.retry_after)
        if not is_transport_failure(err):
            raise err.named()
        if not (is_idempotent(self.method, self.request) or not_sent(err.message)):
            lost = PostcompactError(
                err.code,
                f"the connection to the postcompact daemon at {self.address} failed during "
                f"{self.method}, which is not retried: the daemon may have applied it "
                f"(error: {err.message})",
                ClientReason.CONNECTION_LOST,
                {"address": self.address},
            )
            lost.transport = True
            raise lost
        elapsed = time.monotonic() - self.start
        remaining = self.policy.max_elapsed - elapsed
        if self.count >= self.policy.max_attempts or remaining <= 0:
            note = self.note() if self.note is not None else ""
            raise DaemonUnavailable(
                f"no postcompact daemon answered at {self.address}: {self.method} failed "
                f"{self.count} time(s) over {elapsed:.1f}s (last error: {err.message})"
                + (f"; auto-start: {note}" if note else ""),
                address=self.address,
                attempts=self.count,
                elapsed_s=elapsed,
            )
        return min(self.policy.backoff(self.count), remaining)

    def _overloaded(self, err: PostcompactError, delay: float) -> float:
        """The wait before retrying a call the daemon refused with a RetryInfo; `err` itself
        once the policy's attempts or time are spent."""
        remaining = self.policy.max_elapsed - (time.monotonic() - self.start)
        if self.count >= self.policy.max_attempts or remaining <= 0:
            raise err
        return min(max(delay, self.policy.backoff(self.count)), remaining)
