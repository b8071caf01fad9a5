"""The shared cache trace (B1): 1M operations over 400 paths with Zipf(1.0)
popularity, 80% get (set on a miss) and 20% set, file sizes log-normal (sigma = 1.2) with a median
of 6 KB ("small": only the 100-entry bound binds) or 150 KB ("large", capped at 2 MB: both bounds
bind), bounds {max: 100, maxSize: 25 MiB}. Values are made once per path. The same trace runs
through the core from Python (`LruCache`, `FileStateCache`) and natively (Rust, no Python),
npm lru-cache in Node with Claude Code's configuration, and the Python baselines; the
implementations alternate within each repeat and the best repeat counts. Natively, keys are held
by reference (as a JavaScript `Map` and the Python binding hold theirs); one row hashes every key
on every operation, the other hashes each once, as V8 and CPython cache a string's hash in the
string. Strict two-bound LRUs must report identical hit counts; lru-dict, cachebox and cachetools
bound the entry count only (cachetools' `getsizeof` variant the size only), so their hits may
differ on the large trace."""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from postcompact._core import FileState, FileStateCache

from bench.report import ROOT, Section, Table, bar_chart, verdict

try:
    # The core's LRU over Python values: a module of its own (bench/lru_py), outside the product.
    from postcompact_bench_lru import LruCache
except ImportError as exc:
    raise SystemExit(
        "B1 measures the benchmarks' LruCache (postcompact_bench_lru, bench/lru_py), which is not "
        "installed: `make bench` builds it, or `make build-bench-lru` before `python -m bench b1`"
    ) from exc

MAX_ENTRIES = 100
MAX_SIZE = 25 * 1024 * 1024
PATHS = 400
SET_SHARE = 0.2
SIGMA = 1.2
SIZE_CAP = 2 * 1024 * 1024
MEDIANS = {"small": 6 * 1024, "large": 150 * 1024}
SET_BIT = 0x8000
SEED = 0xB1

# One op of a plan: (is_set, key, value, size).
Plan = list[tuple[bool, str, Any, int]]


@dataclass
class Trace:
    variant: str
    sizes: list[int]
    paths: list[str]
    ops: list[int]  # path index, | SET_BIT for a set


def make_trace(variant: str, n_ops: int, seed: int = SEED) -> Trace:
    rng = random.Random(f"{seed}-{variant}")
    median = MEDIANS[variant]
    sizes = [min(SIZE_CAP, int(rng.lognormvariate(math.log(median), SIGMA))) for _ in range(PATHS)]
    paths = [f"/home/dev/work/project/src/pkg{i % 17:02}/module_{i:03}.py" for i in range(PATHS)]
    # Zipf(1.0): rank r (0-based) has weight 1 / (r + 1); ranks are shuffled over the paths.
    order = list(range(PATHS))
    rng.shuffle(order)
    cum: list[float] = []
    total = 0.0
    for rank in range(PATHS):
        total += 1.0 / (rank + 1)
        cum.append(total)
    picks = rng.choices(order, cum_weights=cum, k=n_ops)
    ops = [p | SET_BIT if rng.random() < SET_SHARE else p for p in picks]
    return Trace(variant, sizes, paths, ops)


def write_trace(trace: Trace, path: Path) -> None:
    """The binary format read by bench/b1_cache.js and rust_core/benches/cache_trace.rs."""
    parts = [
        b"PCB1TRC\0",
        struct.pack("<IIIIQ", 1, len(trace.paths), len(trace.ops), MAX_ENTRIES, MAX_SIZE),
        struct.pack(f"<{len(trace.sizes)}Q", *trace.sizes),
    ]
    for p in trace.paths:
        raw = p.encode()
        parts.append(struct.pack("<I", len(raw)) + raw)
    parts.append(struct.pack(f"<{len(trace.ops)}H", *trace.ops))
    path.write_bytes(b"".join(parts))


# --- Python implementations (each returns its hit count) -----------------------------------


def run_core_lru(plan: Plan) -> int:
    cache = LruCache(MAX_ENTRIES, MAX_SIZE)
    get = cache.get
    put = cache.set
    hits = 0
    for is_set, key, value, size in plan:
        if is_set or get(key) is None:
            put(key, value, size)
        else:
            hits += 1
    return hits


def run_core_file_state(plan: Plan) -> int:
    cache = FileStateCache(MAX_ENTRIES, MAX_SIZE)
    get = cache.get
    put = cache.set
    hits = 0
    for is_set, key, value, _size in plan:
        if is_set or get(key) is None:
            put(key, value)
        else:
            hits += 1
    return hits


