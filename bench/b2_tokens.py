"""B2: token estimation and exact counting on an offline corpus.

* Rough estimate (Claude Code's UTF-16/4 rule): `_core.estimate` on `bytes` (GB/s, one call per
  20 KB chunk, call overhead included) and on `str` (ns per call: O(1)), against Python
  baselines.
* Exact counting, o200k_base and cl100k_base, one thread: tiktoken `encode_ordinary` (len),
  bpe-openai (PyPI binding of GitHub's `bpe`, `count`) and `_core.count`, MB/s per category and
  overall, counts asserted identical chunk by chunk; plus `_core.count_batch` (threads).
* Accuracy of the rough estimate against the exact counts, per category.

Competitors alternate (A B C A B C ...) and the best of the repeats is kept.
Run standalone: `python -m bench.b2_tokens [--quick]`.
"""

from __future__ import annotations

import argparse
import functools
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from postcompact import _core

from bench import corpus
from bench.report import Section, Table, bar_chart, verdict
from tests._tiktoken_offline import ENCODINGS, load_encoding

Counter = Callable[[str], int]


def _bpe_openai(name: str) -> Any:
    # The package's __init__ eagerly loads its own data through a deprecated importlib API.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from bpe_openai import _bindings

    return _bindings.tokenizer_for_encoding(name)


def _tiktoken_counter(enc: Any) -> Counter:
    def count(text: str) -> int:
        return len(enc.encode_ordinary(text))

    return count


def _count_all(f: Counter, chunks: list[str]) -> list[int]:
    return [f(s) for s in chunks]


