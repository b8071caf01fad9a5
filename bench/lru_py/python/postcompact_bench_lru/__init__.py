"""The benchmarks' Python `LruCache` (B1): postcompact's core LRU over arbitrary Python values.

Not part of the product: the daemon never imports it, and `make test` does not build it. `make
build-bench-lru` installs it into .venv (`make bench` and `make test-bench` run it first); its
tests are bench/lru_py/tests.
"""

from postcompact_bench_lru._lru import LruCache

__all__ = ["LruCache"]
