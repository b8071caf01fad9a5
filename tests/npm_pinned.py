"""The real harnesses the tests run (Claude Code for `make parity`, OpenCode for its plugin's
test), installed from the npm registry at a pinned version into `.cache/`, once."""

from __future__ import annotations

import subprocess
from pathlib import Path


def install_pinned(prefix: Path, package: str, version: str, binary: Path, label: str) -> Path:
    """`binary`, after `npm install <package>@<version>` into `prefix` when it is missing."""
    if binary.is_file():
        return binary
    prefix.mkdir(parents=True, exist_ok=True)
    print(f"{label}: installing {package}@{version} into {prefix}", flush=True)
    subprocess.run(
        ["npm", "install", "--prefix", str(prefix), "--no-save", "--no-audit", "--no-fund",
         "--loglevel", "error", f"{package}@{version}"],
        check=True,
    )  # fmt: skip
    if not binary.is_file():
        raise SystemExit(f"{label}: {binary} is missing after the install")
    return binary
