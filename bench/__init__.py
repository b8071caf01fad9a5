"""postcompact's benchmarks: `make bench` (python -m bench) writes docs/benchmarks.md."""
