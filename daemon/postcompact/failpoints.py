"""Failpoints: named places where a test can hold the daemon's work, to prove a mechanism without a
clock (docs/reliability.md, "How the limits are tested").

Off unless the daemon is started with `POSTCOMPACT_FAILPOINTS`, a `;`-separated list of
`name=hold:PATH`. A thread that reaches a held failpoint appends a line to `PATH.reached` and
then blocks until `PATH` exists (the test creates it to release the hold). Holding is only ever
done in worker threads; a test that holds the event loop instead sees its own ping time out,
which is what such a test proves.

Names: `tokens.worker` (a single token call off the loop), `readfile.worker` (ReadFile's read),
`hooks.run` (a session-start hook process, once started), `import.worker` (an ImportTranscript's
parse and build, at each of its checks for the caller's deadline).
"""

from __future__ import annotations

import os
import threading

ENV = "POSTCOMPACT_FAILPOINTS"
_POLL_S = 0.01

_holds: dict[str, str] = {}


def configure(spec: str | None) -> None:
    """Parse `spec` (the environment variable's value); ValueError naming a bad entry."""
    _holds.clear()
    for item in (spec or "").split(";"):
        if not item.strip():
            continue
        name, sep, action = item.partition("=")
        if not sep or not action.startswith("hold:") or not action[5:]:
            raise ValueError(f"{ENV}: {item!r} is not name=hold:PATH")
        _holds[name.strip()] = action[5:]


def hit(name: str) -> None:
    """Block at failpoint `name` while it is held (a no-op unless configured)."""
    path = _holds.get(name)
    if path is None:
        return
    with open(path + ".reached", "a") as marker:
        marker.write(f"{threading.get_ident()}\n")
    released = threading.Event()
    while not os.path.exists(path):
        released.wait(_POLL_S)