def _best_time(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _alternate(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Best wall time of each function, run in alternation."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def _estimate_rows(c: corpus.Corpus, repeats: int) -> tuple[list[Sequence[object]], float]:
    chunks_b = [s.encode() for s in c.all_chunks()]
    chunks_s = c.all_chunks()
    nbytes = sum(len(b) for b in chunks_b)
    est = _core.estimate

    def ours_bytes() -> None:
        for b in chunks_b:
            est(b)

    def ours_batch() -> None:
        _core.estimate_batch(chunks_b)

    def py_decode() -> None:
        for b in chunks_b:
            s = b.decode("utf-8", "replace")
            (len(s.encode("utf-16-le")) // 2 + 2) // 4

    def ours_str() -> None:
        for s in chunks_s:
            est(s)

    def py_len() -> None:
        for s in chunks_s:
            (len(s) + 2) // 4

    def loop_only() -> None:
        for _ in chunks_s:
            pass

    t = _alternate(
        {
            "ours_bytes": ours_bytes,
            "ours_batch": ours_batch,
            "py_decode": py_decode,
            "ours_str": ours_str,
            "py_len": py_len,
            "loop": loop_only,
        },
        repeats * 5,
    )
    calls = len(chunks_b)
    loop = t["loop"]
    gbps = nbytes / max(t["ours_bytes"] - loop, 1e-9) / 1e9
    rows: list[Sequence[object]] = [
        ["_core.estimate(bytes), per 20 KB chunk", (t["ours_bytes"]) / calls * 1e9, gbps, 1.0],
        [
            "_core.estimate_batch(list of bytes)",
            t["ours_batch"] / calls * 1e9,
            nbytes / t["ours_batch"] / 1e9,
            t["ours_bytes"] / t["ours_batch"],
        ],
        [
            "Python: len(b.decode().encode('utf-16-le')) // 2",
            t["py_decode"] / calls * 1e9,
            nbytes / t["py_decode"] / 1e9,
            t["ours_bytes"] / t["py_decode"],
        ],
        [
            "_core.estimate(str), O(1)",
            t["ours_str"] / calls * 1e9,
            nbytes / t["ours_str"] / 1e9,
            t["ours_bytes"] / t["ours_str"],
        ],
        [
            "Python: (len(s) + 2) // 4 (not UTF-16 exact)",
            t["py_len"] / calls * 1e9,
            nbytes / t["py_len"] / 1e9,
            t["ours_bytes"] / t["py_len"],
        ],
        ["(empty Python loop)", loop / calls * 1e9, float("nan"), float("nan")],
    ]
    # Correctness: bytes and str agree with the JavaScript rule.
    for b, s in zip(chunks_b[:50], chunks_s[:50], strict=True):
        ref = (len(s.encode("utf-16-le")) // 2 + 2) // 4
        assert est(b) == est(s) == ref
    return rows, gbps


def _count_rows(
    c: corpus.Corpus, repeats: int
) -> tuple[list[Sequence[object]], dict[str, dict[str, float]], list[Sequence[object]]]:
    rows: list[Sequence[object]] = []
    ratios: dict[str, dict[str, float]] = {"tiktoken": {}, "bpe_openai": {}}
    accuracy: list[Sequence[object]] = []
    for name in ENCODINGS:
        tk = load_encoding(name)
        bo = _bpe_openai(name)
        counters: dict[str, Counter] = {
            "tiktoken": _tiktoken_counter(tk),
            "bpe_openai": bo.count,
            "ours": functools.partial(_core.count, encoding=name),
        }
        totals = {k: 0.0 for k in counters}
        total_bytes = 0
        for cat in c.categories:
            chunks = c.chunks[cat]
            nbytes = c.nbytes(cat)
            total_bytes += nbytes
            # Identical counts, chunk by chunk.
            exact = [counters["tiktoken"](s) for s in chunks]
            for k in ("bpe_openai", "ours"):
                got = [counters[k](s) for s in chunks]
                assert got == exact, f"{k} {name} {cat}: counts differ from tiktoken"
            fns: dict[str, Callable[[], object]] = {
                k: functools.partial(_count_all, f, chunks) for k, f in counters.items()
            }
            t = _alternate(fns, repeats)
            for k in counters:
                totals[k] += t[k]
            mbps = {k: nbytes / t[k] / 1e6 for k in counters}
            vs_tk = t["tiktoken"] / t["ours"]
            vs_bo = t["bpe_openai"] / t["ours"]
            ratios["tiktoken"][f"{name}/{cat}"] = vs_tk
            ratios["bpe_openai"][f"{name}/{cat}"] = vs_bo
            rows.append(
                [name, cat, mbps["tiktoken"], mbps["bpe_openai"], mbps["ours"], vs_tk, vs_bo]
            )
            rough = sum(_core.estimate(s) for s in chunks)
            accuracy.append(
                [name, cat, sum(len(s) for s in chunks) / sum(exact), rough / sum(exact)]
            )
        mbps = {k: total_bytes / totals[k] / 1e6 for k in counters}
        rows.append(
            [
                name,
                "**overall**",
                mbps["tiktoken"],
                mbps["bpe_openai"],
                mbps["ours"],
                totals["tiktoken"] / totals["ours"],
                totals["bpe_openai"] / totals["ours"],
            ]
        )
        chunks = c.all_chunks()
        tb = _best_time(functools.partial(_core.count_batch, chunks, name), repeats)
        rows.append(
            [
                name,
                "overall, `count_batch` (threads)",
                "",
                "",
                total_bytes / tb / 1e6,
                totals["tiktoken"] / tb,
                totals["bpe_openai"] / tb,
            ]
        )
    return rows, ratios, accuracy


def run(quick: bool = False) -> Section:
    est_corpus = corpus.build(2_000_000 if quick else 16_000_000)
    count_corpus = corpus.build(400_000 if quick else 4_000_000)
    repeats = 1 if quick else 3
    est_rows, gbps = _estimate_rows(est_corpus, repeats)
    count_rows, ratios, accuracy = _count_rows(count_corpus, repeats)
    worst_tk = min(ratios["tiktoken"], key=lambda k: ratios["tiktoken"][k])
    worst_bo = min(ratios["bpe_openai"], key=lambda k: ratios["bpe_openai"][k])
    verdicts = [
        f"rough estimate on bytes: {gbps:.1f} GB/s (target >= 10 GB/s) — "
        + ("met" if gbps >= 10 else "NOT met"),
        verdict(
            f"exact count vs tiktoken, worst category ({worst_tk})",
            ratios["tiktoken"][worst_tk],
            2.0,
            lower_is_better=False,
        ),
        verdict(
            f"exact count vs bpe-openai, worst category ({worst_bo})",
            ratios["bpe_openai"][worst_bo],
            1.0,
            lower_is_better=False,
        ),
    ]
    mb = count_corpus.nbytes() / 1e6
    intro = f"""
Corpus built offline by `bench/corpus.py` (CPython stdlib code, pydoc topics and license texts,
generated pretty JSON, CJK gettext catalogues), mixed 60/20/10/10 by bytes in 20 KB chunks:
{est_corpus.nbytes() / 1e6:.1f} MB for the estimate, {mb:.1f} MB per encoding for exact counting.
Single thread unless stated; every exact count was checked identical to tiktoken's, chunk by
chunk. Best of {repeats} alternated repeats.
"""
    section = Section(
        title="B2. Token estimation and exact counting",
        intro=intro,
        tables=[
            Table(
                "Rough estimate (per 20 KB chunk, call overhead included)",
                ["method", "ns / call", "GB/s", "speed vs estimate(bytes)"],
                est_rows,
            ),
            Table(
                "Exact counting, MB/s (one thread) and our speed-up",
                [
                    "encoding",
                    "category",
                    "tiktoken",
                    "bpe-openai",
                    "ours",
                    "x tiktoken",
                    "x bpe-openai",
                ],
                count_rows,
            ),
            Table(
                "Accuracy of the rough estimate (characters per token; estimate / exact)",
                ["encoding", "category", "chars / token", "estimate / exact"],
                accuracy,
            ),
        ],
        verdicts=verdicts,
    )
    exact = section.tables[1]
    section.plots.append(
        bar_chart(
            exact,
            "b2_exact.png",
            title="B2 exact counting, MB/s on one thread (ours), higher is better",
            value_col=4,
            label_cols=(0, 1),
        )
    )
    return section


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.b2_tokens")
    parser.add_argument("--quick", action="store_true")
    section = run(quick=parser.parse_args().quick)
    print(section.markdown())


if __name__ == "__main__":
    main()
