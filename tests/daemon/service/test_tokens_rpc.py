"""Token RPCs over the Rust core."""

from __future__ import annotations

from postcompact_client import pb

from tests.daemon.conftest import RunningDaemon


def test_estimate(daemon: RunningDaemon) -> None:
    c = daemon.client
    assert c.estimate_tokens("abcd") == 1
    assert c.estimate_tokens("abcdef") == 2  # 1.5 rounds half up
    assert c.estimate_tokens("hello world") == 3
    assert c.estimate_tokens('{"a": 1}', ext="json") == 4  # 2 chars per token for JSON
    assert c.estimate_tokens("😀😀") == 1  # UTF-16 code units: 4 / 4
    assert c.estimate_tokens("") == 0
    assert c.estimate_tokens_batch(["abcd", "abcdefgh", ""]) == [1, 2, 0]


def test_count(daemon: RunningDaemon) -> None:
    c = daemon.client
    assert c.count_tokens("hello world") == 2
    assert c.count_tokens("hello world", encoding="cl100k_base") == 2
    assert c.count_tokens_batch(["hello world", ""], encoding="o200k_base") == [2, 0]


def test_truncate(daemon: RunningDaemon) -> None:
    c = daemon.client
    short = c.truncate_tokens("short", 10, "…")
    assert (short.text, short.truncated) == (b"short", False)
    long_text = "x" * 400
    r = c.truncate_tokens(long_text, 10, "[cut]")
    assert r.truncated
    assert r.text.endswith(b"[cut]")
    assert r.tokens <= 10
    assert c.estimate_tokens(r.text) == r.tokens
    batch = c.truncate_tokens_batch(["x" * 400, "ok"], 10, "[cut]", counter="rough")
    assert [b.truncated for b in batch] == [True, False]
    exact = c.truncate_tokens("word " * 200, 20, "", counter=pb.TOKEN_COUNTER_EXACT)
    assert exact.truncated
    assert exact.tokens <= 20
