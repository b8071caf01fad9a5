"""The worker threads that take heavy work off the event loop (reads, hashing, token counts,
serialising large answers, transcript parsing): asyncio's default executor, replaced at start.

They run at a lower CPU priority than the event loop (`WORKER_NICE`): on a machine whose cores
are all busy with reads, the loop thread — which answers every other call — is still scheduled
first, so a burst of heavy calls does not delay a light one (docs/reliability.md). Their heavy
parts run in the Rust core without the GIL, so a worker waiting for the CPU does not hold up
the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["WORKER_NICE", "install"]

WORKER_NICE = 10


def _lower_priority() -> None:
    with contextlib.suppress(OSError, AttributeError):  # Linux: priority is per thread
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WORKER_NICE)


def install(loop: asyncio.AbstractEventLoop) -> ThreadPoolExecutor:
    """Make the loop's default executor a pool of lower-priority threads (asyncio's own size)."""
    workers = min(32, (os.cpu_count() or 1) + 4)
    pool = ThreadPoolExecutor(workers, "postcompact-worker", initializer=_lower_priority)
    loop.set_default_executor(pool)
    return pool
