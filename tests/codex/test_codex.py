"""`make test`: the postcompact plugin in the real, pinned Codex CLI, offline (run_e2e.py)."""

from __future__ import annotations

import shutil

import pytest

from tests.codex import run_e2e


# The first run installs Codex (about 420 MB unpacked) from the npm registry.
@pytest.mark.timeout(900)
def test_codex_restores_files_after_its_compaction(capsys: pytest.CaptureFixture[str]) -> None:
    assert shutil.which("npm"), "npm is needed to install Codex"
    assert run_e2e.main() == 0
    out = capsys.readouterr().out
    # The verdict line (not the install's "codex e2e: installing ..." of a first run).
    line = next(x for x in out.splitlines() if x.endswith("reached the model after compaction"))
    with capsys.disabled():
        print(f"\n{line}")
