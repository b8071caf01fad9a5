"""`LruCache` of `postcompact._core`, which only the benchmarks (B1) and its tests use.

The core compiles it only with its `bench` cargo feature (rust_core/Cargo.toml), so the default
build (`make build`: what `make serve` runs and the daemon's tests use) lacks it, and so does
`daemon/postcompact/_core.pyi`, which stubtest checks against that build. Its typed surface is
`_bench_core.pyi` beside this file (stubtest checks it against the featured build in
`make test-bench-core`). Take it from here, never from `postcompact._core`:

- with the featured build (`make test-bench-core` and `make bench` build it into
  target/bench/site and put that first on PYTHONPATH), `LruCache` is the extension's class;
- with the default build, `AVAILABLE` is false and `LruCache` a stand-in whose call raises
  `MISSING`, so that modules importing it still import (pytest collects them and deselects their
  `bench_core` tests) and any use fails loudly; tests/conftest.py fails every selected
  `bench_core` test with `MISSING`, which says how to build it.
"""

from __future__ import annotations

from typing import NoReturn

from postcompact import _core

__all__ = ["AVAILABLE", "MISSING", "LruCache"]

MISSING = (
    "postcompact._core was built without the `bench` feature, so it has no LruCache (only the "
    "benchmarks and their tests use it): run `make test-bench-core` (its tests) or `make bench` "
    "(B1), which build that variant into target/bench/site and put it first on PYTHONPATH; or "
    "install it in .venv with `CARGO_TARGET_DIR=target/bench maturin develop --release "
    "--features bench` (`make build` puts the default back)."
)

AVAILABLE = hasattr(_core, "LruCache")


def _missing(*_args: object, **_kwargs: object) -> NoReturn:
    raise RuntimeError(MISSING)


LruCache = _core.LruCache if AVAILABLE else _missing
