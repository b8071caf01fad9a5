"""`python -m bench._b2_first_pass CHUNKS.json ENCODING COUNTER`: one pass of COUNTER over the
chunks in a fresh process, its tables loaded first on an unrelated text, so that nothing it keeps
from call to call (our per-thread piece-count cache, toktok-rs's memos, fastokens' caches and its
segment cache) has seen the chunks. Prints the MB/s as JSON. B2 runs it for its first-pass table;
the counts are checked against the expected ones in the file.

B2 builds its fastokens counters with the helpers here too, so that both measure the same calls.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

# An ASCII sentence: the warm-up call of each counter builds its tables on it.
WARM_UP = "Tables load on this text, which shares no piece with the measured chunks: 0123."

# fastokens+cache's segment cache (bytes of segment text and ids): B2's chunks of one encoding
# take ~10 MB in it, so none is evicted.
SEGMENT_CACHE_BYTES = 256 << 20


def fastokens_tokenizer(encoding: str, *, cache: bool) -> Any:
    """fastokens' tokenizer of `encoding`: tiktoken's rank file (the offline cache's), the split
    pattern of fastokens' own preset for the encoding; with `cache`, its segment cache on."""
    import fastokens

    from tests._tiktoken_offline import rank_file

    tok = fastokens.Tokenizer.from_tiktoken(str(rank_file(encoding)), encoding=encoding)
    if cache:
        tok.enable_segment_cache(SEGMENT_CACHE_BYTES)
    return tok


def fastokens_counter(tok: Any, *, cache: bool) -> Callable[[str], int]:
    """One text's count. fastokens has no count call: the length of its encoding. Its segment
    cache serves only `encode_segments` (and inputs with added tokens): `encode_ordinary` and the
    batch calls never look it up, so the cached counter encodes the text as one segment, special
    tokens as plain text (as `encode_ordinary` and tiktoken's `encode_ordinary` do)."""
    if cache:
        return lambda text: len(tok.encode_segments([(text, False)]))
    return lambda text: len(tok.encode_ordinary(text))


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
    if name in ("fastokens", "fastokens+cache"):
        cache = name == "fastokens+cache"
        return fastokens_counter(fastokens_tokenizer(encoding, cache=cache), cache=cache)
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
