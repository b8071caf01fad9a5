"""`python -m bench._b2_first_pass CHUNKS.json ENCODING COUNTER`: one pass of COUNTER over the
chunks in a fresh process, its tables loaded first on an unrelated text, so that nothing it keeps
from call to call (our per-thread piece-count cache, toktok-rs's memos) has seen the chunks.
Prints the MB/s as JSON. B2 runs it for its first-pass table; the counts are checked against the
expected ones in the file.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

WARM_UP = "Tables load on this text, which shares no piece with the measured chunks: 0123."


def _counter(encoding: str, name: str) -> Callable[[str], int]:
    if name == "ours":
        from postcompact import _core

        return lambda text: int(_core.count(text, encoding))
    if name == "toktok-rs":
        import toktok

        return lambda text: int(toktok.batch_count([text], encoding, threads=1)[0])
    if name == "quicktok-v1":
        import quicktok

        enc = quicktok.get_encoding(encoding)
        return lambda text: int(enc.count(text))
    raise SystemExit(f"unknown counter {name!r}")


def main() -> None:
    path, encoding, name = sys.argv[1:4]
    with open(path) as f:
        data = json.load(f)
    chunks: list[str] = data["chunks"]
    count = _counter(encoding, name)
    count(WARM_UP)
    t0 = time.perf_counter()
    got = [count(c) for c in chunks]
    seconds = time.perf_counter() - t0
    if got != data["expected"][encoding]:
        raise SystemExit(f"{name} {encoding}: counts differ from tiktoken's")
    nbytes = sum(len(c.encode()) for c in chunks)
    print(json.dumps({"mbps": nbytes / seconds / 1e6}))


if __name__ == "__main__":
    main()
