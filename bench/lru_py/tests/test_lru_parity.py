"""The benchmarks' `LruCache` against npm lru-cache 11, step by step: the traces of
tests/core/test_lru_parity.py (Claude Code's bounds, small ones, and a per-entry size limit below
`max_size`), replayed through `LruCache`; after every step the keys (most to least recently used),
the total size, the op's result and the eviction count must be equal."""

from __future__ import annotations

from typing import Any

import pytest
from postcompact_bench_lru import LruCache

from tests.core.conftest import NodeReplay
from tests.core.test_lru_parity import CLAUDE_CODE, SMALL, assert_same, make_trace


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


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_claude_code_bounds(seed: int, node_lru: NodeReplay) -> None:
    trace = make_trace(seed, **CLAUDE_CODE)
    assert_same(node_lru(trace), replay_lru(trace), trace)


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("bounds", SMALL, ids=lambda b: f"{b['max_entries']}x{b['max_size']}")
def test_small_bounds(bounds: dict[str, int], seed: int, node_lru: NodeReplay) -> None:
    trace = make_trace(seed, **bounds)
    assert_same(node_lru(trace), replay_lru(trace), trace)


@pytest.mark.parametrize("seed", [21, 22])
def test_max_entry_size(seed: int, node_lru: NodeReplay) -> None:
    trace = make_trace(seed, max_entries=10, max_size=1000, keys=16, steps=3000, max_entry_size=300)
    assert_same(node_lru(trace), replay_lru(trace), trace)
