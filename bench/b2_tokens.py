"""B2: token estimation and exact counting on an offline corpus.

* Rough estimate (Claude Code's UTF-16/4 rule): `_core.estimate` on `bytes` (GB/s, one call per
  20 KB chunk, call overhead included) and on `str` (ns per call: O(1)), against Python
  baselines.
* Exact counting, o200k_base and cl100k_base, one thread: tiktoken `encode_ordinary` (len),
  bpe-openai (PyPI binding of GitHub's `bpe`, `count`), toktok-rs, quicktok-v1, fastokens (its
  segment cache off, its default, and on: "fastokens+cache") and `_core.count`, MB/s per category
  and overall, counts asserted identical chunk by chunk; and each one's batch form on every core
  against `_core.count_batch`; and the first pass over each category in a fresh process.
* Accuracy of the rough estimate against the exact counts, per category.

Competitors alternate (A B C A B C ...) and the best of the repeats is kept; each repeat of the
single-thread and batch tables counts chunks cut afresh (`ROTATE_BYTES`).
Run standalone: `python -m bench.b2_tokens [--quick]`.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from postcompact import _core

from bench import corpus
from bench._b2_first_pass import SEGMENT_CACHE_BYTES, fastokens_counter, fastokens_tokenizer
from bench.report import Section, Table, grouped_bar_chart, verdict
from tests._tiktoken_offline import ENCODINGS, load_encoding

Counter = Callable[[str], int]
BatchCounter = Callable[[list[str]], Sequence[int]]


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


# How far each repeat's chunks are shifted along the category's text (bytes; prime, so that no
# two repeats of five cut it at the same places): every timed pass counts chunks no counter has
# counted before, cut from the same text, so that a cache of whole inputs (fastokens+cache's
# segment cache) never answers a timed call while per-piece caches are as warm as text of the
# same kind makes them.
ROTATE_BYTES = 7919


def _rotations(
    text_of: Callable[[], str], nbytes: int, repeats: int, first: int = 0
) -> list[list[str]]:
    """`repeats` sets of ~`nbytes` of a category's text as 20 KB chunks, the r-th cut from
    `(first + r) * ROTATE_BYTES` on."""
    return [
        corpus.chunks_of(text_of(), nbytes, offset=(first + r) * ROTATE_BYTES)
        for r in range(repeats)
    ]


def _alternate_rotated(
    fns: dict[str, Callable[[list[str]], Sequence[int]]],
    rotations: list[list[str]],
    exact: list[list[int]],
    label: str,
) -> dict[str, float]:
    """Best time of each counter over the rotations (the r-th repeat counts the r-th set; the
    counters alternate within a repeat), scaled to the first set's bytes; every count checked
    against tiktoken's after its timed pass (a check before would put the chunks in a cache)."""
    sizes = [sum(len(s.encode()) for s in chunks) for chunks in rotations]
    best = dict.fromkeys(fns, float("inf"))
    for r, chunks in enumerate(rotations):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            got = fn(chunks)
            seconds = time.perf_counter() - t0
            assert list(got) == exact[r], f"{name} {label}: counts differ from tiktoken"
            best[name] = min(best[name], seconds * sizes[0] / sizes[r])
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


