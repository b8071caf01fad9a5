"""The fenced code blocks of the READMEs, and which of them must run.

A block is a top-level fence (```` ``` ```` or `~~~`, indented at most three spaces). Its info
string gives its language (the first word; rustdoc's `rust,no_run` is `rust`) and attributes
(the other words). The attribute **`synopsis`** (```` ```sh synopsis ````) marks a block that
shows commands rather than runs them (`make test` inside `make test`, a whole development
cycle): it is never executed. Every other block in a language of `RUNNABLE` must be taken, and
run, by one of the language runners of `tests.packaging`; `Inventory.untaken()` names those that
were not, and the run fails on them. Blocks in other languages (toml, json, untagged diagrams and
command-line synopses) are not run; the Rust runner does use the toml block of its README's
Install section as its project's dependencies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

# Languages whose blocks are run (or must be marked `synopsis`). js is here so that a JavaScript
# block nobody runs fails the inventory instead of going unnoticed.
RUNNABLE = frozenset({"python", "ts", "typescript", "js", "javascript", "go", "rust", "sh", "bash"})
SHELL = ("sh", "bash")

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


@dataclass(frozen=True)
class Block:
    readme: str  # the README's path in the repository
    line: int  # 1-based line of the opening fence
    lang: str
    attrs: tuple[str, ...]
    section: str  # the heading the block is under ("" before the first)
    text: str

    @property
    def synopsis(self) -> bool:
        return "synopsis" in self.attrs

    @property
    def runnable(self) -> bool:
        return self.lang in RUNNABLE and not self.synopsis

    @property
    def install(self) -> bool:
        """A block of an "Install" section: a package's install steps."""
        return self.section.lower().startswith("install")

    def where(self) -> str:
        return f"{self.readme}:{self.line}"


def parse(readme: str, text: str) -> list[Block]:
    """The fenced blocks of one Markdown file, in order."""
    blocks: list[Block] = []
    section = ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            h = _HEADING.match(lines[i])
            if h is not None:
                section = h.group(1)
            i += 1
            continue
        fence, info = m.group(2), m.group(3).strip()
        words = info.replace(",", " ").split()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines):
            close = _FENCE.match(lines[i])
            if (
                close is not None
                and close.group(2)[0] == fence[0]
                and len(close.group(2)) >= len(fence)
                and not close.group(3).strip()
            ):
                break
            body.append(lines[i])
            i += 1
        else:
            raise ValueError(f"{readme}:{start + 1}: unclosed code block")
        i += 1
        lang = words[0].lower() if words else ""
        blocks.append(
            Block(readme, start + 1, lang, tuple(words[1:]), section, "\n".join(body) + "\n")
        )
    return blocks


@dataclass
class Inventory:
    """Every README's blocks, and which ones a runner has taken."""

    blocks: list[Block]
    taken: set[Block] = field(default_factory=set)

    @classmethod
    def of(cls, root: Path, readmes: list[str]) -> Inventory:
        blocks: list[Block] = []
        for rel in readmes:
            blocks.extend(parse(rel, (root / rel).read_text(encoding="utf-8")))
        return cls(blocks)

    def take(
        self, readme: str, langs: tuple[str, ...], *, install: bool | None = None
    ) -> list[Block]:
        """The runnable blocks of `readme` in `langs` (only those of an Install section, or only
        the others, when `install` says so), marked as taken."""
        out = [
            b
            for b in self.blocks
            if b.readme == readme
            and b.lang in langs
            and b.runnable
            and (install is None or b.install == install)
        ]
        self.taken.update(out)
        return out

    def find(self, readme: str, lang: str, section: str) -> list[Block]:
        """Blocks that are not run but used (the Rust Install section's toml)."""
        return [
            b
            for b in self.blocks
            if b.readme == readme and b.lang == lang and b.section.lower() == section.lower()
        ]

    def untaken(self, exempt: frozenset[str] = frozenset()) -> list[Block]:
        return [
            b for b in self.blocks if b.runnable and b not in self.taken and b.readme not in exempt
        ]


def rust_program(block: Block) -> str:
    """A rust block as the program rustdoc compiles: its hidden lines (`# ...`) shown."""
    out = []
    for line in block.text.splitlines():
        stripped = line.lstrip()
        if stripped == "#":
            out.append("")
        elif stripped.startswith("# "):
            out.append(line.replace("# ", "", 1))
        else:
            out.append(line)
    return "\n".join(out) + "\n"