class OrderedDictLru:
    """The natural pure-Python two-bound LRU, with lru-cache's semantics."""

    def __init__(self, max_entries: int, max_size: int) -> None:
        self.max_entries = max_entries
        self.max_size = max_size
        self.data: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self.total = 0

    def get(self, key: str) -> Any:
        item = self.data.get(key)
        if item is None:
            return None
        self.data.move_to_end(key)
        return item[0]

    def set(self, key: str, value: Any, size: int) -> None:
        data = self.data
        size = max(1, size)
        if size > self.max_size:
            old = data.pop(key, None)
            if old is not None:
                self.total -= old[1]
            return
        old = data.pop(key, None)
        if old is not None:
            self.total -= old[1]
        elif len(data) >= self.max_entries:
            self.total -= data.popitem(last=False)[1][1]
        while self.total + size > self.max_size:
            self.total -= data.popitem(last=False)[1][1]
        data[key] = (value, size)
        self.total += size


def run_ordered_dict(plan: Plan) -> int:
    cache = OrderedDictLru(MAX_ENTRIES, MAX_SIZE)
    get = cache.get
    put = cache.set
    hits = 0
    for is_set, key, value, size in plan:
        if is_set or get(key) is None:
            put(key, value, size)
        else:
            hits += 1
    return hits


def _run_mapping(cache: Any, plan: Plan) -> int:
    """Count-bound caches with a dict-like API: get(key) / cache[key] = value."""
    get = cache.get
    hits = 0
    for is_set, key, value, _size in plan:
        if is_set or get(key) is None:
            cache[key] = value
        else:
            hits += 1
    return hits


def run_lru_dict(plan: Plan) -> int:
    import lru  # lru-dict

    return _run_mapping(lru.LRU(MAX_ENTRIES), plan)


def run_cachebox(plan: Plan) -> int:
    import cachebox

    cache: Any = cachebox.LRUCache(MAX_ENTRIES)
    get = cache.get
    put = cache.insert
    hits = 0
    for is_set, key, value, _size in plan:
        if is_set or get(key) is None:
            put(key, value)
        else:
            hits += 1
    return hits


def run_cachetools(plan: Plan) -> int:
    import cachetools

    return _run_mapping(cachetools.LRUCache(maxsize=MAX_ENTRIES), plan)


def run_cachetools_bytes(plan: Plan) -> int:
    import cachetools

    def size_of(state: FileState) -> int:
        return max(1, len(state.content))

    return _run_mapping(cachetools.LRUCache(maxsize=MAX_SIZE, getsizeof=size_of), plan)


@dataclass
class Impl:
    name: str
    kind: str  # "strict" (both bounds), "count" (entries only), "bytes" (size only)
    run: Callable[[Plan], int]


def _available() -> list[Impl]:
    impls = [
        Impl("postcompact core LruCache (Python)", "strict", run_core_lru),
        Impl("postcompact core FileStateCache (Python)", "strict", run_core_file_state),
        Impl("OrderedDict two-bound (pure Python)", "strict", run_ordered_dict),
    ]
    for module, impl in (
        ("cachebox", Impl("cachebox 6 LRUCache (count only)", "count", run_cachebox)),
        ("lru", Impl("lru-dict LRU (count only)", "count", run_lru_dict)),
        ("cachetools", Impl("cachetools LRUCache (count only)", "count", run_cachetools)),
        (
            "cachetools",
            Impl("cachetools LRUCache getsizeof (bytes only)", "bytes", run_cachetools_bytes),
        ),
    ):
        try:
            __import__(module)
        except ImportError:
            print(f"b1: {module} is not installed; skipping {impl.name}", file=sys.stderr)
            continue
        impls.append(impl)
    return impls


def _plan(trace: Trace) -> Plan:
    states = [
        FileState(bytes(size), 1_700_000_000_000 + i, offset=1)
        for i, size in enumerate(trace.sizes)
    ]
    plan: Plan = []
    for op in trace.ops:
        i = op & ~SET_BIT
        plan.append((bool(op & SET_BIT), trace.paths[i], states[i], trace.sizes[i]))
    return plan


# --- Node and native ---------------------------------------------------------------------------


