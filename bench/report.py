"""What a benchmark returns, and how docs/benchmarks.md is written from it.

Each benchmark module exposes `run(quick: bool) -> Section`. Numbers on this 2-vCPU VM are noisy,
so every section compares competitors measured in the same run and reports ratios.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PLOTS = DOCS / "bench"


@dataclass
class Table:
    caption: str
    columns: Sequence[str]
    rows: list[Sequence[object]]

    def markdown(self) -> str:
        head = "| " + " | ".join(self.columns) + " |"
        rule = "|" + "|".join("---" for _ in self.columns) + "|"
        body = ["| " + " | ".join(_cell(v) for v in row) + " |" for row in self.rows]
        return "\n".join([f"**{self.caption}**", "", head, rule, *body])


@dataclass
class Section:
    title: str
    intro: str
    tables: list[Table] = field(default_factory=list)
    plots: list[str] = field(default_factory=list)  # file names under docs/bench/
    # one line per target: met or not, and by how much
    verdicts: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        parts = [f"## {self.title}", "", self.intro.strip(), ""]
        if self.verdicts:
            parts += ["Targets:", "", *[f"- {v}" for v in self.verdicts], ""]
        for t in self.tables:
            parts += [t.markdown(), ""]
        for p in self.plots:
            parts += [f"![{p}](bench/{p})", ""]
        return "\n".join(parts)


def _cell(v: object) -> str:
    if isinstance(v, float):
        if v >= 100:
            return f"{v:,.0f}"
        if v >= 10:
            return f"{v:.1f}"
        return f"{v:.2f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def verdict(name: str, ratio: float, target: float, *, lower_is_better: bool = True) -> str:
    """'name: 0.85x (target <= 1.2x) met' — ratio is measured/baseline."""
    ok = ratio <= target if lower_is_better else ratio >= target
    op = "<=" if lower_is_better else ">="
    return f"{name}: {ratio:.2f}x (target {op} {target}x) — {'met' if ok else 'NOT met'}"


def percentile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]


def bar_chart(
    table: Table,
    file: str,
    *,
    title: str,
    value_col: int,
    label_cols: Sequence[int] = (0,),
    xlabel: str = "",
    log: bool = False,
) -> str:
    """Plot one numeric column of `table` as horizontal bars (one per row) into docs/bench/file.

    Returns the file name for Section.plots. Rows whose value is not a finite number are left out.
    """
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels: list[str] = []
    values: list[float] = []
    for row in table.rows:
        value = row[value_col]
        if not isinstance(value, int | float) or not math.isfinite(float(value)):
            continue
        labels.append(" · ".join(str(row[c]).replace("**", "") for c in label_cols))
        values.append(float(value))
    PLOTS.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(9, 0.38 * len(values) + 1.4))
    ax.barh(range(len(values)), values, color="#4C72B0")
    ax.set_yticks(range(len(values)), labels, fontsize=8)
    ax.invert_yaxis()
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel or str(table.columns[value_col]))
    ax.set_title(title, fontsize=10)
    for i, v in enumerate(values):
        ax.annotate(
            _cell(v), (v, i), xytext=(3, 0), textcoords="offset points", va="center", fontsize=7
        )
    fig.tight_layout()
    fig.savefig(PLOTS / file, dpi=110)
    plt.close(fig)
    return file


def grouped_bar_chart(
    table: Table,
    file: str,
    *,
    title: str,
    value_cols: Sequence[int],
    label_cols: Sequence[int] = (0,),
    xlabel: str = "",
) -> str:
    """Plot several numeric columns of `table` as groups of horizontal bars, one group per row
    and one colour per column, into docs/bench/file. Returns the file name for Section.plots."""
    import math

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in table.rows if all(isinstance(r[c], int | float) for c in value_cols)]
    labels = [" · ".join(str(r[c]).replace("**", "") for c in label_cols) for r in rows]
    numbers = [[float(cast(float, r[c])) for c in value_cols] for r in rows]
    PLOTS.mkdir(parents=True, exist_ok=True)
    k = len(value_cols)
    height = 0.8 / k
    fig, ax = plt.subplots(figsize=(9, 0.22 * k * len(rows) + 1.6))
    for j, col in enumerate(value_cols):
        values = [nums[j] for nums in numbers]
        ys = [i + (j - (k - 1) / 2) * height for i in range(len(rows))]
        ax.barh(
            ys, [v if math.isfinite(v) else 0.0 for v in values], height, label=table.columns[col]
        )
        for y, v in zip(ys, values, strict=True):
            ax.annotate(
                _cell(v), (v, y), xytext=(2, 0), textcoords="offset points", va="center", fontsize=6
            )
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel or "MB/s")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(PLOTS / file, dpi=110)
    plt.close(fig)
    return file
