"""`make test`: the OpenCode plugin in the real, pinned OpenCode, offline (run_e2e.py)."""

from __future__ import annotations

import shutil
import subprocess

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


@pytest.mark.timeout(300)
def test_plugin_units() -> None:
    """The plugin's own tests (clients/opencode/test, `npm test` there): how it finds the daemon,
    what it tells the user when it cannot, the bound on a request's wait, and the retry on the
    next request, against the real daemon."""
    assert shutil.which("npm"), "npm is needed to build and test the plugin"
    run_e2e.build_plugin()
    r = subprocess.run(
        ["npm", "test", "--silent"], cwd=run_e2e.PLUGIN, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, (
        f"npm test in clients/opencode failed:\n{r.stdout[-6000:]}{r.stderr[-3000:]}"
    )
