"""Exact BPE counts: identical to tiktoken's len(encode_ordinary(text)), offline."""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from postcompact import _core

from bench import corpus
from tests._tiktoken_offline import ENCODINGS, load_encoding
from tests.core import token_facade as tokens

Counter = Callable[[str], int]


@pytest.fixture(scope="module", params=ENCODINGS)
def encoding(request: pytest.FixtureRequest, tiktoken_cache: Path) -> str:
    name: str = request.param
    return name


@pytest.fixture(scope="module")
def tiktoken_count(encoding: str) -> Counter:
    enc = load_encoding(encoding)
    return lambda text: len(enc.encode_ordinary(text))


def _stdlib_sample() -> str:
    lib = Path(sysconfig.get_paths()["stdlib"])
    parts = [
        (lib / name).read_text(encoding="utf-8") for name in ("json/decoder.py", "textwrap.py")
    ]
    return "".join(parts)


SPECIAL = "<|endoftext|> <|fim_prefix|><|fim_middle|><|fim_suffix|><|endofprompt|> <|im_start|>"

CORPUS: dict[str, str] = {
    "empty": "",
    "code": _stdlib_sample(),
    "prose": (
        "It was the best of times, it was the worst of times; it was the age of wisdom... "
        "Don't, can't, WON'T, she'll, they've, I'm, you'd, it's. Mr. O'Neil's 3rd café.\n\n"
    )
    * 40,
    "json": json.dumps(
        [
            {"id": i, "path": f"/home/u/p/src/m{i % 7}/f{i}.py", "ok": i % 2 == 0}
            for i in range(300)
        ],
        indent=2,
    ),
    "cjk": "日本語のテキストです。中文文本\uff0c包括标点符号\uff01한국어 텍스트도 있습니다. " * 60,
    "emoji": "emoji 😀😃😄 👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵 ✔︎ ❤️ \U0001d54f\U0001d550\U0001d551 \U0010ffff" * 30,
    "special": SPECIAL * 20,
    "whitespace": "a  \n  b\t\t\n\n\n   \r\n \u00a0\u2028\u3000x   " * 30 + "   \n  ",
    "numbers": "1234567890 3.14159 1e-9 0x1F 1,000,000 ²³ ⅷ ١٢٣ " * 40,
    "mixed_case": "HTTPServer XMLHttpRequest iOS macOS ǅemal ΣΑΣ ß \u017ft 'S 'LL " * 40,
    "combining": "e\u0301 a\u0308 n\u0303 क्षि ที่ 각 \u0915\u094d" * 40,
    "long_word": "a" * 5000 + " " + "ab" * 3000 + " " + "🙂" * 500,
    "long_space": " " * 4000 + "x" + "\n" * 3000 + "y" + "\t " * 1000,
    # The scanner's ASCII fast path hands over to the Unicode one at these.
    "ascii_then_unicode": (
        "word\u00e9 x\u0301 '\u017f it'\u017f IT'S \u00a0word (\u65e5) 12\u0663 \u3000\u3000x "
        "\u2028\n \u0085a \u01c5a \u02b0a a\u02b0 AB\u01c5c \u00abq\u00bb /\u00e9/ "
    )
    * 40,
    "long_runs": "9" * 1000 + " " + "ABCDEFGH" * 200 + " " + "abcdefgh" * 200 + " " + "--" * 500,
    "repeated_identifiers": " ".join(f"zq_{i % 97}_xv{i % 13}" for i in range(3000)),
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_counts_equal_tiktoken(name: str, encoding: str, tiktoken_count: Counter) -> None:
    text = CORPUS[name]
    expected = tiktoken_count(text)
    assert _core.count(text, encoding) == expected
    assert _core.count(text.encode(), encoding) == expected
    assert tokens.count(text, encoding) == expected  # type: ignore[arg-type]


def test_real_cjk_text_counts_equal_tiktoken(encoding: str, tiktoken_count: Counter) -> None:
    # B2's four CJK samples from this machine's gettext catalogues, interleaved: Chinese,
    # Japanese with kana, Korean, and CJK messages in code (generated CJK text when there are
    # too few catalogues): whole three-byte characters take the trie's
    # one-step path (bpe_engine.rs `char_step`), with its byte-walk fallback where a token
    # ends inside a character.
    text = corpus.cjk_text(300_000)
    chunks = corpus.chunks_of(text, 300_000)
    assert len(chunks) > 10
    assert [_core.count(c, encoding) for c in chunks] == [tiktoken_count(c) for c in chunks]


def test_whole_corpus_and_batch(encoding: str, tiktoken_count: Counter) -> None:
    texts = list(CORPUS.values())
    expected = [tiktoken_count(t) for t in texts]
    assert _core.count_batch(texts, encoding) == expected
    assert _core.count_batch([t.encode() for t in texts], encoding) == expected
    big = "".join(texts) * 8  # above the parallel threshold: split across threads
    assert _core.count(big, encoding) == tiktoken_count(big)
    assert _core.count_batch(texts * 40, encoding) == expected * 40


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="lists threads in /proc")
def test_a_long_text_is_counted_exactly_on_the_calling_thread(
    encoding: str, tiktoken_count: Counter
) -> None:
    """fastokens, the counter of texts of 64 bytes or more (rust_core/src/fastcount.rs), spreads
    an input of 64 KiB or more over threads of its own; the core hands it parts below that, cut
    after a newline that a letter follows, and counts a long stretch without such a point on its
    own tables: long texts of both kinds count exactly and start no thread."""
    lines = "\n".join(f"line{i} = value_{i} * 2  # note {i}" for i in range(20_000))
    one_line = " ".join(f"w{i}" for i in range(40_000))  # no newline at all: no cut point
    assert len(lines) > 500_000
    assert len(one_line) > 200_000
    before = set(os.listdir("/proc/self/task"))
    for text in (lines, one_line, lines + one_line + "\n" + lines):
        assert _core.count(text, encoding) == tiktoken_count(text)
    assert set(os.listdir("/proc/self/task")) <= before


