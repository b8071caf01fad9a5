"""The token tests' typed facade over the core's token functions (`postcompact.core`): Literal
encodings, a `Counter` enum and Python defaults. The daemon calls the core directly (its
TokenService is `postcompact.service.tokens`); only the tests in tests/core use this.

* `estimate` is Claude Code's rough figure (UTF-16 units / 4, or / 2 for json, jsonl and jsonc
  files, halves rounding up), equal to its `roughTokenCountEstimation(ForFileType)`.
* `count` is the exact BPE count of `o200k_base` or `cl100k_base` (offline, equal to tiktoken's
  `len(encode_ordinary(text))`).
* `truncate` cuts a text's head to a token budget under either counter, the marker included.

Text is `str` or UTF-8 `bytes`; see `daemon/postcompact/_core.pyi` for the exact contracts and
errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Literal, cast, overload

from postcompact import core

__all__ = [
    "DEFAULT_ENCODING",
    "ENCODINGS",
    "Counter",
    "Encoding",
    "count",
    "count_batch",
    "estimate",
    "estimate_batch",
    "truncate",
    "truncate_batch",
    "utf16_len",
]

Encoding = Literal["o200k_base", "cl100k_base"]
ENCODINGS = cast(tuple[Encoding, ...], core.ENCODINGS)  # the core's names, its one list
DEFAULT_ENCODING: Encoding = "o200k_base"


class Counter(StrEnum):
    """How a truncation budget is measured."""

    ROUGH = "rough"  # Claude Code's estimate
    EXACT = "exact"  # BPE tokens of the chosen encoding


def utf16_len(text: str | bytes) -> int:
    """JavaScript's `.length` of `text` (UTF-16 code units)."""
    return core.utf16_len(text)


def estimate(text: str | bytes, ext: str | None = None) -> int:
    """Claude Code's rough token estimate of `text` (a file's extension selects 2 or 4 units
    per token)."""
    return core.estimate(text, ext)


def estimate_batch(items: Sequence[str | bytes], ext: str | None = None) -> list[int]:
    return core.estimate_batch(items, ext)


def count(text: str | bytes, encoding: Encoding = DEFAULT_ENCODING) -> int:
    """Exact BPE token count of `text`."""
    return core.count(text, encoding)


def count_batch(texts: Sequence[str | bytes], encoding: Encoding = DEFAULT_ENCODING) -> list[int]:
    return core.count_batch(texts, encoding)


@overload
def truncate(
    text: str,
    max_tokens: int,
    marker: str = "",
    counter: Counter = Counter.ROUGH,
    encoding: Encoding = DEFAULT_ENCODING,
) -> str: ...
@overload
def truncate(
    text: bytes,
    max_tokens: int,
    marker: str = "",
    counter: Counter = Counter.ROUGH,
    encoding: Encoding = DEFAULT_ENCODING,
) -> bytes: ...
def truncate(
    text: str | bytes,
    max_tokens: int,
    marker: str = "",
    counter: Counter = Counter.ROUGH,
    encoding: Encoding = DEFAULT_ENCODING,
) -> str | bytes:
    """`text` unchanged when within `max_tokens`, else a prefix of it plus `marker`, within the
    budget (marker included)."""
    return core.truncate_to_tokens(text, max_tokens, marker, counter, encoding)


def truncate_batch(
    texts: Sequence[str],
    max_tokens: int,
    marker: str = "",
    counter: Counter = Counter.ROUGH,
    encoding: Encoding = DEFAULT_ENCODING,
) -> list[str]:
    return core.truncate_batch(texts, max_tokens, marker, counter, encoding)
