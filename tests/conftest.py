"""Shared fixtures and hooks for every test directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._tiktoken_offline import seed_cache


@pytest.fixture(scope="session")
def tiktoken_cache() -> Path:
    """tiktoken's rank files unpacked offline (from the bpe-openai wheel, sha256-checked) into
    the directory ``$TIKTOKEN_CACHE_DIR`` now points at; ``tiktoken.get_encoding`` works with no
    network afterwards."""
    return seed_cache()


# --- parallel runs (pytest-xdist: `make test-python` runs `pytest -n auto --dist loadgroup`) -----
#
# Each test module is one unit of work, run whole and in order on one worker, as in a serial run:
# its module-scoped daemon is started once, and no module has to be safe against itself. The
# tests of the real harnesses (Claude Code, Codex, Gemini CLI, OpenCode) are one unit together:
# they install into one shared .cache/ and build the plugins into the checkout
# (clients/claude-code/plugins/postcompact/bin, clients/gemini-cli/bin, clients/opencode/dist),
# so they run one after another on a single worker. Without -n these marks change nothing.
HARNESS_DIRS = frozenset({"claude_code", "codex", "gemini_cli", "opencode"})
HARNESS_GROUP = "real-harnesses"


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests = Path(__file__).resolve().parent
    for item in items:
        path = item.path.resolve()
        if not path.is_relative_to(tests):
            continue  # a run that also collects outside tests/ (bench/lru_py/tests): load
        rel = path.relative_to(tests)
        group = HARNESS_GROUP if rel.parts[0] in HARNESS_DIRS else rel.as_posix()
        item.add_marker(pytest.mark.xdist_group(group))
