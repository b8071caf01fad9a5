"""`make test`: the Gemini CLI extension in the real, pinned Gemini CLI, offline (run_e2e.py)."""

from __future__ import annotations

import shutil

import pytest

from tests.gemini_cli import run_e2e


@pytest.mark.timeout(900)  # the first run installs Gemini CLI from the npm registry
def test_gemini_cli_restores_files_after_its_compression(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert shutil.which("npm"), "npm is needed to install Gemini CLI"
    assert run_e2e.main() == 0
    out = capsys.readouterr().out
    # The verdict line (not the install's "gemini e2e: installing ..." of a first run).
    line = next(x for x in out.splitlines() if x.endswith("reached the model after compaction"))
    with capsys.disabled():
        print(f"\n{line}")
