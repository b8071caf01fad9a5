"""Fixtures of the tests of the benchmarks' LruCache: the npm lru-cache reference of the core's
own tests (tests/core/conftest.py)."""

from __future__ import annotations

from tests.core.conftest import node_lru

__all__ = ["node_lru"]
