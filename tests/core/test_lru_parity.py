"""The core LRU against npm lru-cache 11 (Claude Code's readFileState cache), step by step.

Seeded random traces of set (random sizes, including 0 and oversize), get, peek, has, delete
and the occasional clear run through lru-cache in Node and through `FileStateCache` (Claude
Code's bounds and small ones); after every step the keys (most to least recently used), the
total size, the op's result and the eviction count must be equal.

A per-entry size limit below `max_size` (lru-cache's `maxEntrySize`), which `FileStateCache` has
no use for, is held to lru-cache through a recorded trace, `GOLDEN`: here it must still be what
lru-cache does, and rust_core/tests/lru_golden.rs replays it through the core's LRU (`python -m
tests.core.test_lru_parity` rewrites it). The benchmarks' `LruCache` (bench/lru_py) replays
every trace itself: bench/lru_py/tests/test_lru_parity.py, `make test-bench`.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from postcompact._core import FileState, FileStateCache

from .conftest import NodeReplay, replay_in_node

MIB = 1024 * 1024
GOLDEN = Path(__file__).resolve().parents[2] / "rust_core/tests/data/lru_max_entry_size.json"


def make_trace(
    seed: int,
    key: str = "/repo/src/module_{}.py",
    /,
    *,
    max_entries: int,
    max_size: int,
    keys: int,
    steps: int,
    max_entry_size: int | None = None,
) -> dict[str, Any]:
    rng = random.Random(seed)
    bound = max_entry_size or max_size
    names = [key.format(i) for i in range(keys)]

    def size() -> int:
        roll = rng.random()
        if roll < 0.06:
            return 0
        if roll < 0.12:
            return bound + rng.randint(1, max(1, bound // 4))  # oversize
        if roll < 0.18:
            return bound  # exactly the entry limit
        if roll < 0.35:
            return rng.randint(max(1, max_size // 4), bound)  # large: forces size evictions
        return max(1, int(rng.lognormvariate(0, 1.2) * max_size / (2 * max_entries)))

    ops: list[list[Any]] = []
    for i in range(steps):
        key = rng.choice(names)
        roll = rng.random()
        if roll < 0.42:
            ops.append(["set", key, i, min(size(), 64 * MIB)])
        elif roll < 0.72:
            ops.append(["get", key])
        elif roll < 0.80:
            ops.append(["peek", key])
        elif roll < 0.87:
            ops.append(["has", key])
        elif roll < 0.995:
            ops.append(["delete", key])
        else:
            ops.append(["clear"])
    return {"max": max_entries, "maxSize": max_size, "maxEntrySize": max_entry_size, "ops": ops}


def replay_file_state(trace: dict[str, Any]) -> list[list[Any]]:
    """The same trace through FileStateCache; a value's id is its timestamp. A content of `size`
    bytes is `bytes(size)`: zeroed pages the allocator maps without touching, so Claude Code's
    bounds (entries of up to 32 MiB) cost no memory to speak of."""
    assert trace["maxEntrySize"] is None
    cache = FileStateCache(trace["max"], trace["maxSize"])
    states: list[list[Any]] = []
    for op in trace["ops"]:
        result: Any = None
        match op:
            case ["set", key, value, size]:
                assert cache.set(key, FileState(bytes(size), value)) == key
            case ["get", key]:
                state = cache.get(key)
                result = None if state is None else state.timestamp
            case ["peek", key]:
                state = cache.peek(key)
                result = None if state is None else state.timestamp
            case ["has", key]:
                result = cache.has(key)
            case ["delete", key]:
                result = cache.delete(key)
            case ["clear"]:
                cache.clear()
        states.append([cache.keys(), cache.total_size, result, cache.evictions])
    return states


def assert_same(expected: list[list[Any]], got: list[list[Any]], trace: dict[str, Any]) -> None:
    assert len(expected) == len(got)
    for step, (want, have) in enumerate(zip(expected, got, strict=True)):
        if want != have:
            pytest.fail(
                f"diverged at step {step} ({trace['ops'][step]!r}):\n"
                f"  lru-cache: {want!r}\n  core:      {have!r}"
            )


CLAUDE_CODE = {"max_entries": 100, "max_size": 25 * MIB, "keys": 170, "steps": 4000}
SMALL = [
    {"max_entries": 5, "max_size": 50, "keys": 9, "steps": 3000},
    {"max_entries": 3, "max_size": 10, "keys": 6, "steps": 3000},
    {"max_entries": 50, "max_size": 40, "keys": 70, "steps": 3000},
    {"max_entries": 12, "max_size": 1000, "keys": 20, "steps": 3000},
    {"max_entries": 1, "max_size": 5, "keys": 3, "steps": 1000},
]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_claude_code_bounds(seed: int, node_lru: NodeReplay) -> None:
    trace = make_trace(seed, **CLAUDE_CODE)
    assert_same(node_lru(trace), replay_file_state(trace), trace)


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("bounds", SMALL, ids=lambda b: f"{b['max_entries']}x{b['max_size']}")
def test_small_bounds(bounds: dict[str, int], seed: int, node_lru: NodeReplay) -> None:
    trace = make_trace(seed, **bounds)
    assert_same(node_lru(trace), replay_file_state(trace), trace)


GOLDEN_BOUNDS = {"max_entries": 5, "max_size": 20, "max_entry_size": 8}


def golden_trace() -> dict[str, Any]:
    """The trace of `GOLDEN`: small bounds, `max_entry_size` below `max_size`, so that per-entry
    rejections, count evictions and size evictions all happen within a few hundred steps."""
    return make_trace(21, "k{}", **GOLDEN_BOUNDS, keys=9, steps=600)


def write_golden(trace: dict[str, Any], states: list[list[Any]]) -> None:
    """`GOLDEN`: the trace's bounds, then one op and one lru-cache state per line."""

    def rows(items: list[Any]) -> str:
        return ",\n".join("  " + json.dumps(item, separators=(",", ":")) for item in items)

    bounds = {k: trace[k] for k in ("max", "maxSize", "maxEntrySize")}
    head = json.dumps(bounds, separators=(", ", ": "))[1:-1]
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(
        "{" + head + ',\n"ops": [\n' + rows(trace["ops"]) + "\n],\n"
        '"states": [\n' + rows(states) + "\n]}\n"
    )


