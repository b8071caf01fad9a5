"""Fuzz of the benchmarks' `LruCache` on arbitrary input, as tests/core/test_fuzz_core.py fuzzes
the core's own entry points (its strategies and its rule: answer, or raise ValueError, TypeError,
or OverflowError for an int beyond 64 bits; never a crash or a PanicException)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from postcompact_bench_lru import LruCache

from tests.core.test_fuzz_core import ANY_TEXT, ANY_VALUE, FUZZ, HUGE_INT, call_safely


@FUZZ
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(["set", "get", "peek", "has", "delete", "size_of"]),
            st.one_of(ANY_TEXT, ANY_VALUE),
            st.one_of(HUGE_INT, ANY_VALUE),
        ),
        max_size=25,
    ),
    bounds=st.tuples(
        st.one_of(st.integers(1, 5), HUGE_INT), st.one_of(st.integers(1, 50), HUGE_INT)
    ),
)
def test_lru_cache_on_anything(ops: list[tuple[str, Any, Any]], bounds: tuple[Any, Any]) -> None:
    ok, cache = call_safely(LruCache, *bounds)
    if not ok:
        return
    for op, key, size in ops:
        if op == "set":
            ok, stored = call_safely(cache.set, key, object(), size)
            if ok:
                assert stored is (max(1, size) <= cache.max_entry_size)
        else:
            call_safely(getattr(cache, op), key)
        keys = cache.keys()
        assert len(keys) == len(set(keys)) == len(cache) <= cache.max_entries
        assert cache.total_size <= cache.max_size


LOADS: list[Any] = [[("k", 1, -1)], [("k",)], [("k", 1, -(2**70))], [(None, 1, 1)]]


@pytest.mark.parametrize("entries", LOADS)
def test_load_with_bad_entries_raises_a_documented_error(entries: Any) -> None:
    cache: Any = LruCache()
    before = cache.keys()
    ok, _ = call_safely(cache.load, entries)
    if not ok:
        assert cache.keys() == before or len(cache) <= cache.max_entries
