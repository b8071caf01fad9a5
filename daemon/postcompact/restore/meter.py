"""Token measuring and truncation for the pipeline, through the Rust core only.

`Meter` binds the policy's counter: ROUGH is Claude Code's estimate (UTF-16 units / 4, or / 2 for
json, jsonl and jsonc), EXACT is a BPE count with the policy's encoding. The file-budget cost is
always the rough estimate of the serialised attachment message, as in Claude Code, whatever the
counter (`rough`).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

from postcompact import core

__all__ = ["JSON_EXTS", "Meter", "file_ext", "rough"]

# Extensions the rough estimate counts at 2 UTF-16 units per token (docs/claude-code.md §2).
JSON_EXTS = frozenset({"json", "jsonl", "jsonc"})


@functools.lru_cache(maxsize=4096)
def file_ext(path: str) -> str | None:
    """The extension that selects the rough per-type rate (lower case, no dot)."""
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    return ext or None


def rough(text: str) -> int:
    """Claude Code's `roughTokenCountEstimation(text)` (4 units per token)."""
    return int(core.estimate(text))


@dataclass(frozen=True, slots=True)
class Meter:
    exact: bool = False
    encoding: str = "o200k_base"

    def measure(self, text: str, ext: str | None = None) -> int:
        """Tokens of `text` under the counter (`ext` selects the rough per-type rate)."""
        if self.exact:
            return int(core.count(text, self.encoding))
        return int(core.estimate(text, ext))

    def truncate(self, text: str, max_tokens: int, marker: str, ext: str | None = None) -> str:
        """`text` unchanged when it fits `max_tokens`, else a head plus `marker` within it.

        The core's rough truncation counts 4 units per token; for json-like files (2 units per
        token) the budget passed is halved so the head also fits under the per-type estimate.
        """
        if self.exact:
            return str(core.truncate_to_tokens(text, max_tokens, marker, "exact", self.encoding))
        budget = max_tokens
        if ext in JSON_EXTS and self.measure(text, ext) > max_tokens:
            budget = max_tokens // 2
        return str(core.truncate_to_tokens(text, budget, marker, "rough", self.encoding))

    def file_tokens(self, text: str, ext: str | None, cap: int, api_units: int | None) -> int:
        """A file's tokens as Claude Code weighs them against `cap`: the counter's measure, and
        over a quarter of the cap by the rough estimate, its countTokens API's count alone
        (a JSON file whose rough estimate is over the cap comes back whole when the count is
        under it: `make parity`), estimated offline as `api_units` UTF-16 units a token
        (docs/claude-code.md §2; None: the measure decides alone)."""
        tokens = self.measure(text, ext)
        if api_units is not None and not self.exact and tokens > cap // 4:
            units = int(core.utf16_len(text))
            tokens = (2 * units + api_units) // (2 * api_units)
        return tokens

    def head_lines(self, text: str, cap: int, ext: str | None, api_units: int | None) -> str:
        """The longest head of whole lines of `text` whose `file_tokens` is within `cap` (empty
        when even the first line is over it)."""
        budget = cap
        if api_units is not None and not self.exact:
            budget = min(cap, cap * api_units // 4)  # the rough truncation counts 4 units a token
        head = self.truncate(text, budget, "", ext)
        while head:
            if head != text:
                cut = head.rfind("\n")
                head = head[:cut] if cut > 0 else ""
            if self.file_tokens(head, ext, cap, api_units) <= cap:
                return head
            text, budget = head, max(1, budget * 7 // 8)
            head = self.truncate(text, budget, "", ext)
        return head