def test_max_entry_size_golden_trace_is_lru_cache(node_lru: NodeReplay) -> None:
    """`GOLDEN` is still `golden_trace()` and what lru-cache does with it (the core's side is
    rust_core/tests/lru_golden.rs)."""
    golden = json.loads(GOLDEN.read_text())
    trace = golden_trace()
    states = golden.pop("states")
    redo = f"rewrite it with `{sys.executable} -m tests.core.test_lru_parity`"
    assert golden == trace, f"{GOLDEN} is not golden_trace(): {redo}"
    assert_same(node_lru(trace), states, trace)
    over = [op for op in trace["ops"] if op[0] == "set" and op[3] > GOLDEN_BOUNDS["max_entry_size"]]
    assert len(over) > 20
    assert states[-1][3] > 50  # evictions


def test_traces_exercise_every_path(node_lru: NodeReplay) -> None:
    """Guard the generator: evictions, rejections and hits all happen."""
    trace = make_trace(11, **SMALL[0])
    states = node_lru(trace)
    assert states[-1][3] > 100  # evictions
    rejected = sum(
        1
        for op, state in zip(trace["ops"], states, strict=True)
        if op[0] == "set" and op[1] not in state[0]
    )
    assert rejected > 20
    hits = sum(
        1 for op, s in zip(trace["ops"], states, strict=True) if op[0] == "get" and s[2] is not None
    )
    assert hits > 100


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        trace = golden_trace()
        write_golden(trace, replay_in_node(trace, Path(tmp)))
    print(f"wrote {GOLDEN}")
