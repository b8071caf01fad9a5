"""`make test`: the OpenCode plugin in the real, pinned OpenCode, offline (run_e2e.py)."""

from __future__ import annotations

import shutil

import pytest

from tests.opencode import run_e2e


@pytest.mark.timeout(600)  # the first run installs OpenCode (about 190 MB) from the npm registry
def test_opencode_restores_files_after_its_compaction(capsys: pytest.CaptureFixture[str]) -> None:
    # make test installs Node (the Node client's tests need it too): missing, this fails.
    assert shutil.which("npm"), "npm is needed to install OpenCode and build the plugin"
    assert shutil.which("node"), "node is needed to run the plugin's build"
    assert run_e2e.main() == 0
    out = capsys.readouterr().out
    # The verdict line (not the install's "opencode e2e: installing ..." of a first run).
    line = next(x for x in out.splitlines() if x.endswith("reached the model after compaction"))
    with capsys.disabled():
        print(f"\n{line}")