def _node(trace_file: Path, repeats: int) -> dict[str, Any] | None:
    node = shutil.which("node")
    if node is None or not (ROOT / "tests/node/node_modules/lru-cache").is_dir():
        print("b1: node or tests/node/node_modules missing; skipping lru-cache", file=sys.stderr)
        return None
    out = subprocess.run(
        [node, str(ROOT / "bench/b1_cache.js"), str(trace_file), str(repeats)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _native(trace_file: Path, repeats: int) -> dict[str, Any] | None:
    cargo = shutil.which("cargo")
    if cargo is None:
        print("b1: cargo missing; skipping the native replay", file=sys.stderr)
        return None
    env = {
        **os.environ,
        "POSTCOMPACT_B1_TRACE": str(trace_file),
        "POSTCOMPACT_B1_REPEATS": str(repeats),
    }
    out = subprocess.run(
        [cargo, "bench", "-q", "-p", "postcompact-core", "--bench", "cache_trace"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    result: dict[str, Any] = json.loads(lines[-1])
    return result


# --- Python single-op costs --------------------------------------------------------------------


def _micro_python(rounds: int) -> list[Sequence[object]]:
    """ns per call through Python: get-hit, get-miss, set-new (evicting one), set-update."""
    import importlib

    present = [f"/home/dev/work/project/src/file_{i:04}.rs" for i in range(100)]
    absent = [f"/home/dev/work/project/other/file_{i:04}.rs" for i in range(100)]
    both = [k for pair in zip(present, absent, strict=True) for k in pair]
    value = FileState(b"x" * 6144, 1)
    loops = 50

    def fill(keys: list[str], how: str, cache: Any) -> None:
        # One loop per calling convention, so that no wrapper adds a frame per call.
        if how == "set3":
            put3 = cache.set
            for _ in range(loops):
                for k in keys:
                    put3(k, value, 6144)
        elif how == "insert":
            put2 = cache.insert
            for _ in range(loops):
                for k in keys:
                    put2(k, value)
        else:
            for _ in range(loops):
                for k in keys:
                    cache[k] = value

    def lookup(keys: list[str], cache: Any) -> None:
        get = cache.get
        for _ in range(loops):
            for k in keys:
                get(k)

    def timed(fn: Callable[[], None], n: int) -> float:
        best = math.inf
        for _ in range(rounds):
            t0 = time.perf_counter_ns()
            fn()
            best = min(best, (time.perf_counter_ns() - t0) / n)
        return best

    caches: list[tuple[str, str, Callable[[], Any]]] = [
        ("core LruCache", "set3", lambda: LruCache(100, MAX_SIZE)),
        ("OrderedDict two-bound", "set3", lambda: OrderedDictLru(100, MAX_SIZE)),
    ]
    try:
        cachebox: Any = importlib.import_module("cachebox")
        caches.append(("cachebox LRUCache", "insert", lambda: cachebox.LRUCache(100)))
    except ImportError:
        pass
    try:
        lru_dict: Any = importlib.import_module("lru")
        caches.append(("lru-dict LRU", "item", lambda: lru_dict.LRU(100)))
    except ImportError:
        pass
    caches.append(("dict (no bounds: the floor)", "item", dict))
    rows: list[Sequence[object]] = []
    n = loops * 100
    for label, how, make in caches:
        cache = make()
        fill(present, how, cache)
        rows.append(
            [
                label,
                timed(partial(lookup, present, cache), n),
                timed(partial(lookup, absent, cache), n),
                timed(partial(fill, both, how, cache), 2 * n),
                timed(partial(fill, present, how, cache), n),
            ]
        )
    return rows


# --- the run -----------------------------------------------------------------------------------


def _pin() -> None:
    cpus = os.sched_getaffinity(0)
    if len(cpus) > 1:
        os.sched_setaffinity(0, {max(cpus)})


def run(quick: bool = False) -> Section:
    _pin()
    n_ops = 200_000 if quick else 1_000_000
    repeats = 2 if quick else 5
    impls = _available()
    tables: list[Table] = []
    verdicts: list[str] = []
    with tempfile.TemporaryDirectory(prefix="pcb1-") as tmp:
        for variant, median in MEDIANS.items():
            trace = make_trace(variant, n_ops)
            trace_file = Path(tmp) / f"b1_{variant}.trace"
            write_trace(trace, trace_file)
            plan = _plan(trace)
            samples: dict[str, list[float]] = {impl.name: [] for impl in impls}
            hits: dict[str, int] = {}
            for impl in impls:  # warm-up, and the hit counts
                hits[impl.name] = impl.run(plan)
            for _ in range(repeats):  # alternate: A B C ... A B C ...
                for impl in impls:
                    t0 = time.perf_counter_ns()
                    got = impl.run(plan)
                    samples[impl.name].append((time.perf_counter_ns() - t0) / n_ops)
                    if got != hits[impl.name]:
                        raise RuntimeError(f"{impl.name}: hit count changed between runs")
            node = _node(trace_file, repeats)
            native = _native(trace_file, repeats)
            del plan

            rows: list[tuple[str, str, float, float, int]] = []
            for impl in impls:
                s = sorted(samples[impl.name])
                rows.append((impl.name, impl.kind, s[0], statistics.median(s), hits[impl.name]))
            if node is not None:
                rows.append(
                    (
                        "npm lru-cache 11, Claude Code's config (Node)",
                        "strict",
                        float(node["ns_per_op_min"]),
                        float(node["ns_per_op_median"]),
                        int(node["hits"]),
                    )
                )
            if native is not None:
                rows.append(
                    (
                        "postcompact core, native Rust (hashing every key)",
                        "strict",
                        float(native["ns_per_op_min"]),
                        float(native["ns_per_op_median"]),
                        int(native["hits"]),
                    )
                )
                rows.append(
                    (
                        "postcompact core, native Rust (hash cached, as V8/CPython strings)",
                        "strict",
                        float(native["cached_hash_ns_per_op_min"]),
                        float(native["cached_hash_ns_per_op_median"]),
                        int(native["hits"]),
                    )
                )
            strict_hits = {name: h for name, kind, _, _, h in rows if kind == "strict"}
            reference = strict_hits["postcompact core LruCache (Python)"]
            if len(set(strict_hits.values())) != 1:
                raise RuntimeError(f"B1 {variant}: strict LRUs disagree on hits: {strict_hits}")
            by_name = {r[0]: r for r in rows}
            core = by_name["postcompact core LruCache (Python)"][2]
            table_rows: list[Sequence[object]] = [
                [
                    name,
                    kind,
                    best,
                    med,
                    h,
                    "= strict" if h == reference else f"{h - reference:+,}",
                    best / core,
                ]
                for name, kind, best, med, h in rows
            ]
            tables.append(
                Table(
                    f"{variant} trace ({n_ops:,} ops, median file {median // 1024} KB)",
                    [
                        "implementation",
                        "bounds",
                        "ns/op (best)",
                        "ns/op (median)",
                        "hits",
                        "hits vs strict LRU",
                        "time / core LruCache",
                    ],
                    table_rows,
                )
            )

            def ratio(
                name: str, by_name: dict[str, Any] = by_name, core: float = core
            ) -> float | None:
                row = by_name.get(name)
                return None if row is None else float(row[2]) / core

            tag = f"[{variant}]"
            if (r := ratio("lru-dict LRU (count only)")) is not None:
                verdicts.append(
                    verdict(f"{tag} lru-dict / core (Python)", r, 1.5, lower_is_better=False)
                )
            if (r := ratio("OrderedDict two-bound (pure Python)")) is not None:
                verdicts.append(
                    verdict(f"{tag} OrderedDict / core (Python)", r, 2.5, lower_is_better=False)
                )
            if (r := ratio("cachebox 6 LRUCache (count only)")) is not None:
                verdicts.append(verdict(f"{tag} core (Python) / cachebox", 1 / r, 1.1))
            if native is not None and node is not None:
                verdicts.append(
                    verdict(
                        f"{tag} core native (hashing every key) / npm lru-cache",
                        float(native["ns_per_op_min"]) / float(node["ns_per_op_min"]),
                        0.5,
                    )
                )
            if native is not None:
                ns = float(native["ns_per_op_min"])
                verdicts.append(
                    f"{tag} core native: {ns:.0f} ns/op (target <= 100) — "
                    f"{'met' if ns <= 100 else 'NOT met'}"
                )
                if variant == "small":
                    micro = native["micro"]
                    tables.append(
                        Table(
                            "Native single operations (Rust, 100-entry cache, ns/op)",
                            ["get hit", "get miss", "set new (evicts one)", "set update"],
                            [
                                [
                                    micro["get_hit"],
                                    micro["get_miss"],
                                    micro["set_new_evict"],
                                    micro["set_update"],
                                ]
                            ],
                        )
                    )
                    gh = float(micro["get_hit"])
                    verdicts.append(
                        f"core native get-hit: {gh:.0f} ns (target <= 40) — "
                        f"{'met' if gh <= 40 else 'NOT met'}"
                    )
    tables.append(
        Table(
            "Single operations through Python (100-entry cache, ns/op incl. the loop)",
            ["implementation", "get hit", "get miss", "set new (evicts one)", "set update"],
            _micro_python(3 if quick else 7),
        )
    )
    plots = [
        bar_chart(
            t,
            f"b1_{t.caption.split()[0]}.png",
            title=f"B1 {t.caption}: ns/op (best), lower is better",
            value_col=2,
        )
        for t in tables
        if "trace" in t.caption
    ]
    return Section("B1 — cache trace", __doc__ or "", tables, plots, verdicts)


if __name__ == "__main__":
    section = run(quick="--quick" in sys.argv)
    print(section.markdown())
