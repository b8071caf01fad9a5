"""The rendering and file-system helpers of the core against their Python references:
`number_lines` (render.add_line_numbers as it was in Python), `json_utf16_len` (the UTF-16
length of render.js_json_stringify), `estimate_from_utf16_len` and `realpath`."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from postcompact import _core, diskaccess, render

_LINE_SPLIT = re.compile(r"\r?\n")


def numbered_reference(content: str, start_line: int = 1) -> str:
    """render.add_line_numbers before it moved to the core."""
    if not content:
        return ""
    lines = _LINE_SPLIT.split(content)
    return "\n".join(f"{i + start_line}\t{line}" for i, line in enumerate(lines))


def json_len_reference(text: str) -> int:
    """UTF-16 units of JSON.stringify(text) (lone surrogates escaped as \\udxxx)."""
    return len(render.js_json_stringify(text).encode("utf-16-le", "surrogatepass")) // 2


# Text rich in line breaks (\n, \r\n, lone \r, runs of them), escapes and wide characters.
_ALPHABET = st.sampled_from(
    ["a", "z", " ", "\t", "\n", "\r", "\r\n", '"', "\\", "\x00", "\x1f", "\x7f", "é", "€",
     "中", "😀", "\u2028", "\ufeff", "\U0010ffff"]
)  # fmt: skip
_TEXT = st.one_of(
    st.lists(_ALPHABET, max_size=60).map("".join),
    st.text(st.characters(codec="utf-8"), max_size=200),
)


@given(_TEXT, st.integers(min_value=-5, max_value=10**12))
@settings(max_examples=400, deadline=None)
def test_number_lines_matches_python(text: str, start: int) -> None:
    assert _core.number_lines(text, start) == numbered_reference(text, start)
    assert _core.number_lines(text.encode(), start) == numbered_reference(text, start)
    assert render.add_line_numbers(text, start) == numbered_reference(text, start)


_CLOSING = re.compile(r"<(?=\s*/\s*system-reminder)", re.IGNORECASE)
_ANY = re.compile(r"<(?=\s*/?\s*system-reminder)", re.IGNORECASE)

# Pieces of tags: the brackets, slashes, every kind of space, the letters in every case,
# Python's case-insensitive look-alikes (U+017F for s, U+0130 and U+0131 for i).
_TAG_PIECES = st.sampled_from(
    ["<", "/", ">", " ", "\t", "\n", "\xa0", "\x1c", "\u3000", "system-reminder",
     "SYSTEM-REMINDER", "System-Reminder", "\u017fystem-rem\u0131nder", "system-remİnder",
     "system-remind", "x", "é", "😀"]
)  # fmt: skip


@given(st.lists(_TAG_PIECES, max_size=30).map("".join), st.booleans())
@settings(max_examples=600, deadline=None)
def test_escape_matches_the_python_regex(text: str, opening: bool) -> None:
    """The core's scan escapes exactly what Python's regex spaces and IGNORECASE match."""
    pattern = _ANY if opening else _CLOSING
    want = pattern.sub("&lt;", text)
    got = _core.escape_reminder_tags(text, opening)
    assert (got if got is not None else text) == want
    assert (got is None) == (want == text)
    assert render.escape_reminder_tags(text, opening=opening) == want


def test_escape_of_lone_surrogates_takes_the_regex() -> None:
    text = "\ud800</system-reminder>"
    assert render.escape_reminder_tags(text) == "\ud800&lt;/system-reminder>"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("a", "1\ta"),
        ("a\n", "1\ta\n2\t"),
        ("a\r\nb\r\n", "1\ta\n2\tb\n3\t"),
        ("a\rb\r\r\nc", "1\ta\rb\r\n2\tc"),
        ("\n", "1\t\n2\t"),
        ("x\r", "1\tx\r"),
    ],
)
def test_number_lines_examples(text: str, expected: str) -> None:
    assert _core.number_lines(text) == expected
    assert render.add_line_numbers(text) == expected


@given(st.binary(max_size=300))
@settings(max_examples=400, deadline=None)
def test_number_lines_of_bytes_decodes_like_python(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    assert _core.number_lines(data, 7) == numbered_reference(text, 7)
    assert _core.json_utf16_len(data) == json_len_reference(text)


def test_lone_surrogates() -> None:
    text = "a\ud800\nb\udfff\r\n"
    with pytest.raises(UnicodeEncodeError):
        _core.number_lines(text)
    assert render.add_line_numbers(text) == numbered_reference(text)  # the Python fallback
    assert _core.json_utf16_len(text) == json_len_reference(text)
    assert _core.json_utf16_len("\ud83d\ude00") == 4  # a pair written as surrogates: 2 units


def test_read_tool_result_keeps_bom_and_empty_handling() -> None:
    assert render.read_tool_result("\ufeffa\r\nb", malware_reminder=False) == "1\ta\n2\tb"
    assert render.read_tool_result("\ufeffa", start_line=3, malware_reminder=False) == (
        "3\t\ufeffa"
    )
    assert render.read_tool_result("", total_lines=0) == render.DEFAULT_TEMPLATES.empty_file_warning


@given(_TEXT)
@settings(max_examples=400, deadline=None)
def test_json_utf16_len_matches_js_json_stringify(text: str) -> None:
    expected = len(json.dumps(text, ensure_ascii=False).encode("utf-16-le")) // 2
    assert _core.json_utf16_len(text) == expected == json_len_reference(text)
    assert _core.json_utf16_len(text.encode()) == expected


def test_json_utf16_len_long_inputs() -> None:
    # Past the 64-byte chunking and the 64 KB GIL-release threshold.
    for text in ("x" * 70_000, ('ab"c\\\n' * 20_000) + "中😀", "é" * 40_000 + "\x01"):
        assert _core.json_utf16_len(text) == json_len_reference(text)
        assert _core.number_lines(text, 1) == numbered_reference(text, 1)


@given(st.integers(min_value=0, max_value=10**9), st.sampled_from([None, "ts", "json", ".JSONL"]))
def test_estimate_from_utf16_len_matches_estimate(units: int, ext: str | None) -> None:
    rate = 2 if ext and ext.lower().lstrip(".") in {"json", "jsonl"} else 4
    assert _core.estimate_from_utf16_len(units, ext) == (2 * units + rate) // (2 * rate)
    text = "y" * (units % 3000)
    assert _core.estimate_from_utf16_len(len(text), ext) == _core.estimate(text, ext)


def test_estimate_from_utf16_len_rejects_negative() -> None:
    with pytest.raises(ValueError, match="units must be >= 0"):
        _core.estimate_from_utf16_len(-1)


def test_realpath_matches_python(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f.txt").write_text("x")
    (tmp_path / "la").symlink_to(tmp_path / "a")
    (tmp_path / "a" / "rel").symlink_to("b/f.txt")
    (tmp_path / "a" / "up").symlink_to("../la/b")
    (tmp_path / "dangling").symlink_to("nowhere/x")
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    cases = [
        "la/b/f.txt",
        "la/rel",
        "a/up/f.txt",
        "a/./b/../b//f.txt",
        "missing/x/../y",
        "dangling",
        "dangling/more",
        "la/b/f.txt/..",
        "",
    ]
    for rel in cases:
        p = os.path.join(str(tmp_path), rel)
        assert _core.realpath(p) == os.path.realpath(p), rel
    for p in ("/", "//", "///x/..", "/..", "/tmp/../tmp"):
        assert _core.realpath(p) == os.path.realpath(p), p
    scope = diskaccess.ReadScope.of([str(tmp_path)])
    for rel in [*cases, "loop1", "loop1/x", "a/b/f.txt", "a/rel"]:
        p = os.path.normpath(os.path.join(str(tmp_path), rel))
        assert scope.realpath(p) == os.path.realpath(p), rel
        head, tail = os.path.split(p)
        real_head = os.path.realpath(head)
        if _core.realpath(head) is not None:
            got = _core.realpath(tail, real_head)
            assert got is None or got == os.path.realpath(p), rel
    assert scope.real_roots == (os.path.realpath(tmp_path),)
    assert _core.realpath(str(tmp_path / "loop1")) is None  # Python's own path for loops
    assert _core.realpath("relative/x") is None
    assert _core.realpath(tmp_path / "la") == os.path.realpath(tmp_path / "la")
