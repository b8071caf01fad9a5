"""The README's first screen, as a new user reads it (issue 35, part 4): what postcompact is for,
the prerequisites, and how to use it with each agent, whose install blocks are the ones the
plugins' own READMEs give (and the real-harness tests run: tests/claude_code, tests/codex,
tests/gemini_cli, tests/opencode)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FIRST_SCREEN_LINES = 60


def _blocks(text: str) -> list[list[str]]:
    """The command lines of each fenced shell block (comments and blank lines left out)."""
    out = []
    for body in re.findall(r"```sh[^\n]*\n(.*?)```", text, flags=re.S):
        lines = [ln.split(" #")[0].strip() for ln in body.splitlines()]
        out.append([ln for ln in lines if ln and not ln.startswith("#")])
    return out


def _head(text: str) -> str:
    cut = text.index("## What it is")
    return text[:cut]


def test_the_first_screen_says_what_it_is_for_and_what_it_needs() -> None:
    head = _head((ROOT / "README.md").read_text())
    assert len(head.splitlines()) <= FIRST_SCREEN_LINES
    assert "coding agents" in head.lower()
    prereq = next(p for p in head.split("\n\n") if p.startswith("**Prerequisites**"))
    for needed in ("Python", "Rust", "Go", "Node.js", "make test"):
        assert needed in prereq, needed
    table = head[head.index("## Use it with your agent") :]
    for agent in ("Claude Code", "Codex CLI", "Gemini CLI", "OpenCode", "your own harness"):
        assert f"| {agent}" in table, agent
    for link in re.findall(r"\]\(([^)]+)\)", table):
        assert (ROOT / link).exists(), link


def test_each_install_block_is_the_plugins_own() -> None:
    """The first screen's Claude Code, Codex, Gemini CLI and OpenCode blocks run what the
    plugins' READMEs say (the Claude Code, Codex and Gemini CLI ones from the checkout's root,
    where `./clients/claude-code` and `./clients/gemini-cli` are)."""
    head = _blocks(_head((ROOT / "README.md").read_text()))
    claude = (ROOT / "clients/claude-code/plugins/postcompact/README.md").read_text()
    (install,) = [b for b in _blocks(claude) if any("claude plugin install" in c for c in b)]
    ours = next(b for b in head if any("claude plugin" in c for c in b))
    assert ours == [c for c in install if not c.startswith("cd ")]
    codex = (ROOT / "clients/codex/README.md").read_text()
    (install,) = [b for b in _blocks(codex) if any("codex plugin add" in c for c in b)]
    ours = next(b for b in head if any("codex plugin" in c for c in b))
    assert ours == [c for c in install if not c.startswith("cd ")]
    gemini = (ROOT / "clients/gemini-cli/README.md").read_text()
    (install,) = [b for b in _blocks(gemini) if any("gemini extensions" in c for c in b)]
    ours = next(b for b in head if any("gemini extensions" in c for c in b))
    assert ours == [c for c in install if not c.startswith("cd ")]
    opencode = (ROOT / "clients/opencode/README.md").read_text()
    (npm,) = [c for b in _blocks(opencode) for c in b if c.startswith("npm install --prefix")]
    ours_npm = next(c for b in head for c in b if c.startswith("npm install --prefix"))
    assert ours_npm.split()[-1] == "clients/opencode"
    assert npm.split()[-1].endswith("/clients/opencode")
