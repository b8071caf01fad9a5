"""Fuzz of the core's Python entry points on arbitrary input (issue 5, "Tests and runs").

Every entry point of `postcompact._core` gets arbitrary values — any str (lone surrogates, NUL,
astral characters), any bytes (invalid UTF-8), ints far outside 64 bits, None, floats, lists,
objects — and must either answer or raise one of the documented exception types: ValueError
(UnicodeError included) or TypeError, plus OverflowError only when an int argument does not fit
in 64 bits (PyO3's conversion). Never a crash, a hang or a PanicException. Where the input is
valid, the invariants that matter to the daemon are checked: estimates/counts are non-negative
and consistent across str/bytes and batch forms, truncation never exceeds the budget and keeps a
prefix, expand_path yields an absolute, normalised, NFC, idempotent path, and the FileStateCache
keeps its bounds and normalised keys whatever the keys and contents.

The oracle comparisons (tiktoken, lru-cache, the JS rounding model) live in the other tests of
this directory; this file is about robustness. Deterministic: derandomize=True. The same for
the benchmarks' `LruCache` is in bench/lru_py/tests/test_lru_fuzz.py (`make test-bench`).
"""

from __future__ import annotations

import contextlib
import posixpath
import re
import unicodedata
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from postcompact import _core

FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
I64 = (-(2**63), 2**63 - 1)

ANY_TEXT = st.text(max_size=80)  # surrogates included
ANY_BYTES = st.binary(max_size=80)
HUGE_INT = st.one_of(
    st.integers(-5, 300),
    st.sampled_from([I64[0], I64[1], I64[1] + 1, I64[0] - 1, 2**32, 2**64, -(2**64), 10**30]),
)
ANY_VALUE: st.SearchStrategy[Any] = st.one_of(
    ANY_TEXT,
    ANY_BYTES,
    HUGE_INT,
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True),
    st.lists(st.one_of(ANY_TEXT, ANY_BYTES, st.integers()), max_size=3),
    st.just(object()),
    st.just(bytearray(b"abc")),
)


def _fits_i64(v: Any) -> bool:
    """Every int in `v` (lists and tuples walked) fits in 64 bits."""
    if isinstance(v, list | tuple):
        return all(_fits_i64(x) for x in v)
    if isinstance(v, bool) or not isinstance(v, int):
        return True
    return I64[0] <= v <= I64[1]