def _competitors(name: str) -> tuple[dict[str, tuple[Counter, BatchCounter]], Any]:
    """Each exact counter of `name`: (single call on one thread, batch on every core); and
    fastokens+cache's tokenizer, whose segment cache's counters the report quotes."""
    import quicktok
    import toktok

    tk = load_encoding(name)
    bo = _bpe_openai(name)
    qt = quicktok.get_encoding(name)
    ft = fastokens_tokenizer(name, cache=False)
    ft_cached = fastokens_tokenizer(name, cache=True)
    ft_cached_count = fastokens_counter(ft_cached, cache=True)

    def tiktoken_batch(texts: list[str]) -> list[int]:
        return [len(ids) for ids in tk.encode_ordinary_batch(texts)]

    def bpe_openai_batch(texts: list[str]) -> list[int]:
        return [bo.count(t) for t in texts]

    def toktok_single(text: str) -> int:
        # toktok-rs's only count API is the batch one; threads=1 counts on this thread.
        counts: list[int] = toktok.batch_count([text], name, threads=1)
        return counts[0]

    def toktok_batch(texts: list[str]) -> list[int]:
        counts: list[int] = toktok.batch_count(texts, name)  # threads=0: every core
        return counts

    def quicktok_batch(texts: list[str]) -> list[int]:
        return [int(n) for n in quicktok.count_batch(qt, texts)]  # threads=0: every core

    def fastokens_batch(texts: list[str]) -> list[int]:
        # Its bulk call, on every core: every text's ids in one buffer, and len + 1 uint64 offsets.
        # The batch calls encode as `encode` does, the preset's special tokens (<|endoftext|>...)
        # as control tokens; split_special_tokens=True makes them plain text, as encode_ordinary.
        _, offsets = ft.encode_batch_flat(texts, split_special_tokens=True)
        return [b - a for a, b in itertools.pairwise(memoryview(offsets).cast("Q"))]

    def fastokens_cached_batch(texts: list[str]) -> list[int]:
        # No batch call looks the segment cache up: a loop on this thread.
        return [ft_cached_count(t) for t in texts]

    return {
        "tiktoken": (_tiktoken_counter(tk), tiktoken_batch),
        "bpe-openai": (bo.count, bpe_openai_batch),
        "toktok-rs": (toktok_single, toktok_batch),
        "quicktok-v1": (qt.count, quicktok_batch),
        "fastokens": (fastokens_counter(ft, cache=False), fastokens_batch),
        "fastokens+cache": (ft_cached_count, fastokens_cached_batch),
        "ours": (
            functools.partial(_core.count, encoding=name),
            functools.partial(_core.count_batch, encoding=name),
        ),
    }, ft_cached


# Texts the corpus lacks, whose counts each counter's single and batch calls must also get right:
# the special tokens' text (plain text to an ordinary count), long whitespace runs, emoji.
EDGE_TEXTS = (
    "<|endoftext|> <|fim_prefix|>a<|fim_middle|>b<|fim_suffix|> <|endofprompt|>",
    " " * 3000 + "x\n\n\n" + "\t " * 500 + "y" + "\n" * 2000,
    "emoji \U0001f600\U0001f468\u200d\U0001f469\u200d\U0001f467 \U0001f1ef\U0001f1f5 \U0010ffff",
)

# The competitors that a target compares us with: the fastest of them in each category.
FAST = ("toktok-rs", "quicktok-v1", "fastokens", "fastokens+cache")
FAST_LABEL = "x fastest of toktok-rs / quicktok-v1 / fastokens / fastokens+cache"


def _count_rows(
    c: corpus.Corpus, repeats: int
) -> tuple[
    list[Sequence[object]],
    list[Sequence[object]],
    dict[str, dict[str, float]],
    list[Sequence[object]],
    dict[str, dict[str, int]],
]:
    """Single-thread rows, batch rows, our speed-up over each competitor per encoding/category
    (and over the fastest of FAST under "fastest"), the rough estimate's accuracy, and the
    counters of fastokens+cache's segment cache per encoding at the end."""
    rows: list[Sequence[object]] = []
    batch_rows: list[Sequence[object]] = []
    ratios: dict[str, dict[str, float]] = {}
    accuracy: list[Sequence[object]] = []
    cache_stats: dict[str, dict[str, int]] = {}
    for name in ENCODINGS:
        comp, ft_cached = _competitors(name)
        names = list(comp)
        edge = list(EDGE_TEXTS)
        exact_edge = [comp["tiktoken"][0](s) for s in edge]
        for k in names:
            got_edge = ([comp[k][0](s) for s in edge], list(comp[k][1](edge)))
            assert got_edge == (exact_edge, exact_edge), f"{k} {name}: counts differ on EDGE_TEXTS"
        tk = load_encoding(name)
        totals = dict.fromkeys(names, 0.0)
        total_bytes = 0
        by_cat: dict[str, list[list[str]]] = {}
        for cat in c.categories:
            rotations = _rotations(corpus.SOURCES[cat], c.nbytes(cat), repeats)
            # The batch's own cuts, none of them a chunk the single calls counted.
            by_cat[cat] = _rotations(corpus.SOURCES[cat], c.nbytes(cat), repeats, first=repeats)
            chunks = rotations[0]
            nbytes = sum(len(s.encode()) for s in chunks)
            total_bytes += nbytes
            # tiktoken's counts (its encoder keeps nothing from call to call), chunk by chunk.
            exact = [[len(tk.encode_ordinary(s)) for s in rot] for rot in rotations]
            fns: dict[str, Callable[[list[str]], Sequence[int]]] = {
                k: functools.partial(_count_all, comp[k][0]) for k in names
            }
            t = _alternate_rotated(fns, rotations, exact, f"{name} {cat}")
            for k in names:
                totals[k] += t[k]
            rows.append(_speed_row(name, cat, nbytes, t, ratios))
            rough = sum(_core.estimate(s) for s in chunks)
            accuracy.append(
                [name, cat, sum(len(s) for s in chunks) / sum(exact[0]), rough / sum(exact[0])]
            )
        rows.append(_speed_row(name, "**overall**", total_bytes, totals, ratios))
        # The batch: the r-th repeat is every category's r-th batch rotation.
        batches = [[s for cat in c.categories for s in by_cat[cat][r]] for r in range(repeats)]
        exact = [[len(tk.encode_ordinary(s)) for s in batch] for batch in batches]
        tb = _alternate_rotated({k: comp[k][1] for k in names}, batches, exact, f"{name} batch")
        batch_rows.append(_speed_row(name, "all chunks, one batch", total_bytes, tb, ratios))
        cache_stats[name] = dict(ft_cached.segment_cache_stats())
    return rows, batch_rows, ratios, accuracy, cache_stats


