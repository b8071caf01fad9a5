"""`python -m bench [--quick] [--skip NAME]... [names...]`: run the benchmarks and rewrite
docs/benchmarks.md.

Each benchmark module exposes `run(quick: bool) -> Section`. With names, only those run (with
`--skip`, all but those) and the other sections of docs/benchmarks.md are kept as they were.
B1 needs the benchmarks' LruCache (bench/lru_py), which `make bench` builds first (`make
build-bench-lru`); B7's PostgreSQL steps and B9 need PostgreSQL's server (`make postgres-server`,
a prerequisite of `make bench`; bench/_pg.py starts a throwaway cluster of it, or uses
BENCH_PG_URL's).
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import re
import sys
import time

from bench.report import DOCS, PLOTS, Section

BENCHMARKS = {
    "b1": "bench.b1_cache",
    "b2": "bench.b2_tokens",
    "b3": "bench.b3_truncate",
    "b4": "bench.b4_transport",
    "b5": "bench.b5_restore",
    "b6": "bench.b6_clients",
    "b7": "bench.b7_agents",
    "b8": "bench.b8_hooks",
    "b9": "bench.b9_startup",
    "b10": "bench.b10_serving",
}
HEADER = """# Benchmarks

Written by `make bench` (`python -m bench`); do not edit by hand. Every table compares
competitors measured in the same run on the same machine, and the targets are judged on ratios
within that run: absolute numbers on a shared 2-vCPU VM move by 30-50% between runs.
"""
MARK = "<!-- section:{} -->"


def _machine() -> str:
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (
        f"Machine: {os.cpu_count()} vCPU {cpu}; Python {platform.python_version()}; "
        f"{platform.system()} {platform.release()}."
    )


def _existing_sections() -> dict[str, str]:
    path = DOCS / "benchmarks.md"
    if not path.exists():
        return {}
    text = path.read_text()
    found = {}
    for key in BENCHMARKS:
        mark = re.escape(MARK.format(key))
        match = re.search(mark + r"\n(.*?)(?=<!-- section:|\Z)", text, re.S)
        if match:
            found[key] = match.group(1).rstrip() + "\n"
    return found


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    parser.add_argument(
        "--skip", action="append", default=[], metavar="NAME", help="a benchmark not to run"
    )
    parser.add_argument("names", nargs="*", help=f"benchmarks to run ({', '.join(BENCHMARKS)})")
    args = parser.parse_args()
    unknown = [n for n in args.names + args.skip if n not in BENCHMARKS]
    if unknown:
        parser.error(
            f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}"
        )
    names = [n for n in args.names or BENCHMARKS if n not in args.skip]
    PLOTS.mkdir(parents=True, exist_ok=True)
    sections = _existing_sections()
    for i, name in enumerate(names, 1):
        print(f"[{i}/{len(names)}] {name}: {BENCHMARKS[name]} ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        section: Section = importlib.import_module(BENCHMARKS[name]).run(quick=args.quick)
        sections[name] = section.markdown()
        print(
            f"[{i}/{len(names)}] {name}: done in {time.perf_counter() - t0:.0f}s", file=sys.stderr
        )
        for v in section.verdicts:
            print(f"    {v}", file=sys.stderr)
    body = [
        HEADER,
        _machine(),
        f"Last full or partial run: {time.strftime('%Y-%m-%d')}"
        + (" (quick mode)" if args.quick else "")
        + ".",
        "",
    ]
    for key in BENCHMARKS:
        if key in sections:
            body += [MARK.format(key), sections[key]]
    (DOCS / "benchmarks.md").write_text("\n".join(body))
    print(f"wrote {DOCS / 'benchmarks.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
