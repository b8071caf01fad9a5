"""Shared fixtures and hooks for every test directory."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadScopeScheduling
from xdist.workermanage import WorkerController

from tests._tiktoken_offline import seed_cache


@pytest.fixture(scope="session")
def tiktoken_cache() -> Path:
    """tiktoken's rank files unpacked offline (from the bpe-openai wheel, sha256-checked) into
    the directory ``$TIKTOKEN_CACHE_DIR`` now points at; ``tiktoken.get_encoding`` works with no
    network afterwards."""
    return seed_cache()


# --- parallel runs (pytest-xdist: `make test-python` runs `pytest -n auto`) --------------------
#
# The unit of work a worker is given (pyproject.toml's `--dist loadscope`, scheduled here): a test
# module, run whole and in order on one worker as in a serial run (its module-scoped daemon is
# started once; no module has to be safe against itself), except the tests of the real harnesses
# (Claude Code, Codex, Gemini CLI, OpenCode), one unit together, handed out first: they install
# into one shared .cache/ and build the plugins into the checkout
# (clients/claude-code/plugins/postcompact/bin, clients/gemini-cli/bin, clients/opencode/dist),
# so they run one after another on one worker while the other workers take the modules, the
# biggest first. The grouping is by node id, not by `xdist_group` marks: xdist 3.8.0 renames a
# marked test's node id through an attribute pytest 9 no longer reads, so its `loadgroup` runs
# marked tests anywhere. Without -n none of this applies.
HARNESS_DIRS = ("tests/claude_code/", "tests/codex/", "tests/gemini_cli/", "tests/opencode/")
HARNESS_UNIT = "real harnesses"


class ModuleScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist is untyped
    """xdist's `loadscope` with a module (not a class) as the unit, the harnesses one unit."""

    def _split_scope(self, nodeid: str) -> str:
        if nodeid.startswith(HARNESS_DIRS):
            return HARNESS_UNIT
        return nodeid.split("::", 1)[0]

    def _assign_work_unit(self, node: WorkerController) -> None:
        if HARNESS_UNIT in self.workqueue:  # the longest unit: started first
            self.workqueue.move_to_end(HARNESS_UNIT, last=False)
        super()._assign_work_unit(node)


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> ModuleScheduling | None:
    if config.getvalue("dist") != "loadscope":
        return None  # another --dist asked for on the command line
    return ModuleScheduling(config, log)
