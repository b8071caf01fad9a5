"""Complement mode (`RestorePolicy.complement = CLAUDE_CODE`, docs/profiles.md): postcompact
restores only the files Claude Code's own rule leaves out, and leaves everything else to Claude
Code. Through the real daemon over its socket."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from postcompact_client import Session
from postcompact_client.types import AttachmentKind, CompactResponse, Decision, Outcome

from tests.daemon.conftest import RunningDaemon, new_session_id, start_daemon

COMPLEMENT = {"complement": "claude_code", "file_token_budget": 20_000}


def _lines(n: int, tag: str) -> str:
    return "".join(f"{tag} line {i:05d}\n" for i in range(1, n + 1))


def _write(project: Path, name: str, text: str, mtime: int) -> None:
    (project / name).write_text(text)
    os.utime(project / name, (mtime, mtime))


def _restored(resp: CompactResponse) -> list[str]:
    return [Path(a.file.path).name for a in resp.attachments if a.file is not None]


def _decisions(resp: CompactResponse) -> dict[str, Decision]:
    return {Path(d.name).name: d for d in resp.decisions}


def _harness(resp: CompactResponse) -> set[str]:
    return {n for n, d in _decisions(resp).items() if d.outcome == Outcome.RESTORED_BY_HARNESS}


def _nine_files(project: Path) -> None:
    """f1..f9, read in that order; the odd ones are the newest on disk (f9 newest)."""
    for i in range(1, 10):
        mtime = 1_700_000_000 + (1000 if i % 2 else 0) + i
        _write(project, f"f{i}.py", _lines(20, f"f{i}"), mtime)


def _open(daemon: RunningDaemon, project: Path, tag: str, **kw: object) -> Session:
    return daemon.client.open_session(str(project), session_id=new_session_id(tag), **kw)  # type: ignore[arg-type]


def test_the_files_claude_code_restores_are_left_to_it(
    daemon: RunningDaemon, project: Path
) -> None:
    _nine_files(project)
    cc = _open(daemon, project, "cc", profile="claude-code")
    s = _open(daemon, project, "complement", policy=COMPLEMENT)
    for i in range(1, 10):
        cc.read_file(f"f{i}.py")
        s.read_file(f"f{i}.py")
    cc_resp = cc.compact(skip_hooks=True)
    theirs = _restored(cc_resp)
    assert theirs == ["f9.py", "f7.py", "f5.py", "f3.py", "f1.py"]  # the 5 newest by mtime
    resp = s.compact(skip_hooks=True)
    assert _harness(resp) == set(theirs)
    assert sorted(_restored(resp)) == ["f2.py", "f4.py", "f6.py", "f8.py"]
    d = _decisions(resp)["f9.py"]
    assert d.tokens == _decisions(cc_resp)["f9.py"].tokens  # Claude Code's attachment, estimated
    assert d.rank == 0
    assert d.detail == "Claude Code restores it itself (its rank 1 of 5, whole)"
    # Held as restored afterwards: the next compaction, with nothing read since, leaves the same
    # five to Claude Code (the four postcompact restored are not Claude Code's candidates: it
    # never read them) and brings the other four back.
    again = s.compact(skip_hooks=True)
    assert _harness(again) == set(theirs)
    assert sorted(_restored(again)) == ["f2.py", "f4.py", "f6.py", "f8.py"]


def test_a_file_postcompact_restored_is_claude_codes_again_once_read(
    daemon: RunningDaemon, project: Path
) -> None:
    _nine_files(project)
    s = _open(daemon, project, "reread", policy=COMPLEMENT)
    for i in range(1, 10):
        s.read_file(f"f{i}.py")
    s.compact(skip_hooks=True)
    os.utime(project / "f2.py", (1_800_000_000, 1_800_000_000))  # now the newest on disk
    s.read_file("f2.py")  # Claude Code holds it as read again
    resp = s.compact(skip_hooks=True)
    assert "f2.py" in _harness(resp)
    assert "f2.py" not in _restored(resp)
    assert "f1.py" in _restored(resp)  # pushed out of Claude Code's five


def test_a_file_claude_code_notes_comes_back_as_the_lines_seen(
    daemon: RunningDaemon, project: Path
) -> None:
    """Over Claude Code's cap (its countTokens estimate, characters / 3, over 5,000) it restores
    a path-only note; postcompact restores the lines the agent saw of it."""
    _write(project, "big.py", _lines(1500, "big"), 1_900_000_000)
    s = _open(daemon, project, "big", policy=COMPLEMENT)
    s.read_file("big.py", offset=100, limit=40)
    resp = s.compact(skip_hooks=True)
    assert _restored(resp) == ["big.py"]
    f = next(a.file for a in resp.attachments if a.file is not None)
    assert (f.start_line, f.num_lines) == (100, 40)
    assert _decisions(resp)["big.py"].outcome == Outcome.RESTORED


def test_near_the_cap_the_file_is_left_to_postcompact(daemon: RunningDaemon, project: Path) -> None:
    """A file whose countTokens estimate is within 20% of Claude Code's 5,000-token cap may come
    back whole or as a note: in doubt postcompact restores it too (twice rather than never)."""
    text = _lines(845, "near")  # 16 characters a line: 13,520 characters, ~4,507 by chars / 3
    _write(project, "near.py", text, 1_900_000_000)
    _write(project, "small.py", _lines(5, "small"), 1_900_000_001)
    s = _open(daemon, project, "near", policy={**COMPLEMENT, "max_tokens_per_file": 5000})
    s.read_file("near.py")
    s.read_file("small.py")
    resp = s.compact(skip_hooks=True)
    assert _harness(resp) == {"small.py"}
    assert _decisions(resp)["near.py"].outcome == Outcome.RESTORED


def test_files_only_everything_else_is_the_harnesss(daemon: RunningDaemon, project: Path) -> None:
    _write(project, "a.py", _lines(5, "a"), 1_900_000_000)
    s = _open(daemon, project, "only", policy=COMPLEMENT)
    s.read_file("a.py")
    s.record_skill("review", path="/skills/review/SKILL.md", content=b"Review the diff.")
    s.set_mode("plan")
    s.upsert_task(
        {"task_id": "t1", "task_type": "local_agent", "description": "bg", "status": "running"}
    )
    s.set_catalog(deferred_tools=["WebSearch"])
    resp = s.compact(skip_hooks=True)
    assert {a.kind for a in resp.attachments} <= {AttachmentKind.FILE}
    skill = _decisions(resp)["review"]
    assert skill.outcome == Outcome.RESTORED_BY_HARNESS
    assert "re-attaches invoked skills itself" in skill.detail
    # Without complement mode the same session restores them all.
    full = s.preview_compact(skip_hooks=True, policy={"complement": "none"})
    kinds = {a.kind for a in full.attachments}
    assert {
        AttachmentKind.INVOKED_SKILLS,
        AttachmentKind.PLAN_MODE,
        AttachmentKind.TASK_STATUS,
        AttachmentKind.DEFERRED_TOOLS_DELTA,
    } <= kinds


def test_what_postcompact_alone_restored_survives_a_kill_9(base: Path, project: Path) -> None:
    _nine_files(project)
    d = start_daemon(runtime_dir=base)
    try:
        sid = new_session_id("kill")
        s = d.client.open_session(str(project), session_id=sid, policy=COMPLEMENT)
        for i in range(1, 10):
            s.read_file(f"f{i}.py")
        s.compact(skip_hooks=True)
        d.stop(signal.SIGKILL)
        d = start_daemon(runtime_dir=base)
        resp = d.client.session(s.session_id).compact(skip_hooks=True)
        assert _harness(resp) == {"f9.py", "f7.py", "f5.py", "f3.py", "f1.py"}
        assert sorted(_restored(resp)) == ["f2.py", "f4.py", "f6.py", "f8.py"]
    finally:
        d.stop()


def test_match_budget_spends_what_claude_code_spends(daemon: RunningDaemon, project: Path) -> None:
    """`match_budget = CLAUDE_CODE`: the file budget at this compaction is the rough tokens of
    Claude Code's own attachments here, charged by each attachment's tokens: never more. Claude
    Code restores its five whole; the lines the agent saw of each cost less and leave room."""
    _nine_files(project)
    cc = _open(daemon, project, "cc-budget", profile="claude-code")
    s = _open(daemon, project, "budget", policy={"match_budget": "claude_code", "max_files": 20})
    for i in range(1, 10):
        cc.read_file(f"f{i}.py", offset=1, limit=6)
        s.read_file(f"f{i}.py", offset=1, limit=6)
    theirs = sum(a.tokens for a in cc.compact(skip_hooks=True).attachments)
    resp = s.compact(skip_hooks=True)
    ours = [a for a in resp.attachments if a.file is not None]
    assert sum(a.tokens for a in ours) <= theirs
    assert len(ours) > 5
    dropped = [d for d in resp.decisions if d.outcome == Outcome.DROPPED_BY_BUDGET]
    assert dropped
    assert all(f"of the {theirs}-token file budget" in d.detail for d in dropped)


def test_a_budget_given_is_the_budget_applied(daemon: RunningDaemon, project: Path) -> None:
    """The default profile matches Claude Code's spend, but a session that sets
    `file_token_budget` alone gets that budget (the demo's five files, 50,000 tokens, did not when
    Claude Code's pick by mtime happened to be smaller); a layer setting both keeps the match."""
    _nine_files(project)
    given = _open(daemon, project, "given", policy={"max_files": 20, "file_token_budget": 50_000})
    both = _open(
        daemon,
        project,
        "both",
        policy={"max_files": 20, "file_token_budget": 50_000, "match_budget": "claude_code"},
    )
    for s in (given, both):
        for i in range(1, 10):
            s.read_file(f"f{i}.py")
    resp = given.compact(skip_hooks=True)
    assert sorted(_restored(resp)) == [f"f{i}.py" for i in range(1, 10)]
    assert not [d for d in resp.decisions if d.outcome == Outcome.DROPPED_BY_BUDGET]
    matched = both.compact(skip_hooks=True)
    assert len(_restored(matched)) < 9
    dropped = [d for d in matched.decisions if d.outcome == Outcome.DROPPED_BY_BUDGET]
    assert dropped
    assert all("of the 50000-token" not in d.detail for d in dropped)


def test_claude_code_first_ranks_its_picks_first(daemon: RunningDaemon, project: Path) -> None:
    """FILE_RANKING_CLAUDE_CODE_FIRST: the five Claude Code restores, in its order (by mtime),
    then the rest by use, newest first."""
    _nine_files(project)
    policy = {"ranking": "claude_code_first", "max_files": 7, "match_budget": "none"}
    s = _open(daemon, project, "first", policy=policy)
    for i in range(1, 10):
        s.read_file(f"f{i}.py")
    resp = s.compact(skip_hooks=True)
    assert _restored(resp) == ["f9.py", "f7.py", "f5.py", "f3.py", "f1.py", "f8.py", "f6.py"]


def test_the_callers_budget_counts_the_text_it_sends(daemon: RunningDaemon, project: Path) -> None:
    """In complement mode each file is charged its attachment's tokens (UTF-16 units / 4 of the
    text as sent): a caller that can send N characters sets the budget to N / 4."""
    _nine_files(project)
    s = _open(daemon, project, "inline", policy={"complement": "claude_code"})
    for i in range(1, 10):
        s.read_file(f"f{i}.py")
    budget = 450
    resp = s.compact(skip_hooks=True, policy={"file_token_budget": budget})
    ours = [a for a in resp.attachments if a.file is not None]
    assert 0 < len(ours) < 4
    assert sum(a.tokens for a in ours) <= budget
    assert len("\n".join(b for a in ours for b in a.blocks)) <= 4 * budget + 2 * len(ours)
