"""B3: head truncation to a token budget.

`_core.truncate_to_tokens` at budgets of 1k / 10k / 25k tokens on 20 KB, 100 KB and 1 MB inputs,
with the rough counter (Claude Code's rule) and the exact one (o200k_base), in microseconds per
call, against a plain Python slice `text[:n] + marker` (the floor for rough) and, for exact,
tiktoken (encode, slice the tokens, decode). The rough output is checked byte for byte against
a JavaScript-semantics model (UTF-16 slice) on ASCII, CJK and emoji inputs.
Run standalone: `python -m bench.b3_truncate [--quick]`.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

from postcompact import _core

from bench import corpus
from bench.report import Section, Table, bar_chart, verdict
from tests._tiktoken_offline import load_encoding

MARKER = (
    "\n\n[... skill content truncated for compaction; "
    "use Read on the skill path if you need the full text]"
)
SIZES = {"20 KB": 20 * 1024, "100 KB": 100 * 1024, "1 MB": 1024 * 1024}
BUDGETS = [1_000, 10_000, 25_000]


def _per_call(fn: Callable[[], object], quick: bool) -> float:
    """Best-of-5 mean seconds per call."""
    t0 = time.perf_counter()
    fn()
    once = time.perf_counter() - t0
    n = max(1, min(2000, int((0.02 if quick else 0.1) / max(once, 1e-7))))
    best = float("inf")
    for _ in range(2 if quick else 5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def js_truncate(content: str, max_tokens: int, marker: str) -> str:
    """Claude Code's truncateToTokens on UTF-16 (never keeping half a surrogate pair)."""
    data = content.encode("utf-16-le", "surrogatepass")
    n = len(data) // 2
    if (n + 2) // 4 <= max_tokens:
        return content
    keep = min(max(0, max_tokens * 4 - len(marker.encode("utf-16-le")) // 2), n)
    if keep and 0xD800 <= int.from_bytes(data[2 * keep - 2 : 2 * keep], "little") < 0xDC00:
        keep -= 1
    return data[: 2 * keep].decode("utf-16-le", "surrogatepass") + marker


def _parity_checks() -> int:
    checked = 0
    for text in ["x" * 50_000, "日本語のテキスト。" * 4000, "emoji 😀👨‍👩‍👧 " * 3000, "a😀" * 9000]:
        for budget in (26, 1000, 4999, 5000, 10_000):
            out = _core.truncate_to_tokens(text, budget, MARKER)
            assert out == js_truncate(text, budget, MARKER), (text[:10], budget)
            assert _core.truncate_to_tokens(text.encode(), budget, MARKER) == out.encode()
            checked += 1
    return checked


def run(quick: bool = False) -> Section:
    tk = load_encoding("o200k_base")
    m_tokens = len(tk.encode_ordinary(MARKER))
    code = corpus.sample("code", max(SIZES.values()))
    cjk = corpus.sample("cjk", 100 * 1024)
    inputs = {f"code {k}": code.encode()[:v].decode("utf-8", "ignore") for k, v in SIZES.items()}
    inputs["CJK 100 KB"] = cjk
    rows: list[Sequence[object]] = []
    worst_rough = 0.0
    for label, text in inputs.items():
        for budget in BUDGETS:
            keep = budget * 4 - len(MARKER)

            def py_slice(text: str = text, budget: int = budget, keep: int = keep) -> str:
                if (len(text) + 2) // 4 <= budget:
                    return text
                return text[:keep] + MARKER

            def rough(text: str = text, budget: int = budget) -> str:
                return _core.truncate_to_tokens(text, budget, MARKER, "rough")

            def exact(text: str = text, budget: int = budget) -> str:
                return _core.truncate_to_tokens(text, budget, MARKER, "exact")

            def tiktoken_cut(text: str = text, budget: int = budget) -> str:
                toks = tk.encode_ordinary(text)
                if len(toks) <= budget:
                    return text
                return str(tk.decode(toks[: budget - m_tokens])) + MARKER

            t_slice = _per_call(py_slice, quick)
            t_rough = _per_call(rough, quick)
            t_exact = _per_call(exact, quick)
            t_tk = _per_call(tiktoken_cut, quick)
            out = exact()
            assert len(tk.encode_ordinary(out)) <= budget
            truncated = "yes" if rough() is not text else "no"
            rows.append(
                [
                    label,
                    f"{budget:,}",
                    truncated,
                    t_slice * 1e6,
                    t_rough * 1e6,
                    t_rough / t_slice,
                    t_exact * 1e6,
                    t_tk * 1e6,
                    t_tk / t_exact,
                ]
            )
            if label.startswith("code"):
                worst_rough = max(worst_rough, t_rough / t_slice)
    checked = _parity_checks()
    intro = f"""
Inputs: CPython stdlib code (`bench/corpus.py`) cut to 20 KB, 100 KB and 1 MB, and 100 KB of CJK
catalogue text; marker = Claude Code's 100-unit skill truncation marker. "rough" is Claude Code's
truncateToTokens; "exact" keeps the longest prefix whose o200k count with the marker fits (every
output verified within budget). The tiktoken column encodes the whole text, slices the tokens
and decodes (not guaranteed to be a prefix or to fit once the marker is appended).
Rough output equals a JavaScript-semantics model byte for byte in {checked} checks (ASCII, CJK,
emoji, str and bytes input).
"""
    section = Section(
        title="B3. Truncation to a token budget",
        intro=intro,
        tables=[
            Table(
                "Microseconds per call (best of repeats)",
                [
                    "input",
                    "budget",
                    "cut?",
                    "Python slice",
                    "rough",
                    "rough / slice",
                    "exact",
                    "tiktoken encode+slice+decode",
                    "x tiktoken",
                ],
                rows,
            )
        ],
        verdicts=[
            verdict("rough truncation vs a plain Python slice, worst code row", worst_rough, 2.0)
        ],
    )
    section.plots.append(
        bar_chart(
            section.tables[0],
            "b3_exact.png",
            title="B3 exact truncation, µs per call (log scale), lower is better",
            value_col=6,
            label_cols=(0, 1),
            log=True,
        )
    )
    return section


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.b3_truncate")
    parser.add_argument("--quick", action="store_true")
    print(run(quick=parser.parse_args().quick).markdown())


if __name__ == "__main__":
    main()