def test_batches_from_several_threads_at_once(encoding: str, tiktoken_count: Counter) -> None:
    # One batch has the core's worker pool at a time; the others meanwhile count on their own
    # thread (rust_core/src/pool.rs): every answer is whole and in order.
    texts = list(CORPUS.values()) * 30
    expected = [tiktoken_count(t) for t in texts]
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        answers = list(ex.map(lambda _: _core.count_batch(texts, encoding), range(12)))
    assert answers == [expected] * 12


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_counts_batches_without_the_pool(tiktoken_cache: Path) -> None:
    # The pool's threads are not in a child forked after they started: its batches must run
    # on the child's own thread rather than wait for workers that do not exist there.
    texts = list(CORPUS.values()) * 30
    expected = _core.count_batch(texts)  # the pool is running in this process now
    pid = os.fork()
    if pid == 0:
        ok = False
        try:
            ok = _core.count_batch(texts) == expected
        finally:
            os._exit(0 if ok else 1)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    pytest.fail("count_batch in a forked child did not return within 60 s")


def test_default_encoding_is_o200k(tiktoken_cache: Path) -> None:
    text = CORPUS["prose"]
    assert _core.count(text) == len(load_encoding("o200k_base").encode_ordinary(text))
    assert _core.count_batch([text]) == [_core.count(text, "o200k_base")]


def test_known_values() -> None:
    assert _core.count("hello world") == 2
    assert _core.count("<|endoftext|>", "cl100k_base") == 7
    assert _core.count("<|endoftext|>", "o200k_base") == 7


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_random_text_equals_tiktoken(text: str) -> None:
    for name in ENCODINGS:
        enc = load_encoding(name)
        assert _core.count(text, name) == len(enc.encode_ordinary(text)), name


WORDS = [
    *["a", "A", " ", "  ", "\n", "\r\n", "\t", "1", "123", "'s", "'", ".", "/", "日", "é"],
    *["\u0301", "😀", "\u00a0", "\u017f", "'LL", "Ab", "aB", "<|", "|>", "\u2028", "\x0b"],
    *["\x85", "ǅ"],
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=30).map("".join))
def test_pretokenizer_edge_cases_equal_tiktoken(text: str) -> None:
    for name in ENCODINGS:
        enc = load_encoding(name)
        assert _core.count(text, name) == len(enc.encode_ordinary(text)), name


