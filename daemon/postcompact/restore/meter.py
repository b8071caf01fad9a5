"""Token measuring and truncation for the pipeline, through the Rust core only.

`Meter` binds the policy's counter: ROUGH is Claude Code's estimate (UTF-16 units / 4, or / 2 for
json, jsonl and jsonc), EXACT is a BPE count with the policy's encoding. The file-budget cost is
always the rough estimate of the serialised attachment message, as in Claude Code, whatever the
counter (`rough`). A file's measures (its cap, ReadFile's first page) are the core's
(`rust_core/src/fileanswer.rs`, the same counters).
"""

from __future__ import annotations

from dataclasses import dataclass

from postcompact import core

__all__ = ["JSON_EXTS", "Meter", "rough"]

# Extensions the rough estimate counts at 2 UTF-16 units per token (docs/claude-code.md §2).
JSON_EXTS = frozenset({"json", "jsonl", "jsonc"})


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