# The counters of the first-pass table, over every category of the corpus, and the size of each
# category's sample there: the same for each, so that what a first pass costs once weighs alike,
# and text that no sample repeats (prose has ~770 KB).
FIRST_PASS_COUNTERS = ("toktok-rs", "quicktok-v1", "fastokens", "fastokens+cache", "ours")
FIRST_PASS_BYTES = 600_000


def first_pass_corpus(per_category: int) -> corpus.Corpus:
    return corpus.build(
        len(corpus.MIX) * per_category, {c: 1 / len(corpus.MIX) for c in corpus.MIX}
    )


def _first_pass_rows(c: corpus.Corpus, runs: int) -> list[Sequence[object]]:
    """Each counter's first pass over a category's chunks in a fresh process
    (`bench._b2_first_pass`), alternated, the median of `runs`: MB/s, our ratio to fastokens and
    to the fastest of FAST, and which that was."""
    rows: list[Sequence[object]] = []
    with tempfile.TemporaryDirectory(prefix="pcb-b2-") as tmp:
        for cat in c.categories:
            chunks = c.chunks[cat]
            expected = {
                name: [len(load_encoding(name).encode_ordinary(s)) for s in chunks]
                for name in ENCODINGS
            }
            path = Path(tmp) / f"{cat}.json"
            path.write_text(json.dumps({"chunks": chunks, "expected": expected}))
            for name in ENCODINGS:
                mbps: dict[str, list[float]] = {k: [] for k in FIRST_PASS_COUNTERS}
                for _ in range(runs):
                    for k in FIRST_PASS_COUNTERS:
                        out = subprocess.run(
                            [sys.executable, "-m", "bench._b2_first_pass", str(path), name, k],
                            check=True,
                            capture_output=True,
                            text=True,
                        ).stdout
                        mbps[k].append(float(json.loads(out)["mbps"]))
                med = {k: statistics.median(v) for k, v in mbps.items()}
                fastest = max(FAST, key=lambda k: med[k])
                rows.append(
                    [
                        name,
                        cat,
                        *(med[k] for k in FIRST_PASS_COUNTERS),
                        med["ours"] / med["fastokens"],
                        med["ours"] / med[fastest],
                        fastest,
                    ]
                )
    rows.sort(key=lambda r: str(r[0]))  # by encoding, categories in the corpus's order
    return rows


def _speed_row(
    name: str, label: str, nbytes: int, t: dict[str, float], ratios: dict[str, dict[str, float]]
) -> list[object]:
    mbps = {k: nbytes / v / 1e6 for k, v in t.items()}
    fastest = min(FAST, key=lambda k: t[k])
    key = f"{name}/{label.replace('*', '')}"
    for k, seconds in t.items():
        if k != "ours":
            ratios.setdefault(k, {})[key] = seconds / t["ours"]
    ratios.setdefault("fastest", {})[key] = t[fastest] / t["ours"]
    return [
        name,
        label,
        *(mbps[k] for k in t),
        t["tiktoken"] / t["ours"],
        t["fastokens"] / t["ours"],
        t[fastest] / t["ours"],
        fastest,
    ]


