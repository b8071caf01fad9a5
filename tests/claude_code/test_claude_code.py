"""`make test`: the Claude Code plugin in the real, pinned Claude Code, offline (run_e2e.py)."""

from __future__ import annotations

import shutil

import pytest

from tests.claude_code import run_e2e


@pytest.mark.timeout(900)  # the first run installs Claude Code (about 220 MB) from the npm registry
def test_claude_code_restores_files_after_its_compaction(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert shutil.which("npm"), "npm is needed to install Claude Code"
    assert run_e2e.main() == 0
    out = capsys.readouterr().out
    # The verdict line (not the install's "claude-code e2e: installing ..." of a first run).
    line = next(x for x in out.splitlines() if x.endswith("reached the model after compaction"))
    with capsys.disabled():
        print(f"\n{line}")
