"""Shared fixtures and hooks for every test directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import _bench_core
from tests._tiktoken_offline import seed_cache


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A selected `bench_core` test (of the bench-only `LruCache`) fails, saying how to build the
    core with its `bench` feature, when the imported core lacks it: never a skip."""
    if item.get_closest_marker("bench_core") is not None and not _bench_core.AVAILABLE:
        pytest.fail(_bench_core.MISSING, pytrace=False)


@pytest.fixture(scope="session")
def tiktoken_cache() -> Path:
    """tiktoken's rank files unpacked offline (from the bpe-openai wheel, sha256-checked) into
    the directory ``$TIKTOKEN_CACHE_DIR`` now points at; ``tiktoken.get_encoding`` works with no
    network afterwards."""
    return seed_cache()
