"""Hook processes are bounded daemon-wide (issue 11, item 5; docs/reliability.md): at most
limits.max_hooks_running run at once; the rest wait within their own timeout, or become a hook
decision naming the limit."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from postcompact.v1 import postcompact_pb2 as pb

from tests.daemon.conftest import RunningDaemon, new_session_id, short_dir, start_daemon


def _config(limit: int, command: str, timeout_s: float) -> str:
    return (
        f"[limits]\nmax_hooks_running = {limit}\n"
        f"[[hooks.session_start]]\ncommand = {command!r}\ntimeout_s = {timeout_s}\n"
    )


def _previews(d: RunningDaemon, root: Path, n: int) -> list[pb.PreviewCompactResponse]:
    sessions = [
        d.client.open_session(str(root), session_id=new_session_id("hook")) for _ in range(n)
    ]
    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(lambda s: s.preview_compact(), sessions))


def _hook_decisions(resp: pb.PreviewCompactResponse) -> list[pb.Decision]:
    return [x for x in resp.decisions if x.subject == pb.SUBJECT_HOOK]


def test_hooks_over_the_limit_wait_for_a_slot() -> None:
    """Six previews at once with room for two hooks: all six hooks run, never more than two at a
    time (each hook records how many were running when it started, under a lock)."""
    root = short_dir("pck")
    count, peak = root / "running", root / "peak"
    count.write_text("0")
    peak.write_text("0")
    hook = (
        f"exec 9>{root}/lock; flock 9; n=$(($(cat {count}) + 1)); echo $n > {count}; "
        f"[ $n -gt $(cat {peak}) ] && echo $n > {peak}; flock -u 9; sleep 0.2; "
        f"flock 9; echo $(($(cat {count}) - 1)) > {count}"
    )
    d = start_daemon(config_toml=_config(2, hook, 30))
    try:
        results = _previews(d, root, 6)
    finally:
        d.stop()
        shutil.rmtree(d.dir, ignore_errors=True)
    outcomes = [x.outcome for r in results for x in _hook_decisions(r)]
    assert outcomes == [pb.OUTCOME_HOOK_OK] * 6
    assert int(peak.read_text()) <= 2
    shutil.rmtree(root, ignore_errors=True)


def test_a_hook_that_gets_no_slot_in_its_timeout_is_a_decision() -> None:
    """Hooks that never finish by themselves: two take the two slots and are killed at their
    timeout; of the four waiting, those still without a slot at the end of their own timeout
    never start, and say why (a waiter that got a freed slot in its last moments starts, and is
    killed in turn)."""
    root = short_dir("pck")
    started = root / "started"
    hook = f"echo started >> {started}; exec sleep 60"
    d = start_daemon(config_toml=_config(2, hook, 2))
    try:
        results = _previews(d, root, 6)
    finally:
        d.stop()
        shutil.rmtree(d.dir, ignore_errors=True)
    decisions = [x for r in results for x in _hook_decisions(r)]
    assert all(x.outcome == pb.OUTCOME_HOOK_TIMED_OUT for x in decisions)
    not_started = [x for x in decisions if x.detail.startswith("not started")]
    assert len(not_started) >= 1
    assert "limits.max_hooks_running" in not_started[0].detail
    # The ones not started ran no process; a started one may be killed at its timeout before
    # its first command ran (on a loaded machine), so this is a bound, not a count.
    assert 1 <= len(started.read_text().splitlines()) <= 6 - len(not_started)
    shutil.rmtree(root, ignore_errors=True)
