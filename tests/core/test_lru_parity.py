"""The core LRU against npm lru-cache 11 (Claude Code's readFileState cache), step by step.

Seeded random traces of set (random sizes, including 0 and oversize), get, peek, has, delete
and the occasional clear run through lru-cache in Node and through `FileStateCache` (the small
bounds) and the bench-only `LruCache` (every bound; marked `bench_core`: `make test-bench-core`
runs those against the core's featured build, tests/_bench_core.py); after every step the keys
(most to least recently used), the total size, the op's result and the eviction count must be
equal.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from postcompact._core import FileState, FileStateCache

from tests._bench_core import LruCache

from .conftest import NodeReplay

MIB = 1024 * 1024


def make_trace(
    seed: int,
    *,
    max_entries: int,
    max_size: int,
    keys: int,
    steps: int,
    max_entry_size: int | None = None,
) -> dict[str, Any]:
    rng = random.Random(seed)
    bound = max_entry_size or max_size
    names = [f"/repo/src/module_{i}.py" for i in range(keys)]

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


def replay_lru(trace: dict[str, Any]) -> list[list[Any]]:
    cache = LruCache(trace["max"], trace["maxSize"], trace["maxEntrySize"])
    states: list[list[Any]] = []
    for op in trace["ops"]:
        result: Any = None
        match op:
            case ["set", key, value, size]:
                stored = cache.set(key, value, size)
                assert stored == (key in cache)
            case ["get", key]:
                result = cache.get(key)
            case ["peek", key]:
                result = cache.peek(key)
            case ["has", key]:
                result = cache.has(key)
            case ["delete", key]:
                result = cache.delete(key)
            case ["clear"]:
                cache.clear()
        states.append([cache.keys(), cache.total_size, result, cache.evictions])
    assert len(cache) <= trace["max"]
    return states


def replay_file_state(trace: dict[str, Any]) -> list[list[Any]]:
    """The same trace through FileStateCache; a value's id is its timestamp."""
    assert trace["maxEntrySize"] is None
    cache = FileStateCache(trace["max"], trace["maxSize"])
    contents: dict[int, bytes] = {}
    states: list[list[Any]] = []
    for op in trace["ops"]:
        result: Any = None
        match op:
            case ["set", key, value, size]:
                content = contents.setdefault(size, b"x" * size)
                assert cache.set(key, FileState(content, value)) == key
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


@pytest.mark.bench_core
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_claude_code_bounds(seed: int, node_lru: NodeReplay) -> None:
    trace = make_trace(seed, **CLAUDE_CODE)
    assert_same(node_lru(trace), replay_lru(trace), trace)


# Both caches over the small bounds; only FileStateCache is in the default build.
REPLAYS = [
    pytest.param(replay_file_state, id="FileStateCache"),
    pytest.param(replay_lru, id="LruCache", marks=pytest.mark.bench_core),
]


@pytest.mark.parametrize("replay", REPLAYS)
@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("bounds", SMALL, ids=lambda b: f"{b['max_entries']}x{b['max_size']}")
def test_small_bounds(
    bounds: dict[str, int],
    seed: int,
    replay: Callable[[dict[str, Any]], list[list[Any]]],
    node_lru: NodeReplay,
) -> None:
    trace = make_trace(seed, **bounds)
    assert_same(node_lru(trace), replay(trace), trace)


@pytest.mark.bench_core
@pytest.mark.parametrize("seed", [21, 22])
def test_max_entry_size(seed: int, node_lru: NodeReplay) -> None:
    trace = make_trace(seed, max_entries=10, max_size=1000, keys=16, steps=3000, max_entry_size=300)
    assert_same(node_lru(trace), replay_lru(trace), trace)


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
