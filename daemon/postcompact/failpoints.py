"""Failpoints: named places where a test can hold the daemon's work, to prove a mechanism without a
clock (docs/reliability.md, "How the limits are tested").

Off unless the daemon is started with `POSTCOMPACT_FAILPOINTS`, a `;`-separated list of
`name=hold:PATH` or `name=gil:PATH`. A thread that reaches a held failpoint appends a line (its
process id and thread id) to `PATH.reached` and then blocks until `PATH` exists (the test creates
it to release the hold). Holding is only ever done in worker threads; a test that holds the
event loop instead sees its own ping time out, which is what such a test proves.

`gil:PATH` holds the way one long C call does (`json.loads` of a multi-megabyte line): it blocks
in a single `read(2)` of the FIFO `PATH.fifo` made with the GIL held, so no other thread of that
process runs until the test releases it (`PATH` created, then a byte written to the FIFO).
Whether the daemon still answers then tells which process holds that GIL.

Names: `tokens.worker` (a single token call off the loop), `readfile.worker` (ReadFile's read),
`hooks.run` (a session-start hook process, once started), `import.worker` (an ImportTranscript's
parse and build, at each of its checks for the caller's deadline), `import.decode` (the parse of
a transcript, before each line is decoded).
"""

from __future__ import annotations

import contextlib
import os
import threading

ENV = "POSTCOMPACT_FAILPOINTS"
_POLL_S = 0.01
_KINDS = ("hold", "gil")

_holds: dict[str, tuple[str, str]] = {}  # name -> (kind, PATH)


def configure(spec: str | None) -> None:
    """Parse `spec` (the environment variable's value); ValueError naming a bad entry."""
    _holds.clear()
    for item in (spec or "").split(";"):
        if not item.strip():
            continue
        name, sep, action = item.partition("=")
        kind, colon, path = action.partition(":")
        if not sep or not colon or kind not in _KINDS or not path:
            raise ValueError(f"{ENV}: {item!r} is not name=hold:PATH or name=gil:PATH")
        _holds[name.strip()] = (kind, path)


def hit(name: str) -> None:
    """Block at failpoint `name` while it is held (a no-op unless configured)."""
    held = _holds.get(name)
    if held is None:
        return
    kind, path = held
    if kind == "gil":
        _hold_gil(path)
        return
    _reached(path)
    released = threading.Event()
    while not os.path.exists(path):
        released.wait(_POLL_S)


def _reached(path: str) -> None:
    with open(path + ".reached", "a") as marker:
        marker.write(f"{os.getpid()} {threading.get_ident()}\n")


def _hold_gil(path: str) -> None:
    if os.path.exists(path):
        return
    import ctypes  # only ever with a gil failpoint configured

    fifo = path + ".fifo"
    with contextlib.suppress(FileExistsError):
        os.mkfifo(fifo, 0o600)
    fd = os.open(fifo, os.O_RDWR)  # never blocks, and a writer always finds a reader
    try:
        _reached(path)
        if not os.path.exists(path):
            # ctypes.PyDLL calls keep the GIL (ctypes.CDLL would release it).
            libc = ctypes.PyDLL(None)
            libc.read(fd, ctypes.create_string_buffer(1), 1)
    finally:
        os.close(fd)
