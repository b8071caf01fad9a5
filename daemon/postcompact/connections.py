"""What the listeners allow each connection, and the daemon's file descriptors
(docs/reliability.md, "Connections"; docs/security.md).

- Every connection must finish its handshake within `HANDSHAKE_TIMEOUT_MS`; one that sends
  nothing is closed.
- The daemon pings each connection every `KEEPALIVE_TIME_MS` and closes one that does not answer
  within `KEEPALIVE_TIMEOUT_MS`: a stopped (SIGSTOP) or vanished client no longer pins the
  answers it never reads.
- A connection with no call for `UNIX_IDLE_MS` (Unix socket) or `TCP_IDLE_MS` (TCP) is closed
  (GOAWAY); clients reconnect on their next call.
- TCP connections are accepted by the daemon's front (tcpfront.py), which bounds the
  authenticated ones (`limits.max_tcp_connections`) and the others apart, so TCP clients (which
  may be another user's) can never take the descriptors the owner's Unix socket needs nor the
  owner's TCP slots. The gated gRPC server behind it has no cap of its own: only the front
  reaches it, and connections the front has just closed would count against one until gRPC
  noticed, refusing the owner's next one under a flood.
- At start the soft RLIMIT_NOFILE is raised to the hard limit, and `watch_descriptors` logs a
  warning while more than `DESCRIPTOR_WARN` of them are in use.
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
from typing import Any

__all__ = [
    "HANDSHAKE_TIMEOUT_MS",
    "KEEPALIVE_TIMEOUT_MS",
    "KEEPALIVE_TIME_MS",
    "TCP_IDLE_MS",
    "UNIX_IDLE_MS",
    "listener_options",
    "raise_descriptor_limit",
    "watch_descriptors",
]

log = logging.getLogger("postcompact.connections")

HANDSHAKE_TIMEOUT_MS = 5_000
KEEPALIVE_TIME_MS = 4_000
KEEPALIVE_TIMEOUT_MS = 5_000
UNIX_IDLE_MS = 60_000
TCP_IDLE_MS = 5_000
DESCRIPTOR_WARN = 0.8  # of the soft limit
WATCH_INTERVAL_S = 2.0
_WARN_EVERY_S = 60.0


def listener_options(*, tcp: bool) -> list[tuple[str, Any]]:
    """The gRPC server arguments of one listener (the message limits are added by the caller)."""
    options: list[tuple[str, Any]] = [
        ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_MS),
        ("grpc.keepalive_time_ms", KEEPALIVE_TIME_MS),
        ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
        ("grpc.http2.ping_timeout_ms", KEEPALIVE_TIMEOUT_MS),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),  # keep pinging a client that sends nothing
        ("grpc.max_connection_idle_ms", TCP_IDLE_MS if tcp else UNIX_IDLE_MS),
    ]
    return options


def raise_descriptor_limit() -> tuple[int, int]:
    """Raise the soft RLIMIT_NOFILE to the hard limit; the limits now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:
            log.warning("could not raise the descriptor limit", extra={"error": str(exc)})
    return soft, hard


def _open_descriptors() -> int | None:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return None


async def watch_descriptors(limit: int) -> None:
    """Log a warning (at most once a minute) while descriptors run short: the sign of a flood of
    connections, which the handshake and idle timeouts (and, over TCP, the front's bounds) then
    deal with."""
    loop = asyncio.get_running_loop()
    warned = -_WARN_EVERY_S
    while True:
        await asyncio.sleep(WATCH_INTERVAL_S)
        used = _open_descriptors()
        if used is None:
            return
        if used > DESCRIPTOR_WARN * limit and loop.time() - warned >= _WARN_EVERY_S:
            warned = loop.time()
            log.warning(
                "file descriptors running short: connections that finish no handshake within "
                f"{HANDSHAKE_TIMEOUT_MS // 1000}s or stay idle are being closed",
                extra={"descriptors": used, "limit": limit},
            )