def call_safely(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[bool, Any]:
    """(True, result) or (False, exception) for a documented exception type; anything else
    fails the test."""
    try:
        return True, fn(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        return False, exc
    except OverflowError as exc:
        overflow = exc
    values = [*args, *kwargs.values()]
    assert not _fits_i64(values), (fn, args, kwargs, overflow)
    return False, overflow


# --- tokens --------------------------------------------------------------------------------------

EXTS = st.one_of(st.none(), st.sampled_from(["json", "JSONL", ".jsonc", "py", ""]), ANY_TEXT)
ENCODINGS = st.one_of(st.sampled_from(["o200k_base", "cl100k_base"]), ANY_TEXT)
COUNTERS = st.one_of(st.sampled_from(["rough", "exact"]), ANY_TEXT)


@FUZZ
@given(text=ANY_VALUE, ext=st.one_of(EXTS, ANY_VALUE))
def test_estimate_and_utf16_len_on_anything(text: Any, ext: Any) -> None:
    ok, n = call_safely(_core.estimate, text, ext)
    if ok:
        assert isinstance(n, int)
        assert n >= 0
        units = _core.utf16_len(text)
        assert n in ((units + 2) // 4, (units + 1) // 2)  # chars/4 or chars/2, halves up
    ok_b, batch = call_safely(_core.estimate_batch, [text, text], ext)
    if ok and ok_b:
        assert batch == [n, n]


@FUZZ
@given(text=st.one_of(ANY_TEXT, ANY_BYTES), ext=EXTS)
def test_estimate_never_refuses_text(text: str | bytes, ext: str | None) -> None:
    n = _core.estimate(text, ext)  # any str or bytes, any extension: never an error
    assert n >= 0
    if isinstance(text, bytes):
        assert n == _core.estimate(text.decode("utf-8", "replace"), ext)


@FUZZ
@given(text=ANY_VALUE, encoding=st.one_of(ENCODINGS, ANY_VALUE))
def test_count_on_anything(text: Any, encoding: Any) -> None:
    ok, n = call_safely(_core.count, text, encoding)
    if ok:
        assert isinstance(n, int)
        assert n >= 0
        assert (n == 0) == (len(text) == 0)
        if isinstance(text, str) and not _has_surrogates(text):
            assert _core.count(text.encode(), encoding) == n
    else:
        bad_type = not isinstance(text, str | bytes) or not isinstance(encoding, str)
        bad_utf8 = isinstance(text, bytes) and not _valid_utf8(text)
        assert bad_type or bad_utf8 or encoding not in _core.ENCODINGS, n


@FUZZ
@given(texts=st.lists(st.one_of(ANY_TEXT, ANY_BYTES), max_size=4), encoding=ENCODINGS)
def test_count_batch_is_the_map_of_count(texts: list[str | bytes], encoding: str) -> None:
    ok, got = call_safely(_core.count_batch, texts, encoding)
    singles = [call_safely(_core.count, t, encoding) for t in texts]
    if ok:
        assert got == [r for _, r in singles]
    else:
        assert any(not s_ok for s_ok, _ in singles) or not texts or encoding not in _core.ENCODINGS


@FUZZ
@given(
    text=st.one_of(ANY_TEXT, ANY_BYTES, ANY_VALUE),
    max_tokens=st.one_of(HUGE_INT, ANY_VALUE),
    marker=st.one_of(st.sampled_from(["", "…[truncated]"]), ANY_TEXT, ANY_VALUE),
    counter=COUNTERS,
    encoding=ENCODINGS,
)
def test_truncate_on_anything(
    text: Any, max_tokens: Any, marker: Any, counter: Any, encoding: Any
) -> None:
    ok, out = call_safely(_core.truncate_to_tokens, text, max_tokens, marker, counter, encoding)
    ok_b, outs = call_safely(_core.truncate_batch, [text], max_tokens, marker, counter, encoding)
    if ok and ok_b:
        assert outs == [out]
    if not ok:
        return
    assert type(out) is type(text)
    measure: Callable[[Any], int] = (
        (lambda t: _core.count(t, encoding)) if counter == "exact" else _core.estimate
    )
    if out is text:
        assert measure(text) <= max_tokens or counter not in ("rough", "exact")
        return
    assert measure(out) <= max_tokens
    assert out.endswith(marker if isinstance(out, str) else marker.encode())
    head = out[: len(out) - len(marker if isinstance(out, str) else marker.encode())]
    assert text.startswith(head)


# --- paths ---------------------------------------------------------------------------------------

PATH_ALPHABET = st.sampled_from([*"ab./~ \t\n\u00e9\u0301\u00a0\u2028", "..", "//", "\x00"])
PATHS = st.one_of(st.lists(PATH_ALPHABET, max_size=12).map("".join), ANY_TEXT)
ABS_DIRS = st.one_of(
    st.sampled_from(["/", "/w", "/w/x", "/home/u", "//w", "/w/", "/w/./x/.."]),
    PATHS,
    st.none(),
    ANY_VALUE,
)


def _has_surrogates(s: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def _valid_utf8(b: bytes) -> bool:
    try:
        b.decode()
    except UnicodeDecodeError:
        return False
    return True


def assert_canonical(p: str) -> None:
    assert p.startswith("/"), p
    assert "\x00" not in p
    assert p == "/" or not p.endswith("/"), p
    assert "//" not in p, p
    parts = p.split("/")[1:]
    assert "." not in parts, p
    assert ".." not in parts, p
    assert unicodedata.is_normalized("NFC", p), p


@FUZZ
@given(path=st.one_of(PATHS, ANY_VALUE), cwd=ABS_DIRS, home=ABS_DIRS)
def test_expand_path_on_anything(path: Any, cwd: Any, home: Any) -> None:
    ok, out = call_safely(_core.expand_path, path, cwd, home)
    if not ok:
        return
    assert isinstance(out, str)
    assert_canonical(out)
    again = _core.expand_path(out, cwd, home)
    assert again == out
    assert again is out  # already canonical: the argument itself


@FUZZ
@given(path=st.lists(st.sampled_from(["a", "b", ".", "..", "", "\u00e9", "e\u0301"]), max_size=8))
def test_expand_path_agrees_with_posix_normalisation(path: list[str]) -> None:
    raw = "/".join(path)
    out = _core.expand_path(raw, "/w/x", "/home/u")
    joined = posixpath.join("/w/x", raw) if raw else "/w/x"
    expected = posixpath.normpath(re.sub("/+", "/", joined))
    assert out == unicodedata.normalize("NFC", expected)


# --- caches --------------------------------------------------------------------------------------

STATES = st.builds(
    _core.FileState,
    content=ANY_BYTES,
    timestamp=st.integers(*I64),
    offset=st.one_of(st.none(), st.integers(0, 2**40)),
    limit=st.one_of(st.none(), st.integers(0, 2**40)),
    partial_view=st.booleans(),
)
OPS = st.lists(
    st.tuples(
        st.sampled_from(["set", "get", "peek", "has", "in", "delete", "normalize", "merge"]),
        st.one_of(PATHS, ANY_VALUE),
        st.one_of(STATES, ANY_VALUE),
    ),
    max_size=25,
)


@FUZZ
@given(
    ops=OPS,
    max_entries=st.one_of(st.integers(1, 6), HUGE_INT),
    max_size=st.one_of(st.integers(1, 200), HUGE_INT),
    cwd=ABS_DIRS,
    home=ABS_DIRS,
)
def test_file_state_cache_on_anything(
    ops: list[tuple[str, Any, Any]], max_entries: Any, max_size: Any, cwd: Any, home: Any
) -> None:
    ok, cache = call_safely(_core.FileStateCache, max_entries, max_size, cwd=cwd, home=home)
    if not ok:
        return
    other = _core.FileStateCache(4, 100, cwd="/w", home="/h")
    for op, path, state in ops:
        if op == "set":
            ok, key = call_safely(cache.set, path, state)
            if ok:
                assert key == cache.normalize(path)
                assert_canonical(key)
                if len(state.content) <= max_size:
                    assert cache.peek(key) is state
            call_safely(other.set, path, state)
        elif op == "in":
            with contextlib.suppress(ValueError, TypeError):
                path in cache  # noqa: B015 (the membership test itself is what is fuzzed)
        elif op == "merge":
            merged = cache.merge(other)
            assert len(merged) <= merged.max_entries
            clone = cache.clone()
            assert clone.keys() == cache.keys()
        else:
            call_safely(getattr(cache, op), path)
        keys = cache.keys()
        assert len(keys) == len(set(keys)) == len(cache) <= cache.max_entries
        assert cache.total_size <= cache.max_size
        assert [k for k, _ in cache.snapshot()] == keys
        for k in keys:
            assert_canonical(k)
            assert cache.has(k)


LOADS: list[Any] = [
    [("a", "not a state")],
    [("a", _core.FileState(b"", 0))] * 3,
    [("/a", _core.FileState(b"", 0), 3)],
    5,
    [5],
]


@pytest.mark.parametrize("entries", LOADS)
def test_load_with_bad_entries_raises_a_documented_error(entries: Any) -> None:
    cache: Any = _core.FileStateCache(cwd="/w")
    before = cache.keys()
    ok, _ = call_safely(cache.load, entries)
    if not ok:
        assert cache.keys() == before or len(cache) <= cache.max_entries
