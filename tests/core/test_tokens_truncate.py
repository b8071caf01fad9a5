"""Head truncation to a token budget: Claude Code's truncateToTokens (rough) and an exact variant.

Invariants for both counters: never over budget, valid text, the input unchanged when it fits,
otherwise a prefix of the input followed by the marker.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from postcompact import _core

from tests.core import token_facade as tokens

SKILL_MARKER = (
    "\n\n[... skill content truncated for compaction; "
    "use Read on the skill path if you need the full text]"
)


def units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def js_truncate(content: str, max_tokens: int, marker: str) -> str:
    """Claude Code's truncateToTokens, on UTF-16 like JavaScript: `content` when
    round(length / 4) <= max_tokens, else content.slice(0, max_tokens * 4 - marker.length) +
    marker; a slice end inside a surrogate pair moves one unit back (JavaScript would keep half
    a pair) and a negative end is 0 (JavaScript would count from the end)."""
    u = units(content)
    if (len(u) + 2) // 4 <= max_tokens:
        return content
    keep = min(max(0, max_tokens * 4 - len(units(marker))), len(u))
    if keep and 0xD800 <= u[keep - 1] < 0xDC00 and keep < len(u) and 0xDC00 <= u[keep] < 0xE000:
        keep -= 1
    head = b"".join(x.to_bytes(2, "little") for x in u[:keep])
    return head.decode("utf-16-le", "surrogatepass") + marker


def test_skill_truncation_like_claude_code() -> None:
    assert len(SKILL_MARKER) == 100
    content = "x" * 30_000
    out = _core.truncate_to_tokens(content, 5000, SKILL_MARKER)
    assert out == "x" * 19_900 + SKILL_MARKER
    assert _core.estimate(out) == 5000
    fits = "y" * 20_001  # round(20001 / 4) = 5000
    assert _core.truncate_to_tokens(fits, 5000, SKILL_MARKER) is fits
    assert _core.truncate_to_tokens("y" * 20_002, 5000, SKILL_MARKER) == "y" * 19_900 + SKILL_MARKER


@pytest.mark.parametrize(
    "text",
    [
        "😀" * 100,
        "a😀" * 80,
        "日本語" * 90,
        "héllo wörld " * 40,
        "mixed 😀 日本 é " * 30,
        "\U0010ffff" * 64,
    ],
    ids=["emoji", "ascii-emoji", "cjk", "latin1", "mixed", "max-codepoint"],
)
@pytest.mark.parametrize("max_tokens", [1, 2, 3, 10, 25, 26, 27, 60, 61])
def test_rough_matches_js_model(text: str, max_tokens: int) -> None:
    marker = "[cut]"
    expected = js_truncate(text, max_tokens, marker)
    assert _core.truncate_to_tokens(text, max_tokens, marker) == expected
    assert _core.truncate_to_tokens(text.encode(), max_tokens, marker) == expected.encode()


def test_rough_never_splits_a_surrogate_pair() -> None:
    # 3 ASCII units then emoji: a 4-unit budget minus a 0-unit marker ends inside the 2nd emoji.
    text = "abc" + "😀" * 10
    assert _core.truncate_to_tokens(text, 1) == "abc"
    # 8 units: "abc" + two emoji is 7, a third would need 9.
    out = _core.truncate_to_tokens(text, 2)
    assert out == "abc😀😀"
    assert _core.utf16_len(out) == 7
    # Explicit surrogate code points in a str (a pair spelled as two code points) stay together.
    spelled = "abc" + "\ud83d\ude00" * 10
    assert _core.truncate_to_tokens(spelled, 1) == "abc"


@settings(max_examples=300, deadline=None)
@given(
    st.text(max_size=400),
    st.integers(0, 120),
    st.sampled_from(["", "…", "[cut]", "\n\n[... truncated 😀]", SKILL_MARKER]),
)
def test_rough_properties(text: str, max_tokens: int, marker: str) -> None:
    assume(_core.estimate(marker) <= max_tokens)
    out = _core.truncate_to_tokens(text, max_tokens, marker, "rough")
    assert out == js_truncate(text, max_tokens, marker)
    assert _core.estimate(out) <= max_tokens or out is text
    if _core.estimate(text) <= max_tokens:
        assert out is text
    else:
        assert _core.estimate(out) <= max_tokens
        assert out.endswith(marker)
        assert text.startswith(out[: len(out) - len(marker)])
    assert _core.truncate_to_tokens(text.encode(), max_tokens, marker, "rough") == out.encode()


MARKERS = ["", "…", "\n[cut]", " [... truncated ...]", "<|endoftext|>", "\n\n"]


@settings(max_examples=150, deadline=None)
@given(
    st.text(max_size=300),
    st.integers(0, 80),
    st.sampled_from(MARKERS),
    st.sampled_from(tokens.ENCODINGS),
)
def test_exact_properties(text: str, max_tokens: int, marker: str, encoding: str) -> None:
    assume(_core.count(marker, encoding) <= max_tokens)
    out = _core.truncate_to_tokens(text, max_tokens, marker, "exact", encoding)
    assert _core.count(out, encoding) <= max_tokens
    if _core.count(text, encoding) <= max_tokens:
        assert out is text
        return
    assert out.endswith(marker)
    kept = out[: len(out) - len(marker)]
    assert text.startswith(kept)
    # Longest: one more character would not fit.
    longer = text[: len(kept) + 1]
    assert _core.count(longer + marker, encoding) > max_tokens
    assert _core.truncate_to_tokens(text.encode(), max_tokens, marker, "exact", encoding) == (
        out.encode()
    )


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.sampled_from(["def f(x):\n", "    return x\n", "日本語。", "😀", " ", "a" * 50, "\n\n"]),
        min_size=1,
        max_size=400,
    ).map("".join),
    st.integers(1, 600),
    st.sampled_from(tokens.ENCODINGS),
)
def test_exact_on_longer_texts(text: str, max_tokens: int, encoding: str) -> None:
    marker = "\n[... truncated]"
    assume(_core.count(marker, encoding) <= max_tokens)
    out = _core.truncate_to_tokens(text, max_tokens, marker, "exact", encoding)
    assert _core.count(out, encoding) <= max_tokens
    if out is not text:
        kept = out.removesuffix(marker)
        assert text.startswith(kept)
        assert _core.count(text[: len(kept) + 1] + marker, encoding) > max_tokens


def test_exact_examples() -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 100
    out = _core.truncate_to_tokens(text, 50, " [...]", "exact")
    assert _core.count(out) == 50
    assert out == text[: len(out) - 6] + " [...]"
    big = "日本語のテキスト、" * 5000  # above the GIL-release threshold
    out = _core.truncate_to_tokens(big, 1000, "…", "exact", "cl100k_base")
    assert _core.count(out, "cl100k_base") <= 1000
    assert big.startswith(out[:-1])


@given(
    st.lists(st.one_of(st.text(max_size=200), st.binary(max_size=0)), max_size=12),
    st.integers(2, 40),
    st.sampled_from(["rough", "exact"]),
)
def test_batch_is_map_of_singles(texts: list[str | bytes], max_tokens: int, counter: str) -> None:
    marker = "[x]"
    expected = [_core.truncate_to_tokens(t, max_tokens, marker, counter) for t in texts]
    assert _core.truncate_batch(texts, max_tokens, marker, counter) == expected


def test_batch_large_exact_runs_in_threads() -> None:
    texts = [f"chunk {i} " * 4000 for i in range(12)]
    out = _core.truncate_batch(texts, 300, "…", "exact", "o200k_base")
    assert out == [_core.truncate_to_tokens(t, 300, "…", "exact") for t in texts]
    assert all(_core.count(o) <= 300 for o in out)


def test_bytes_in_bytes_out() -> None:
    text = "héllo wörld " * 100
    out = _core.truncate_to_tokens(text.encode(), 10, "…")
    assert isinstance(out, bytes)
    assert out == (text[:39] + "…").encode()  # 40 units - 1 for the marker (BMP: 1 unit each)
    short = b"short"
    assert _core.truncate_to_tokens(short, 10) is short
    with pytest.raises(ValueError, match="valid UTF-8"):
        _core.truncate_to_tokens(b"\xff" * 100, 10)


def test_facade() -> None:
    text = "word " * 1000
    assert tokens.truncate(text, 10, "…", tokens.Counter.EXACT) == _core.truncate_to_tokens(
        text, 10, "…", "exact"
    )
    assert tokens.truncate_batch([text], 10) == [_core.truncate_to_tokens(text, 10)]


def test_errors() -> None:
    with pytest.raises(ValueError, match="max_tokens must be >= 0, got -1"):
        _core.truncate_to_tokens("abc", -1)
    with pytest.raises(ValueError, match=r"marker alone needs 25 tokens, more than max_tokens=10"):
        _core.truncate_to_tokens("abc", 10, SKILL_MARKER)
    with pytest.raises(ValueError, match="marker alone needs"):
        _core.truncate_to_tokens("abc", 2, SKILL_MARKER, "exact")
    with pytest.raises(
        ValueError, match="unknown counter 'fast': expected one of 'rough', 'exact'"
    ):
        _core.truncate_to_tokens("abc", 10, "", "fast")
    with pytest.raises(ValueError, match="unknown encoding 'r50k_base'"):
        _core.truncate_to_tokens("abc", 10, "", "exact", "r50k_base")
    with pytest.raises(ValueError, match="max_tokens must be >= 0"):
        _core.truncate_batch(["abc"], -5)
    with pytest.raises(TypeError, match="must be str or bytes"):
        _core.truncate_to_tokens(None, 10)  # type: ignore[call-overload]


# Pieces whose UTF-8 copy differs from the str: lone surrogates (counted as U+FFFD), surrogate
# pairs spelled out as two code points (merged into one character by the copy), astral
# characters.
SURROGATE_PIECES = ["\ud800", "\udfff", "\ud83d\ude00", "😀", "é", "x", "ab", "\n"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(SURROGATE_PIECES), max_size=120).map("".join),
    st.integers(1, 40),
    st.sampled_from(["", "…"]),
    st.sampled_from(["rough", "exact"]),
)
def test_str_with_surrogates_keeps_a_prefix(
    text: str, max_tokens: int, marker: str, counter: str
) -> None:
    """The kept part is a prefix of the input itself, code point for code point, whichever
    pieces the str holds."""
    encoding = "o200k_base"
    out = _core.truncate_to_tokens(text, max_tokens, marker, counter, encoding)
    if out is text:
        return
    assert out.endswith(marker)
    assert text.startswith(out[: len(out) - len(marker)])


def test_str_with_surrogates_examples() -> None:
    for text in (
        "😀\ud800" + "x" * 100,
        "😀\ud83d\ude00" + "x" * 100,
        "\ud83d\ude00" * 3 + "y" * 99,
    ):
        for counter in ("rough", "exact"):
            out = _core.truncate_to_tokens(text, 5, "", counter, "o200k_base")
            assert out
            assert text.startswith(out), (text[:8], counter, out[:8])
