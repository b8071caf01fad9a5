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
