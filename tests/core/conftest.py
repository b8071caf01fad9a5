"""Fixtures of the core tests: the npm lru-cache reference in tests/node."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

NODE_DIR = Path(__file__).resolve().parent.parent / "node"

#: Runs a trace through npm lru-cache; returns one `[keys, calculatedSize, result, evictions]`
#: per op (see tests/node/lru_replay.js).
NodeReplay = Callable[[dict[str, Any]], list[list[Any]]]


def replay_in_node(trace: dict[str, Any], workdir: Path) -> list[list[Any]]:
    """`trace` through npm lru-cache (tests/node/lru_replay.js), the trace file in `workdir`."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the LRU parity tests need Node 20+ and npm lru-cache")
    if not (NODE_DIR / "node_modules" / "lru-cache").is_dir():
        pytest.fail("tests/node/node_modules is missing: run `make test` (it runs npm ci there)")
    path = workdir / "trace.json"
    path.write_text(json.dumps(trace))
    proc = subprocess.run(
        [node, str(NODE_DIR / "lru_replay.js"), str(path)],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"lru_replay.js failed ({proc.returncode}):\n{proc.stderr}")
    states: list[list[Any]] = json.loads(proc.stdout)
    return states


@pytest.fixture
def node_lru(tmp_path: Path) -> NodeReplay:
    def replay(trace: dict[str, Any]) -> list[list[Any]]:
        return replay_in_node(trace, tmp_path)

    return replay
