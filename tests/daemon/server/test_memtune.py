"""The daemon's process tuning (postcompact.memtune): the start-up objects frozen out of the
cyclic collector's full passes, and what is created later still collected."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.daemon.conftest import start_daemon


def test_the_daemon_freezes_what_it_imported_before_serving(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    d = start_daemon(["--log-file", str(log)])
    try:
        assert d.client.health()
    finally:
        assert d.stop() == 0
        shutil.rmtree(d.dir, ignore_errors=True)
    records = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    (serving,) = [r for r in records if r.get("msg") == "serving"]
    # The modules, descriptors and grpc a daemon imports: tens of thousands of objects.
    assert serving["gc_frozen"] > 10_000, serving


def test_what_is_created_after_the_freeze_is_still_collected() -> None:
    """In a child process (freezing this one would keep every test's garbage): a cycle made
    after `freeze_startup` is collected; the objects frozen stay out of the count."""
    code = """
import gc, weakref
from postcompact.memtune import freeze_startup
class Node:
    pass
frozen = freeze_startup()
assert frozen > 0 and gc.get_freeze_count() == frozen
a, b = Node(), Node()
a.peer, b.peer = b, a
gone = weakref.ref(a)
del a, b
assert gone() is not None  # a cycle: only the collector frees it
gc.collect()
assert gone() is None
assert gc.get_freeze_count() == frozen
print("ok")
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
