"""`make lint`: every section citation names a document in the repository, and a section it has.

A citation is `§N` (or `§N.M`): `docs/claude-code.md §3`, `(§8)`. The document is the file named
just before it (a path as written, from the repository root, from `docs/`, or beside the citing
file), or, for a bare `§N` in a Markdown file, that file itself. A citation fails when:

- the file it names is not in the repository (`claude-code-current.md §1`, `performance.md §4`);
- it names a document by a word, not a file (`DESIGN §5`, `reference §6.2`, `design chapter
  §10.9`): nothing in the repository says which;
- it is bare in a file that is not Markdown (code: `# --- §2 ---`): it cites nothing;
- the Markdown document has no heading numbered so (`## 3. ...` for §3, `### 3.2 ...` for
  §3.2).

Exit 1 listing each, as `path:line: reason`.
"""

from __future__ import annotations

import re
import subprocess
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CITATION = re.compile(r"§\s?(\d+(?:\.\d+)*)")
# What comes just before a citation: a file name (with a path), or a word naming a document.
FILE_BEFORE = re.compile(r"([\w./-]+\.(?:md|txt|proto|py|json))[`'\")]*[\s,]*(?:\(|,\s*)?$")
WORD_BEFORE = re.compile(r"\b(DESIGN|reference|design chapter(?:'s)?|chapter)[\s,]*$", re.I)
LIST_GAP = re.compile(r"\A(?:[\s,;]|-|\u2013|and\b|or\b)*\Z")  # "\u2013": an en dash
HEADING = re.compile(r"^#{2,6}\s+(\d+(?:\.\d+)*)\.?\s", re.M)
TEXT_SUFFIXES = {".md", ".py", ".rs", ".go", ".ts", ".js", ".proto", ".toml", ".json", ".txt"}
# Generated code, and this file (its docstring shows what fails).
SKIP_PREFIXES = (
    "clients/node/gen/",
    "clients/go/postcompactv1/",
    "daemon/postcompact/v1/",
    "scripts/check_citations.py",
)


def tracked() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [
        ROOT / p for p in out if Path(p).suffix in TEXT_SUFFIXES and not p.startswith(SKIP_PREFIXES)
    ]


@cache
def sections(doc: Path) -> frozenset[str]:
    return frozenset(HEADING.findall(doc.read_text(errors="replace")))


def resolve(name: str, citing: Path, root: Path = ROOT) -> Path | None:
    for base in (root, root / "docs", citing.parent):
        p = (base / name).resolve()
        if p.is_file() and root in p.parents:
            return p
    return None


def problems(path: Path, root: Path = ROOT) -> list[str]:
    """The dangling citations of `path`, a file of the repository at `root`."""
    out: list[str] = []
    rel = path.relative_to(root)
    for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        last: tuple[int, Path] | None = None  # the citation before on the line: its end, its doc
        for m in CITATION.finditer(line):
            before = line[: m.start()]
            number = m.group(1)
            named = FILE_BEFORE.search(before)
            if last is not None and LIST_GAP.match(line[last[0] : m.start()]):
                doc = last[1]  # `docs/x.md §4, §5`, `§1-§7`: the same document
            elif named:
                found = resolve(named.group(1), path, root)
                if found is None:
                    out.append(f"{rel}:{n}: §{number} of {named.group(1)}, not in the repository")
                    continue
                doc = found
            elif WORD_BEFORE.search(before):
                word = WORD_BEFORE.search(before)
                assert word is not None
                out.append(
                    f"{rel}:{n}: §{number} of {word.group(1)!r}: name a file of the repository"
                )
                continue
            elif path.suffix == ".md":
                doc = path
            else:
                out.append(f"{rel}:{n}: a bare §{number} outside Markdown cites nothing")
                continue
            if doc.suffix == ".md" and number not in sections(doc):
                out.append(f"{rel}:{n}: {doc.relative_to(root)} has no section {number}")
            last = (m.end(), doc)
    return out


def main() -> int:
    found = [p for path in tracked() for p in problems(path)]
    for p in found:
        print(p)
    if found:
        print(f"check_citations: {len(found)} dangling citation(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
