"""`python -m bench._b7_offload serve ...`: the daemon with its file reads always on the worker
pool — B7's experiment of what a second core buys when the GIL-free work leaves the event loop.

Two changes, both to module globals the daemon reads at call time: `diskaccess.off_loop` never
reads inline (a ReadFile's read, numbering, rendering and response, and a small Compact's
re-reads, all go to a worker thread), and a Compact's re-reads are always split over
`PARALLEL_READ_WORKERS` threads (normally only from 256 KB held). Nothing else differs.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import TypeVar

from postcompact import cli, diskaccess
from postcompact.restore import file_step as restore_files

_T = TypeVar("_T")


async def _on_pool(read: Callable[[bool], _T]) -> _T:
    return await asyncio.to_thread(read, False)


if __name__ == "__main__":
    diskaccess.off_loop = _on_pool
    restore_files.PARALLEL_READ_BYTES = 0
    sys.exit(cli.main(sys.argv[1:]))
