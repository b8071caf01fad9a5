"""Rough estimate and UTF-16 length: Claude Code's roughTokenCountEstimation(ForFileType)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from postcompact import _core

from tests.core import token_facade as tokens


def js_length(text: str) -> int:
    """JavaScript `.length`: UTF-16 code units (lone surrogates count 1)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_round(x: float) -> int:
    """`Math.round` for non-negative numbers: halves go up."""
    return int(x + 0.5)


def reference(text: str, ext: str | None = None) -> int:
    e = (ext or "").lower().removeprefix(".")
    return js_round(js_length(text) / (2 if e in {"json", "jsonl", "jsonc"} else 4))


def lossy(data: bytes) -> str:
    """What a JavaScript caller sees after a lossy UTF-8 decode (one U+FFFD per maximal invalid
    subpart; CPython's 'replace' handler follows the same rule)."""
    return data.decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("text", "units"),
    [
        ("", 0),
        ("a", 1),
        ("hello world", 11),
        ("héllo", 5),  # Latin-1 str
        ("日本語のテキスト", 8),  # CJK: one unit each
        ("한국어", 3),
        ("€", 1),
        ("😀", 2),  # astral: a surrogate pair
        ("a😀b", 4),
        ("\U0001d54f\U0001d550\U0001d551", 6),
        ("👨‍👩‍👧", 8),  # ZWJ sequence: 3 astral + 2 ZWJ
        ("\U0010ffff", 2),
        ("\ud800", 1),  # a lone surrogate counts 1, as in JavaScript
        ("\ud83d\ude00", 2),
    ],
)
def test_utf16_len_vectors(text: str, units: int) -> None:
    assert _core.utf16_len(text) == units
    assert js_length(text) == units
    if "\ud800" not in text and "\ud83d" not in text:
        assert _core.utf16_len(text.encode()) == units


@pytest.mark.parametrize(
    ("units", "ext", "expected"),
    [
        (0, None, 0),
        (1, None, 0),
        (2, None, 1),  # 0.5 rounds up
        (5, None, 1),
        (6, None, 2),  # 1.5 rounds up
        (10, None, 3),  # 2.5 rounds up
        (1, "json", 1),  # 0.5 rounds up
        (3, "json", 2),  # 1.5 rounds up
        (4, "jsonl", 2),
        (5, "JSONC", 3),
        (5, ".json", 3),
        (5, ".Json", 3),
        (5, "js", 1),
        (5, "jsonx", 1),
        (5, "", 1),
    ],
)
def test_rounding_and_extensions(units: int, ext: str | None, expected: int) -> None:
    text = "x" * units
    assert _core.estimate(text, ext) == expected
    assert _core.estimate(text.encode(), ext) == expected
    assert reference(text, ext) == expected


def test_claude_code_examples() -> None:
    assert _core.estimate("x" * 20_000) == 5_000
    assert _core.estimate("日本語" * 1000) == 750  # CJK counts 1 unit per character
    assert _core.estimate("😀" * 1000) == 500  # emoji count 2 units
    assert _core.estimate('{"k": "v"}', "json") == 5


@pytest.mark.parametrize(
    "data",
    [
        b"\xff",
        b"\xff\xfe",
        b"a\x80b",
        b"\x80\x80\x80",
        b"\xe6\x97",  # truncated 3-byte sequence: one U+FFFD
        b"\xe6\x97a",
        b"\xf0\x9f\x98",  # truncated emoji: one U+FFFD
        b"\xf0\x9f\x98\x80\x80",
        b"\xc0\xaf",  # overlong: two
        b"\xe0\x80\x80",
        b"\xed\xa0\x80",  # encoded surrogate: three
        b"\xf4\x90\x80\x80",  # above U+10FFFF: four
        b"ok \xe6\x97\xa5\xe6 end",
        b"x" * 40_000 + b"\xe6\x97" + "😀".encode() * 9_000 + b"\xf0",
    ],
)
def test_invalid_utf8_counts_as_lossy_decode(data: bytes) -> None:
    assert _core.utf16_len(data) == js_length(lossy(data))
    assert _core.estimate(data) == reference(lossy(data))


@given(st.binary(max_size=300))
def test_any_bytes_count_as_lossy_decode(data: bytes) -> None:
    assert _core.utf16_len(data) == js_length(lossy(data))


@given(st.text(), st.sampled_from([None, "json", "py", ".JSONL", "jsonc"]))
def test_str_and_bytes_agree(text: str, ext: str | None) -> None:
    expected = reference(text, ext)
    assert _core.estimate(text, ext) == expected
    assert _core.estimate(text.encode(), ext) == expected
    assert tokens.estimate(text, ext) == expected


@given(st.text(st.one_of(st.characters(), st.characters(categories=["Cs"])), max_size=200))
def test_str_with_surrogates_counts_like_javascript(text: str) -> None:
    assert _core.utf16_len(text) == js_length(text)


@given(st.lists(st.one_of(st.text(), st.binary()), max_size=20), st.sampled_from([None, "json"]))
def test_batch_is_map_of_singles(items: list[str | bytes], ext: str | None) -> None:
    assert _core.estimate_batch(items, ext) == [_core.estimate(t, ext) for t in items]


def test_large_inputs() -> None:
    big = ("code();\n" * 200_000 + "日本😀") * 2
    assert _core.estimate(big) == reference(big)
    assert _core.estimate(big.encode()) == reference(big)
    assert _core.estimate_batch([big.encode(), big, b""]) == [reference(big)] * 2 + [0]


def test_type_errors() -> None:
    with pytest.raises(TypeError, match="text must be str or bytes, not int"):
        _core.estimate(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="item must be str or bytes"):
        _core.estimate_batch([None])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="sequence of str or bytes"):
        _core.estimate_batch("abc")
