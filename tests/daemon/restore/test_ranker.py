"""The learned ranking (`ranking = scored`, the default profile's; docs/eval.md §5) through the
daemon over its socket: files ranked by value per token, the decision trace naming the features
behind each rank; the same ranking after a restart on both stores and after an import."""

from __future__ import annotations

import signal
from pathlib import Path

from postcompact_client import Session
from postcompact_client.types import Decision, Outcome, PreviewCompactResponse

from tests.daemon.conftest import (
    RunningDaemon,
    State,
    new_session_id,
    start_daemon,
    write_project,
)
from tests.daemon.transcript_builder import CWD, Transcript

LINE = "x = 'a line of forty characters, give or take'\n"


def _files(root: Path) -> dict[str, str]:
    """A large file used last and three small ones used before it."""
    texts = {f"src/s{i}.py": f"# small {i}\n" + LINE * 30 for i in (1, 2, 3)}
    texts["src/big.py"] = "# big\n" + LINE * 300
    for rel, text in texts.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return texts


def _restored(resp: PreviewCompactResponse) -> set[str]:
    return {
        Path(d.name).name
        for d in resp.decisions
        if d.outcome in (Outcome.RESTORED, Outcome.TRUNCATED)
    }


def _decision(resp: PreviewCompactResponse, name: str) -> Decision:
    (d,) = [d for d in resp.decisions if Path(d.name).name == name]
    return d


def _read_all(s: Session, texts: dict[str, str]) -> None:
    for rel in ("src/s1.py", "src/s2.py", "src/s3.py", "src/big.py"):  # big.py last
        s.read_file(rel)


def test_value_per_token_restores_the_small_files_before_a_large_recent_one(
    daemon: RunningDaemon, project: Path
) -> None:
    """4,200 tokens: recency restores big.py (~3,700) and the small file used just before it;
    the learned ranking the three small ones (~450 each), and leaves big.py to the budget."""
    texts = _files(project)
    s = daemon.client.open_session(str(project), session_id=new_session_id("value"))
    _read_all(s, texts)
    budget = {"file_token_budget": 4_200, "match_budget": "none"}
    recency = s.preview_compact(skip_hooks=True, policy={**budget, "ranking": "recency"})
    assert _restored(recency) == {"big.py", "s3.py"}
    scored = s.preview_compact(skip_hooks=True, policy={**budget, "ranking": "scored"})
    assert _restored(scored) == {"s1.py", "s2.py", "s3.py"}
    big = _decision(scored, "big.py")
    assert big.outcome == Outcome.DROPPED_BY_BUDGET
    # The trace names the score and the features behind it.
    assert "ranked by value per token: p(needed)=" in big.detail
    assert "1st most recently used" in big.detail
    assert "read whole" in big.detail
    assert "4th most recently used" in _decision(scored, "s1.py").detail
    # The default profile ranks this way without being asked.
    default = s.preview_compact(skip_hooks=True)
    assert all("ranked by value per token" in d.detail for d in default.decisions if d.rank)


def test_the_ranking_names_what_was_seen_and_edited(daemon: RunningDaemon, project: Path) -> None:
    texts = _files(project)
    s = daemon.client.open_session(str(project), session_id=new_session_id("seen"))
    s.read_file("src/big.py", offset=100, limit=20)
    new = texts["src/s1.py"].replace("# small 1", "# small one")
    s.record_read("src/s1.py", texts["src/s1.py"])
    (project / "src/s1.py").write_text(new)
    s.record_write("src/s1.py", new, changed_lines=[(1, 1)])
    resp = s.preview_compact(skip_hooks=True)
    big, s1 = _decision(resp, "big.py"), _decision(resp, "s1.py")
    assert "lines 100-119 seen" in big.detail
    assert "read in part" in big.detail
    assert "edited" in s1.detail
    assert "edited" not in big.detail.split("ranked by value per token")[1]


def _trace(resp: PreviewCompactResponse) -> list[tuple[str, Outcome, int, str]]:
    """Each file decision: name, outcome, rank, and the ranking's account of it."""
    out = []
    for d in resp.decisions:
        if d.rank:
            why = d.detail.partition("ranked by value per token")[2]
            out.append((Path(d.name).name, d.outcome, d.rank, why))
    return out


def test_the_ranking_is_the_same_after_a_restart(state: State, base: Path) -> None:
    """Every feature is stored (the entries, what was seen and edited): a daemon killed and
    started again on the same store ranks the same files the same way, for the same reasons."""
    project = write_project(base / "p")
    texts = _files(project)
    d = start_daemon(state.args, runtime_dir=base)
    try:
        s = d.client.open_session(str(project), session_id=new_session_id("restart"))
        _read_all(s, texts)
        s.read_file("src/big.py", offset=10, limit=40)
        new = texts["src/s2.py"] + "y = 2\n"
        (project / "src/s2.py").write_text(new)
        s.record_write("src/s2.py", new, changed_lines=[(32, 32)])
        before = s.preview_compact(skip_hooks=True)
        assert any("edited" in why for *_, why in _trace(before))
        assert d.stop(signal.SIGKILL) == -signal.SIGKILL
        d = start_daemon(state.args, runtime_dir=base)
        after = d.client.session(s.session_id).preview_compact(skip_hooks=True)
        assert _trace(after) == _trace(before)
    finally:
        d.stop()


def test_an_imported_session_ranks_as_the_same_session_recorded_live(
    daemon: RunningDaemon, base: Path
) -> None:
    """What the import records from a transcript's reads and edits (entries, lines seen, edits)
    is what the live calls record: the two sessions rank their files alike."""
    live_root = write_project(base / "live")
    texts = _files(live_root)
    t = Transcript()
    for rel in ("src/s1.py", "src/s2.py"):
        t.read(rel, texts[rel])
    t.read("src/big.py", texts["src/big.py"], offset=50, limit=30)
    t.read("src/s3.py", texts["src/s3.py"])
    t.edit("src/s3.py", texts["src/s3.py"], "# small 3", "# small three")
    edited = texts["src/s3.py"].replace("# small 3", "# small three")
    imported_root = base / "imported"
    imported_root.mkdir()
    for rel, text in {**texts, "src/s3.py": edited}.items():
        (imported_root / rel).parent.mkdir(parents=True, exist_ok=True)
        (imported_root / rel).write_text(text)
    path = t.save(base / "t.jsonl")
    imp = daemon.client.import_transcript(
        path.read_bytes(),
        cwd=str(imported_root),
        session_id=new_session_id("imported"),
        path_map={CWD: str(imported_root)},
    )
    imported = daemon.client.session(imp.session_id).preview_compact(skip_hooks=True)

    s = daemon.client.open_session(str(live_root), session_id=new_session_id("live"))
    for rel in ("src/s1.py", "src/s2.py"):
        s.read_file(rel)
    s.read_file("src/big.py", offset=50, limit=30)
    s.read_file("src/s3.py")
    (live_root / "src/s3.py").write_text(edited)
    s.record_write("src/s3.py", edited, changed_lines=[(1, 1)])
    live = s.preview_compact(skip_hooks=True)
    assert _trace(imported) == _trace(live)
    assert any("lines 50-79 seen" in why for *_, why in _trace(imported))