# Characters of the categories the pre-tokeniser tells apart: letters of every kind, marks,
# numbers, separators, punctuation, symbols, and (for the ASCII fast path) plain ASCII.
CATEGORIES = ["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Zs", "Zl", "Zp"]
CATEGORIES += ["Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Cc"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(st.characters(categories=CATEGORIES), max_size=6),  # type: ignore[arg-type]
            st.sampled_from(WORDS),
            st.from_regex(r"[a-zA-Z0-9 ']{1,10}", fullmatch=True),
        ),
        max_size=20,
    ).map("".join)
)
def test_unicode_categories_equal_tiktoken(text: str) -> None:
    for name in ENCODINGS:
        enc = load_encoding(name)
        assert _core.count(text, name) == len(enc.encode_ordinary(text)), name


def test_lone_surrogates_are_counted_like_tiktoken(tiktoken_cache: Path) -> None:
    text = "ab\ud800cd\udfff"
    for name in ENCODINGS:
        assert _core.count(text, name) == len(load_encoding(name).encode_ordinary(text))


def test_errors() -> None:
    with pytest.raises(ValueError, match="unknown encoding 'p50k_base': expected one of"):
        _core.count("x", "p50k_base")
    with pytest.raises(ValueError, match="'o200k_base', 'cl100k_base'"):
        _core.count_batch(["x"], "gpt2")
    with pytest.raises(ValueError, match="invalid byte at offset 3"):
        _core.count(b"abc\xff")
    with pytest.raises(ValueError, match="valid UTF-8"):
        _core.count_batch([b"ok", b"\xe6\x97"])
    with pytest.raises(TypeError, match="text must be str or bytes, not list"):
        _core.count(["x"])  # type: ignore[arg-type]
    assert _core.ENCODINGS == ("o200k_base", "cl100k_base") == tokens.ENCODINGS


# A fresh interpreter (the tables are built once per process, not at import): `CALL` runs on a
# thread while this one polls; with a switch interval of an hour a thread gives the GIL up only
# where it releases it, so this thread runs while the call is in progress only if the call
# released it (a small text's count holds it otherwise).
_FIRST_EXACT_CALL = """
import sys, threading, time
from postcompact import _core, render
TEMPLATES = render.file_templates(render.DEFAULT_TEMPLATES)
sys.setswitchinterval(3600)
enc = "{encoding}"
started, finished = threading.Event(), threading.Event()
def work():
    started.set()
    {call}
    finished.set()
worker = threading.Thread(target=work)
worker.start()
seen_in_progress = False
while worker.is_alive():
    if started.is_set() and not finished.is_set():
        seen_in_progress = True
    time.sleep(0.001)
worker.join()
print("released" if seen_in_progress else "held")
"""

_FIRST_EXACT_CALLS = {
    "count of a short text": '_core.count("a short text, long enough for fastokens: " * 3, enc)',
    "count_batch": '_core.count_batch(["x" * 80, "y"], enc)',
    "exact truncation": '_core.truncate_to_tokens("word " * 50, 5, "[cut]", "exact", enc)',
    "an exact read plan": "_core.ReadPlan(templates=TEMPLATES, malware=False, max_tokens=100, "
    "max_bytes=1000, sniff_bytes=10, exact=True, encoding=enc, api_units=None, page=False)",
}


@pytest.mark.parametrize("call", list(_FIRST_EXACT_CALLS))
def test_the_first_exact_call_builds_the_tables_without_the_gil(call: str) -> None:
    """A first exact call builds the encoding's tables (ours and fastokens', 0.2-1.7 s) with the
    GIL released: in the daemon a small exact count on the event loop (TruncateTokens' answer,
    the soak found it) otherwise stopped every call for that long."""
    code = _FIRST_EXACT_CALL.format(encoding="cl100k_base", call=_FIRST_EXACT_CALLS[call])
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "released", out.stderr
