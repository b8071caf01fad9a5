"""`line_diff`, the core's line diff of a write (rust_core/src/linediff.rs), against a Python
reference: the lines (the daemon's: `state.seen.line_count`) trimmed one by one of their common
head and tail; and what a span carried over by it keeps."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from postcompact import _core
from postcompact.state.seen import line_count


def _lines(content: bytes) -> list[bytes]:
    return content.split(b"\n") if content else []


def reference(old: bytes, new: bytes) -> tuple[int, int, int, int]:
    """(prefix, old_mid, new_mid, suffix) by lines."""
    a, b = _lines(old), _lines(new)
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    return prefix, len(a) - prefix - suffix, len(b) - prefix - suffix, suffix


_TEXT = st.lists(st.sampled_from([b"a", b"b", b"\n", b"\n", "é".encode(), b"\r\n"])).map(b"".join)


@settings(max_examples=500)
@given(old=_TEXT, new=_TEXT)
def test_the_change_is_the_lines_between_the_common_head_and_tail(old: bytes, new: bytes) -> None:
    d = _core.line_diff(old, new)
    prefix, old_mid, new_mid, suffix = reference(old, new)
    assert (d.old_lines, d.new_lines) == (line_count(old), line_count(new))
    assert repr(d) == (
        f"LineDiff(prefix={prefix}, old_mid={old_mid}, new_mid={new_mid}, suffix={suffix})"
    )
    assert d.changed == ([(prefix + 1, prefix + new_mid)] if new_mid else [])
    # Every line seen, carried over and widened by the change: every line of the new content.
    if d.old_lines and d.new_lines:
        span = d.map_span(1, d.old_lines)
        assert span is not None
        lo, hi = span
        for first, last in d.changed:
            lo, hi = min(lo, first), max(hi, last)
        assert (lo, hi) == (1, d.new_lines)


def test_lines_appended_extend_a_whole_span_to_the_new_end() -> None:
    old = b"".join(b"line %d\n" % i for i in range(1, 9))
    new = b"".join(b"line %d\n" % i for i in range(1, 15))
    d = _core.line_diff(old, new)
    assert (d.old_lines, d.new_lines, d.changed) == (9, 15, [(9, 14)])
    assert d.map_span(1, 9) == (1, 15)


def test_a_span_below_an_insertion_shifts_and_one_deleted_whole_stays_near() -> None:
    old = b"".join(b"l%d\n" % i for i in range(1, 101))
    inserted = old.replace(b"l10\n", b"l10\nx\ny\n")
    assert _core.line_diff(old, inserted).map_span(50, 60) == (52, 62)
    deleted = old.replace(b"l50\nl51\n", b"")
    assert _core.line_diff(old, deleted).map_span(50, 51) == (49, 50)
    assert _core.line_diff(old, b"").map_span(1, 3) is None


def test_large_inputs_diff_alike() -> None:
    """Over 64 KB the diff runs without the GIL: the same answer."""
    old = b"".join(b"row %06d of a long file\n" % i for i in range(20_000))
    new = old.replace(b"row 010000 of", b"row 010000 changed, of")
    d = _core.line_diff(old, new)
    assert (d.changed, d.map_span(9_000, 12_000)) == ([(10_001, 10_001)], (9_000, 12_000))


@pytest.mark.parametrize(("first", "last"), [(0, 3), (-1, 2), (5, 4)])
def test_a_span_is_lines_from_one(first: int, last: int) -> None:
    with pytest.raises(ValueError, match="1 <= first <= last"):
        _core.line_diff(b"a\n", b"b\n").map_span(first, last)