def run(quick: bool = False) -> Section:
    est_corpus = corpus.build(2_000_000 if quick else 16_000_000)
    count_corpus = corpus.build(400_000 if quick else 4_000_000)
    repeats = 1 if quick else 5
    est_rows, gbps = _estimate_rows(est_corpus, repeats)
    count_rows, batch_rows, ratios, accuracy, cache_stats = _count_rows(count_corpus, repeats)
    first_corpus = first_pass_corpus(FIRST_PASS_BYTES // 10 if quick else FIRST_PASS_BYTES)
    first_rows = _first_pass_rows(first_corpus, repeats)
    batch_key = "all chunks, one batch"

    def worst(competitor: str, batch: bool) -> tuple[str, float]:
        got = {k: v for k, v in ratios[competitor].items() if k.endswith(batch_key) == batch}
        key = min(got, key=lambda k: got[k])
        return key, got[key]

    verdicts = [
        f"rough estimate on bytes: {gbps:.1f} GB/s (target >= 10 GB/s) — "
        + ("met" if gbps >= 10 else "NOT met")
    ]
    for label, competitor, batch, target in [
        ("exact count vs tiktoken", "tiktoken", False, 2.0),
        ("exact count vs bpe-openai", "bpe-openai", False, 1.0),
        (
            "`count` (one thread) vs the fastest of toktok-rs, quicktok-v1, fastokens and"
            " fastokens+cache",
            "fastest",
            False,
            1.0,
        ),
        ("`count_batch` (both cores) vs the fastest batch of those four", "fastest", True, 1.0),
    ]:
        key, ratio = worst(competitor, batch)
        verdicts.append(
            verdict(f"{label}, worst case ({key})", ratio, target, lower_is_better=False)
        )
    first_worst = min(first_rows, key=lambda r: float(str(r[-2])))
    verdicts.append(
        verdict(
            f"first pass (a fresh process, one thread) vs the fastest of those four, worst case"
            f" ({first_worst[0]}/{first_worst[1]})",
            float(str(first_worst[-2])),
            1.0,
            lower_is_better=False,
        )
    )
    mb = count_corpus.nbytes() / 1e6
    cjk_kb = count_corpus.nbytes("cjk-zh") / 1e3
    first_kb = first_corpus.nbytes("code") / 1e3
    stats = "; ".join(
        f"{name} {st['hits']:,} hits and {st['misses']:,} misses"
        for name, st in cache_stats.items()
    )
    intro = f"""
Corpus built offline by `bench/corpus.py`: CPython stdlib code, pydoc topics and license texts,
generated pretty JSON, and four CJK samples from this machine's gettext catalogues
(`/usr/share/locale`, a message from each catalogue in turn): cjk-zh, the zh_CN, zh_TW and zh_HK
translations; cjk-ja, the Japanese ones that have kana; cjk-ko, the Korean ones; cjk-code, the
four's (English key, CJK message) pairs written in turn as `.po` entries, JSON message files,
Python with CJK comments and strings, TypeScript message tables and C with CJK comments. Mixed
60/20/10 (code, prose, JSON) and 2.5% for each CJK sample by bytes, in 20 KB chunks:
{est_corpus.nbytes() / 1e6:.1f} MB for the estimate, {mb:.1f} MB per encoding for exact counting,
{cjk_kb:.0f} KB of it per CJK sample.
Every exact count was checked identical to tiktoken's, chunk by chunk and batch by batch, in the
first pass too, and each counter's single and batch calls on three texts the corpus lacks (the
special tokens' text, long whitespace runs, emoji).
Competitors: tiktoken (`len(encode_ordinary)`), bpe-openai (`count`), toktok-rs (its only count
API, `batch_count`: `batch_count([text], threads=1)` for one call), quicktok-v1 (`count`; for a
batch `quicktok.count_batch`), fastokens 0.3.5, and ours (`_core.count`, `_core.count_batch`).
Ours counts a text of 64 bytes or more on fastokens' own tables (the `fastokens` crate, the same
0.3.5, linked into the core: rust_core/src/fastcount.rs), so on these 20 KB chunks the ratio of
ours to fastokens compares two bindings of one counter, and a ratio near 1.0x is a tie within the
run's spread, not a lead. Below 64 bytes ours counts on its own tables
(`cargo bench --bench tokens -- count_by_size` compares the two by size).
fastokens has no count call: `len(tok.encode_ordinary(text))`, `tok` from
`Tokenizer.from_tiktoken(path, encoding=NAME)`, tiktoken's rank file with fastokens' own preset of
NAME's split pattern (tiktoken's pattern string, `pattern=enc._pat_str`, counts the same, but
fastokens runs cl100k_base's as a generic regex: 3-10x slower here, measured apart from this
table); a 20 KB call stays on the calling thread (it starts no worker thread). fastokens+cache is
the same with `tok.enable_segment_cache({SEGMENT_CACHE_BYTES >> 20} MiB)` (off by default; also
`FASTOKENS_SEGMENT_CACHE=<MiB>`): that cache keeps the ids of each text segment between added
tokens and serves `encode_segments` (and inputs holding added tokens) only, never
`encode_ordinary` or a batch call, so fastokens+cache counts `len(tok.encode_segments([(text,
False)]))`, the text as one segment, special tokens as plain text.
Batches use every core (toktok-rs and quicktok-v1 with `threads=0`, tiktoken's
`encode_ordinary_batch`, fastokens' `encode_batch_flat(texts, split_special_tokens=True)`, the
counts from its offsets: without that flag it takes `<|endoftext|>` and the other special tokens
for control tokens, where `encode_ordinary` and tiktoken's count them as text);
bpe-openai has no batch call, and fastokens+cache none that looks its cache up: both run a loop
on one thread.
Best of {repeats} alternated repeats, each over chunks no counter has counted before: the r-th
repeat cuts the same text of the category {ROTATE_BYTES:,} x r bytes further on (freshly rotated
chunks), so what a counter keeps from piece to piece is warm on text of the same
kind (ours: fastokens' thread-local caches for 64 bytes or more, each thread's cache of
multi-token piece counts below; toktok-rs: its memos; fastokens: its thread-local caches) but no
cache of whole inputs answers a timed call (fastokens+cache's segment cache misses every chunk
and stores it; its counters at the end: {stats}). Every count is checked against tiktoken's
after its timed pass. (Over the very same chunks again, B2's method until December 2026,
fastokens+cache answered every call from its segment cache at 1.1-1.8 GB/s: a lookup of the
whole text, not a count.)
The first-pass table has each counter count {first_kb:.0f} KB of each category (a sample of its own,
the same size for each category, no text repeated) once in a fresh process
(`bench/_b2_first_pass.py`; median of {repeats} alternated runs) after one call on an unrelated
ASCII sentence, which is all the warming: ours `_core.count(sentence)` (it builds the encoding's
tables); toktok-rs `batch_count([sentence], threads=1)`; quicktok-v1 `get_encoding`, then
`count(sentence)`; fastokens `from_tiktoken`, then `encode_ordinary(sentence)`; fastokens+cache
`from_tiktoken` and `enable_segment_cache`, then `encode_segments` of the sentence, so its cache
holds only that and each chunk is a miss, encoded and stored. Nothing any counter keeps has seen
the chunks, and no part of its tables that the sentence did not touch (CJK's, for one) has been
read before the pass.
"""
    speed_cols = [
        "encoding",
        "",
        "tiktoken",
        "bpe-openai",
        "toktok-rs",
        "quicktok-v1",
        "fastokens",
        "fastokens+cache",
        "ours",
        "x tiktoken",
        "x fastokens",
        FAST_LABEL,
        "fastest",
    ]
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
                "Exact counting, MB/s, one call per 20 KB chunk on one thread, and our speed-up",
                ["category" if i == 1 else c for i, c in enumerate(speed_cols)],
                count_rows,
            ),
            Table(
                "Exact counting of all the chunks in one batch call (both cores), MB/s",
                speed_cols,
                batch_rows,
            ),
            Table(
                "Exact counting, first pass in a fresh process (one thread), MB/s",
                [
                    "encoding",
                    "category",
                    *FIRST_PASS_COUNTERS,
                    "x fastokens",
                    FAST_LABEL,
                    "fastest",
                ],
                first_rows,
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
        grouped_bar_chart(
            exact,
            "b2_exact.png",
            title="B2 exact counting, MB/s on one thread, higher is better",
            value_cols=tuple(range(2, 9)),
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
