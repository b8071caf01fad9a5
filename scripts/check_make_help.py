"""`make lint`: `make help` lists every target of the Makefile's `.PHONY`.

Runs `make help` on the Makefile given (the repository's by default) and fails, naming each
target its output has no `make <target>` line for. Exit 1 when one is missing.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def phony_targets(makefile: str) -> list[str]:
    """The targets named by `.PHONY:` lines (continuations joined), in order, once each."""
    text = makefile.replace("\\\n", " ")
    names: list[str] = []
    for line in text.splitlines():
        if line.startswith(".PHONY:"):
            names += [n for n in line.removeprefix(".PHONY:").split() if n not in names]
    return names


def listed(help_text: str) -> set[str]:
    """The targets `make help` printed a line for (`make <target> ...`)."""
    return set(re.findall(r"^make ([A-Za-z0-9_.-]+)", help_text, re.M))


def missing(makefile: Path) -> list[str]:
    """The `.PHONY` targets of `makefile` that its `make help` leaves out."""
    out = subprocess.run(
        ["make", "--no-print-directory", "-s", "-f", makefile.name, "help"],
        cwd=makefile.parent,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    shown = listed(out)
    return [t for t in phony_targets(makefile.read_text()) if t not in shown]


def main(argv: list[str]) -> int:
    makefile = Path(argv[0]) if argv else ROOT / "Makefile"
    gone = missing(makefile)
    for target in gone:
        print(f"{makefile}: `make help` does not list `{target}`")
    if gone:
        print(f"check_make_help: {len(gone)} target(s) missing from `make help`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
