"""The decisions of a compaction, as the outside testers expected them (issue: not ordered by
rank, skills always rank 0, and `tokens` meaning two things): in rank order within each subject,
skills ranked newest first, `tokens` the item as attached and `content_tokens` what was held."""

from __future__ import annotations

from pathlib import Path

from postcompact_client.types import Outcome, Subject

from tests.daemon.conftest import RunningDaemon, new_session_id


def test_decisions_are_in_rank_order_and_say_which_cost_is_which(
    daemon: RunningDaemon, project: Path
) -> None:
    s = daemon.client.open_session(str(project), session_id=new_session_id("ranks"))
    for i in range(8):  # 8 candidates for 5 places: ranks 6-8 are dropped by rank
        (project / f"f{i}.txt").write_text(f"file {i}\n" * (20 + i))
        s.record_read(f"f{i}.txt", (project / f"f{i}.txt").read_text(), timestamp_ms=1000 + i)
    s.record_read("CLAUDE.md", "# memory\n", timestamp_ms=5000)  # excluded: a memory file
    for i, name in enumerate(("old", "mid", "new")):
        s.record_skill(
            name, path=f"/s/{name}.md", content=f"skill {name}\n" * 10, invoked_at_ms=10 + i
        )
    resp = s.compact(skip_hooks=True, policy={"skills_token_budget": 40})

    files = [d for d in resp.decisions if d.subject == Subject.FILE]
    ranks = [d.rank for d in files]
    assert ranks == [1, 2, 3, 4, 5, 6, 7, 8, 0], ranks  # ranked first, in order, then the rest
    by_name = {Path(d.name).name: d for d in files}
    assert [by_name[f"f{i}.txt"].rank for i in range(7, -1, -1)] == list(range(1, 9))
    attached = {a.file.path: a.tokens for a in resp.attachments if a.file is not None}
    for d in files:
        assert d.content_tokens > 0, d  # every one held content
        if d.outcome == Outcome.RESTORED:
            assert d.tokens == attached[d.name]  # as attached
        elif d.outcome == Outcome.DROPPED_BY_BUDGET:  # rendered: what it would have taken
            assert d.tokens > 0, d
        else:  # never rendered: dropped by rank, excluded
            assert d.outcome in (Outcome.DROPPED_BY_RANK, Outcome.EXCLUDED_MEMORY_FILE), d
            assert d.tokens == 0

    skills = [d for d in resp.decisions if d.subject == Subject.SKILL]
    assert [(d.name, d.rank) for d in skills] == [("new", 1), ("mid", 2), ("old", 3)]
    assert {d.name: d.outcome for d in skills}["old"] == Outcome.DROPPED_BY_BUDGET
    assert all(d.content_tokens > 0 and d.tokens > 0 for d in skills)
    # The subjects keep the pipeline's order: files, then skills.
    subjects = [d.subject for d in resp.decisions]
    assert subjects == sorted(subjects, key=[Subject.FILE, Subject.SKILL].index)
