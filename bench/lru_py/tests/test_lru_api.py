"""The Python surface of the benchmarks' `LruCache` (`postcompact_bench_lru`, bench/lru_py):
values by reference, errors, dump/load, finalisers, garbage collection, the fast entry points.
`make test-bench` runs them; the LRU's own semantics are the core's cargo tests'."""

from __future__ import annotations

import gc
import inspect
import weakref

import pytest
from postcompact_bench_lru import LruCache


def test_lru_cache_basics() -> None:
    cache = LruCache(3, 100)
    value = object()
    assert cache.set("a", value, 10)
    assert cache.get("a") is value
    assert cache.set("b", [1], 0)
    assert cache.size_of("b") == 1  # max(1, size)
    assert cache.set("c", "c", 5)
    assert cache.keys() == ["c", "b", "a"]
    assert cache.peek("a") is value
    assert cache.keys() == ["c", "b", "a"]
    cache.get("a")
    assert cache.keys() == ["a", "c", "b"]
    assert cache.set("d", None, 1)
    assert cache.keys() == ["d", "a", "c"]
    assert cache.evictions == 1
    assert cache.has("d")
    assert cache.get("d") is None
    assert cache.get("missing") is None
    assert not cache.set("e", 1, 101)  # oversize
    assert "e" not in cache
    assert cache.items() == [("d", None), ("a", value), ("c", "c")]
    assert (cache.max_entries, cache.max_size, cache.max_entry_size) == (3, 100, 100)
    assert repr(cache) == (
        "LruCache(len=3, total_size=16, max_entries=3, max_size=100, max_entry_size=100)"
    )
    assert cache.delete("a")
    assert not cache.delete("a")
    cache.clear()
    assert len(cache) == 0
    assert cache.total_size == 0
    assert cache.evictions == 1


def test_lru_cache_errors() -> None:
    with pytest.raises(ValueError, match="size must be >= 0, got -1"):
        LruCache().set("a", 1, -1)
    with pytest.raises(ValueError, match=r"max_entry_size must be between 1 and max_size \(10\)"):
        LruCache(5, 10, 11)
    with pytest.raises(ValueError, match="max_entry_size must be between"):
        LruCache(5, 10, 0)
    with pytest.raises(TypeError):
        LruCache().get(1)  # type: ignore[arg-type]


def test_lru_cache_dump_load_round_trip() -> None:
    cache = LruCache(4, 1000)
    for i, key in enumerate("abcde"):
        cache.set(key, {"v": i}, i * 10)
    cache.get("c")
    dump = cache.dump()
    assert [(k, s) for k, _, s in dump] == [("c", 20), ("e", 40), ("d", 30), ("b", 10)]
    copy = LruCache(4, 1000)
    copy.set("zz", 0, 1)
    copy.load(dump)
    assert copy.dump() == dump
    assert copy.total_size == cache.total_size
    assert copy.dump()[0][1] is dump[0][1]
    smaller = LruCache(2, 1000)
    smaller.load(iter(dump))  # any iterable; the most recently used survive
    assert smaller.keys() == ["c", "e"]


def test_lru_cache_values_with_finalisers_can_use_the_cache() -> None:
    """Evicted values are released after the cache's lock: a finaliser may call back in."""
    cache = LruCache(1, 100)
    seen: list[int] = []

    class Touchy:
        def __del__(self) -> None:
            seen.append(len(cache))
            cache.get("anything")

    cache.set("a", Touchy(), 1)
    cache.set("b", Touchy(), 1)  # evicts a
    assert seen == [1]
    cache.set("b", 0, 1)  # replaces b
    assert seen == [1, 1]
    cache.set("c", Touchy(), 1)
    cache.clear()
    assert seen == [1, 1, 0]


def test_lru_cache_takes_part_in_garbage_collection() -> None:
    class Holder:
        pass

    cache = LruCache()
    holder = Holder()
    holder.cache = cache  # type: ignore[attr-defined]
    cache.set("self", holder, 1)
    ref = weakref.ref(holder)
    del cache, holder
    gc.collect()
    assert ref() is None


def test_lru_cache_fast_calls_match_the_generic_ones() -> None:
    """`get`/`set` take positional calls with an exact str key and int size on a fast path
    (bench/lru_py/src/fast.rs); every other call form goes to the generic method. Both must
    agree."""
    fast, generic = LruCache(3, 10), LruCache(3, 10)

    class Key(str):
        pass

    class Size(int):
        pass

    calls: list[tuple[str, object, int]] = [
        ("a", 1, 2),
        ("b", 2, 3),
        ("a", 3, 1),  # update
        ("c", 4, 4),
        ("d", 5, 4),  # evicts by size
        ("big", 6, 11),  # refused, larger than max_entry_size
        ("e", 7, 0),  # accounted as 1
    ]
    for key, value, size in calls:
        assert fast.set(key, value, size) == generic.set(key=key, value=value, size=size)
        assert (fast.keys(), fast.total_size, fast.evictions) == (
            generic.keys(),
            generic.total_size,
            generic.evictions,
        )
    for key in ("a", "b", "c", "d", "e", "big", "zz"):
        assert fast.get(key) == generic.get(key=key)
    assert fast.keys() == generic.keys()
    # Subclasses go the generic way and behave as their exact counterparts.
    assert fast.set(Key("k"), 8, Size(2)) is True
    assert fast.get(Key("k")) == 8
    assert type(fast.keys()[0]) is str
    # Errors come from the generic methods, for both call forms.
    for bad_size in (-1, 2**70):
        with pytest.raises((ValueError, OverflowError)):
            fast.set("x", 0, bad_size)
        with pytest.raises((ValueError, OverflowError)):
            fast.set("x", 0, size=bad_size)
    with pytest.raises(TypeError):
        fast.get(b"a")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        fast.get()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        fast.set("a", 1)  # type: ignore[call-arg]
    assert list(inspect.signature(LruCache.set).parameters) == ["self", "key", "value", "size"]
    assert "most recently used" in (LruCache.get.__doc__ or "")
