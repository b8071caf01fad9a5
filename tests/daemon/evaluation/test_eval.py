"""`postcompact eval` on small hand-made transcripts whose right answers are known
(docs/eval.md §1): the candidates, the need in a window, coverage, re-reads and failed edits
avoided, net tokens, per policy, through the command line; the input checks; the selection
procedure and its leave-one-repository-out estimate on made-up counts; the bootstrap."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from postcompact import core
from postcompact.evaluation import crossval, intervals
from postcompact.evaluation.corpus import transcript_files
from postcompact.evaluation.measure import Counts
from postcompact.evaluation.need import points
from postcompact.evaluation.policies import FAMILIES, configurations, parse_policy
from postcompact.restore.policy import validate_policy
from postcompact.transcript.parse import parse

from tests.daemon.transcript_builder import CWD, Transcript, numbered


def _text(tag: str, n: int = 3) -> str:
    return "\n".join(f"{tag}{i}" for i in range(1, n + 1)) + "\n"


def session_with_one_compaction() -> Transcript:
    """Seven small files worked on, then a compaction; after it: an Edit of a.py (read but not
    among Claude Code's five), an Edit of c.py (written last: Claude Code's first), nine shell
    commands, a Read of f.py (read first of all), a Read of a file never seen before."""
    t = Transcript()
    for rel in ("f.py", "a.py", "b.py", "d.py", "e.py", "g.py"):
        t.read(rel, _text(rel[0]))
    t.write("c.py", _text("c"))
    t.compact()
    t.edit("a.py", _text("a"), "a2", "A2")
    t.edit("c.py", _text("c"), "c3", "C3")
    for _ in range(9):
        t.bash()
    t.read("f.py", _text("f"))
    t.read("z.py", _text("z"))
    return t


def _run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "postcompact", "eval", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _eval(*args: str | Path) -> tuple[dict[str, Any], str]:
    r = _run(*args)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def test_needs_and_candidates_of_a_hand_made_session(tmp_path: Path) -> None:
    t = parse(session_with_one_compaction().save(tmp_path / "s.jsonl").read_bytes())
    (p,) = points(t, 30)
    # Seen before the boundary: every line of the seven files (a Read's four lines, the empty
    # one after the last newline included; the Write's too).
    assert sorted(Path(x).name for x in p.seen) == [f"{c}.py" for c in "abcdefg"]
    assert p.seen[f"{CWD}/b.py"] == {1, 2, 3, 4}
    touches = [(Path(x.path).name, x.kind, x.lines, x.call) for x in p.touches]
    assert touches == [
        ("a.py", "edit", frozenset({2}), 1),
        ("c.py", "edit", frozenset({3}), 2),
        ("f.py", "read", None, 12),  # a whole-file read: it needs what was seen
        ("z.py", "read", None, 13),
    ]
    needed = p.needed(30, p.seen)
    assert {Path(k).name: v for k, v in needed.items()} == {
        "a.py": {2},
        "c.py": {3},
        "f.py": {1, 2, 3, 4},  # z.py was no candidate
    }
    assert {Path(k).name for k in p.needed(10, p.seen)} == {"a.py", "c.py"}


def test_eval_scores_each_policy_as_the_session_says(tmp_path: Path) -> None:
    path = session_with_one_compaction().save(tmp_path / "owner__repo__one.jsonl")
    wide = "wide=default:max_files=20,match_budget=HARNESS_RULE_NONE"
    policies = ("claude-code", "claude-code-2.1.88", "default", wide)
    out, progress = _eval(path, *(f"--policy={p}" for p in policies), "--json")
    assert "[1/1] owner__repo__one.jsonl" in progress
    assert out["default"] == "default"
    assert out["files"] == 1
    cc, old, default, new = (out["policies"][p.split("=")[0]] for p in policies)
    # Claude Code: c.py (the newest mtime), then the most recently used of the rest, five in
    # all: a.py and f.py (read first) are left out. c.py's edit is covered.
    assert (cc["compactions"], cc["needed_files"], cc["covered_files"]) == (1, 3, 1)
    # Failed edits avoided: c.py restored; a.py unrestored but unchanged since its full read,
    # which today's Claude Code carries over the compaction and 2.1.88 does not.
    assert (cc["edits_first"], cc["failed_edits_avoided"]) == (2, 2)
    assert (old["covered_files"], old["failed_edits_avoided"]) == (1, 1)
    assert (cc["reads_first"], cc["rereads_avoided"]) == (1, 0)
    # The default restores in Claude Code's tokens: seven files of one size read whole, so the
    # same five (c.py written last, then the most recently used), at the same tokens.
    assert (default["files_restored"], default["covered_files"]) == (5, 1)
    assert default["tokens_restored"] <= cc["tokens_restored"]
    # Without that budget all seven (small) files come back: every need covered.
    assert (new["needed_files"], new["covered_files"], new["recall"]) == (3, 3, 1.0)
    assert (new["rereads_avoided"], new["failed_edits_avoided"]) == (1, 2)
    assert new["files_restored"] == 7
    assert cc["files_restored"] == 5
    # Tokens: what was restored; wasted: the files never needed (b, d, e, g for both).
    assert 0 < cc["wasted_tokens"] < cc["tokens_restored"]
    assert 0 < new["wasted_tokens"] < new["tokens_restored"]


def test_window_ten_leaves_out_the_twelfth_call(tmp_path: Path) -> None:
    path = session_with_one_compaction().save(tmp_path / "w.jsonl")
    out, _ = _eval(path, "--policy=default", "--window=10", "--json")
    assert out["window"] == 10
    assert out["policies"]["default"]["needed_files"] == 2


def test_a_ranged_read_needs_its_lines_and_a_partial_restore_is_not_covered(
    tmp_path: Path,
) -> None:
    body = _text("x", 400)
    t = Transcript()
    t.read("big.py", body, offset=100, limit=20)
    t.compact()
    t.read("big.py", body, offset=110, limit=30)  # lines 110-139: 120-139 never seen
    path = t.save(tmp_path / "r.jsonl")
    (p,) = points(parse(path.read_bytes()), 30)
    assert p.needed(30, p.seen) == {f"{CWD}/big.py": set(range(110, 140))}
    out, _ = _eval(path, "--policy=default", "--policy=default-v1", "--json")
    for name in ("default", "default-v1"):
        got = out["policies"][name]
        # Both restore lines 100-119 (the range read): 10 of the 30 lines needed.
        assert (got["needed_files"], got["covered_files"]) == (1, 0), name
        assert got["line_recall"] == pytest.approx(10 / 30, abs=1e-4), name


def test_policies_on_the_command_line(tmp_path: Path) -> None:
    path = session_with_one_compaction().save(tmp_path / "p.jsonl")
    out, _ = _eval(path, "--policy=two=default:max_files=2", "--json")
    assert out["policies"]["two"]["files_restored"] == 2
    with pytest.raises(ValueError, match="unknown policy 'nope'"):
        parse_policy("nope")
    with pytest.raises(ValueError, match="policy bad: "):
        parse_policy("bad=default:no_such_field=1")
    r = subprocess.run(
        [sys.executable, "-m", "postcompact", "eval", str(path), "--policy=nope"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 2
    assert "unknown policy 'nope'" in r.stderr
    r = subprocess.run(
        [sys.executable, "-m", "postcompact", "eval", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 2
    assert "no such file or directory" in r.stderr


def test_the_repository_of_each_transcript(tmp_path: Path) -> None:
    (tmp_path / "INDEX.json").write_text(
        json.dumps({"files": [{"file": "x.jsonl", "source_repo": "acme/widgets"}]})
    )
    session_with_one_compaction().save(tmp_path / "x.jsonl")
    session_with_one_compaction().save(tmp_path / "octo__cat__1.jsonl")
    session_with_one_compaction().save(tmp_path / "plain.jsonl")
    got = {f.path.name: f.repo for f in transcript_files([tmp_path])}
    assert got == {
        "octo__cat__1.jsonl": "octo/cat",
        "x.jsonl": "acme/widgets",
        "plain.jsonl": "plain",
    }


def test_markdown_and_plot_are_written(tmp_path: Path) -> None:
    path = session_with_one_compaction().save(tmp_path / "m.jsonl")
    doc = tmp_path / "eval.md"
    doc.write_text(
        "# Kept\n\nhand-written\n\n<!-- everything below is written by `make eval` -->\nold"
    )
    png = tmp_path / "eval.png"
    wide = "--policy=wide=default:max_files=20,match_budget=HARNESS_RULE_NONE"
    _eval(path, "--policy=claude-code", wide, "--markdown", doc, "--plot", png, "--json")
    text = doc.read_text()
    assert text.startswith("# Kept\n\nhand-written")
    assert "old" not in text.split("make eval` -->")[1][:5]
    # Recall 1 against Claude Code's 1/3; one compaction: every resample is that one.
    assert "| wide | 1 | 3/3 | 1.000 | 3.00x [3.00, 3.00] |" in text
    assert "![recall against tokens restored](eval.png)" in text
    assert png.read_bytes().startswith(b"\x89PNG")


# --- input checks -----------------------------------------------------------------------------


def test_a_policy_field_out_of_range_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = session_with_one_compaction().save(tmp_path / "p.jsonl")
    r = _run(path, "--policy=neg=default:max_files=-1")
    assert r.returncode == 2
    assert r.stderr == "postcompact: policy neg: policy.max_files must not be negative, got -1\n"
    assert r.stdout == ""
    with pytest.raises(ValueError, match=r"policy zero: policy\.max_tokens_per_file must be"):
        parse_policy("zero=default:max_tokens_per_file=0")
    with pytest.raises(ValueError, match=r"policy odd: policy\.ranking is not a known value: 99"):
        parse_policy("odd=default:ranking=99")


def test_a_line_that_is_not_json_names_file_and_line_before_any_replay(tmp_path: Path) -> None:
    session_with_one_compaction().save(tmp_path / "a__good__1.jsonl")
    bad = session_with_one_compaction().save(tmp_path / "b__bad__1.jsonl")
    lines = bad.read_text().splitlines(keepends=True)
    lines[2] = '{"type": "user", oops\n'
    bad.write_text("".join(lines))
    r = _run(tmp_path, "--policy=default")
    assert r.returncode == 2
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"postcompact: {bad}:3: not valid JSON"), r.stderr
    assert "[1/" not in r.stderr  # nothing was replayed
    assert r.stdout == ""


def test_transcripts_without_a_compaction_are_skipped_and_counted(tmp_path: Path) -> None:
    session_with_one_compaction().save(tmp_path / "a__one__1.jsonl")
    for n in (1, 2):
        t = Transcript()
        t.read("f.py", _text("f"))
        t.save(tmp_path / f"c__none__{n}.jsonl")
    out, err = _eval(tmp_path, "--policy=default", "--json")
    assert "postcompact: 2 transcripts without a compaction skipped" in err
    assert (out["files"], out["skipped"], out["compactions"]) == (1, 2, 1)
    r = _run(tmp_path / "c__none__1.jsonl", tmp_path / "c__none__2.jsonl", "--policy=default")
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == (
        "postcompact: no transcript of the 2 holds a main-thread compaction to score"
    )
    assert "Traceback" not in r.stderr


def test_an_unknown_family_is_one_line_and_exit_2(tmp_path: Path) -> None:
    path = session_with_one_compaction().save(tmp_path / "p.jsonl")
    r = _run(path, "--family=nope")
    assert r.returncode == 2
    assert r.stderr.startswith("postcompact: unknown family 'nope' (known: claude-code")


# --- net tokens -------------------------------------------------------------------------------


def test_net_tokens_are_the_rereads_avoided_less_the_tokens_no_one_used(tmp_path: Path) -> None:
    """f.py is re-read after the compaction, g.py never: every policy restores both (small);
    the avoided re-read costs what its numbered result costs, g.py's attachment is wasted."""
    f_text, g_text = _text("f", 40), _text("g", 5)
    t = Transcript()
    t.read("f.py", f_text)
    t.read("g.py", g_text)
    t.compact()
    t.read("f.py", f_text)
    path = t.save(tmp_path / "n.jsonl")
    reread = core.estimate(numbered(f_text.split("\n"), 1))
    out, _ = _eval(path, "--policy=claude-code", "--policy=default", "--json")
    for name in ("claude-code", "default"):
        got = out["policies"][name]
        assert (got["rereads_avoided"], got["reads_first"]) == (1, 1), name
        assert got["reread_tokens_avoided"] == reread, name
        assert 0 < got["wasted_tokens"] < got["tokens_restored"], name
        assert got["net_tokens"] == reread - got["wasted_tokens"], name


# --- the families, the selection procedure, the intervals -------------------------------------


def test_the_families_expand_into_valid_named_configurations() -> None:
    every = configurations()
    names = [c.name for c in every]
    assert len(names) == len(set(names)) == 2 + 180 + 24 + 48
    assert names[:2] == ["claude-code", "claude-code-2.1.88"]
    assert "matched/recency-f20-c5000-skip" in names
    assert [f for f, family in FAMILIES.items() if family.bounded] == ["claude-code", "matched"]
    assert "seen/recency-f20-c3000-b7000-skip" in names
    assert "whole/mtime-f10-c5000-b50000-reference" in names
    for c in every:
        validate_policy(c.policy)
    got = parse_policy("seen/mtime-f5-c2000-b4000-truncate-head")
    assert (got.policy.restore_seen, got.policy.max_files, got.policy.file_token_budget) == (
        True,
        5,
        4000,
    )
    assert len(FAMILIES["whole"].configurations()) == 48


def _c(covered: int, needed: int, tokens: int) -> Counts:
    return Counts(compactions=1, covered_files=covered, needed_files=needed, tokens_restored=tokens)


# Four compactions in three repositories: a, a, b, c. Per configuration: (covered, needed,
# tokens) at each. claude-code restores 100 tokens each time.
_REPOS = ["a", "a", "b", "c"]
_TABLE = {
    "claude-code": [_c(1, 4, 100), _c(0, 2, 100), _c(1, 2, 100), _c(0, 2, 100)],
    # the best recall everywhere, at more tokens than claude-code: never eligible
    "big": [_c(4, 4, 500), _c(2, 2, 500), _c(2, 2, 500), _c(2, 2, 500)],
    # good on a and b, nothing on c
    "ab": [_c(3, 4, 90), _c(1, 2, 90), _c(2, 2, 90), _c(0, 2, 90)],
    # good on c only, a little on a
    "c": [_c(2, 4, 80), _c(0, 2, 80), _c(0, 2, 80), _c(2, 2, 80)],
    # "ab"'s twin by another name, at the same tokens: the name breaks the tie
    "zz-ab": [_c(3, 4, 90), _c(1, 2, 90), _c(2, 2, 90), _c(0, 2, 90)],
}


def test_the_procedure_picks_the_best_recall_within_claude_codes_tokens() -> None:
    everything = range(4)
    # On everything: big is over budget; ab 6/10 (c 4/10, claude-code 2/10); zz-ab ties ab on
    # recall and tokens and loses on the name.
    assert crossval.pick(_TABLE, list(everything), "claude-code") == "ab"
    # On c alone: c's 2/2 beats everyone within budget.
    assert crossval.pick(_TABLE, [3], "claude-code") == "c"
    # Equal recall: fewer tokens wins. On b alone, ab 2/2 at 90 == zz-ab; c 0/2.
    table = {**_TABLE, "cheap": [_c(0, 4, 1), _c(0, 2, 1), _c(2, 2, 10), _c(0, 2, 1)]}
    assert crossval.pick(table, [2], "claude-code") == "cheap"
    # Nothing to pick on: the baseline.
    assert crossval.pick(_TABLE, [], "claude-code") == "claude-code"


def test_leave_one_repository_out_scores_each_repository_under_a_pick_made_without_it() -> None:
    cv = crossval.loro(_TABLE, _REPOS, "claude-code", 30)
    # Without a: b and c -> ab 2/4 vs c 2/4 tie on recall: c has fewer tokens (160 < 180).
    # Without b: a and c -> ab 4/8, c 4/8: c (fewer tokens). Without c: a and b -> ab 6/8.
    assert [(f.repo, f.pick, f.compactions) for f in cv.folds] == [
        ("a", "c", (0, 1)),
        ("b", "c", (2,)),
        ("c", "ab", (3,)),
    ]
    assert cv.chosen == ["c", "c", "c", "ab"]
    assert cv.pick == "ab"
    held = Counts()
    for counts in crossval.held_out(
        {k: [{30: c} for c in v] for k, v in _TABLE.items()}, cv.chosen
    ):
        held.add(counts[30])
    # a under c: 2/4 + 0/2; b under c: 0/2; c under ab: 0/2 -> 2/10 at 330 tokens.
    assert (held.covered_files, held.needed_files, held.tokens_restored) == (2, 10, 330)


def test_the_bootstrap_is_fixed_by_its_seed_and_paired() -> None:
    w = intervals.weights(4)
    assert w.shape == (intervals.RESAMPLES, 4)
    assert (w.sum(axis=1) == 4).all()
    assert (intervals.weights(4) == w).all()
    assert not (intervals.weights(4, seed=1) == w).all()
    base = _TABLE["claude-code"]
    # The same compactions on both sides: a policy against itself is exactly 1.
    rec, tok = intervals.paired(base, base, w)
    assert rec is not None
    assert tok is not None
    assert (rec.lo, rec.hi, tok.lo, tok.hi) == (1.0, 1.0, 1.0, 1.0)
    rec, tok = intervals.paired(_TABLE["big"], base, w)
    assert tok is not None
    assert (tok.lo, tok.hi) == (5.0, 5.0)
    assert rec is not None
    assert rec.lo >= 1.0
    assert intervals.paired(_TABLE["ab"], base, w) == intervals.paired(_TABLE["ab"], base, w)


def test_the_vectorised_procedure_is_the_procedure() -> None:
    """Resamples that draw every compaction once are the data itself: the re-run procedure
    gives the point estimate."""
    import numpy as np

    cv = crossval.loro(_TABLE, _REPOS, "claude-code", 30)
    rec, tok = intervals.loro_intervals(lambda _repo: _TABLE, _REPOS, cv, np.ones((3, 4)))
    # held out 2/10 at 330 tokens; claude-code 2/10 at 400
    assert rec is not None
    assert tok is not None
    assert rec.lo == rec.hi == pytest.approx(1.0)
    assert tok.lo == tok.hi == pytest.approx(330 / 400)
    # Only repository a drawn (twice each): the other folds pick on nothing, so the baseline.
    only_a = np.array([[2.0, 2.0, 0.0, 0.0]])
    rec, tok = intervals.loro_intervals(lambda _repo: _TABLE, _REPOS, cv, only_a)
    assert rec is not None
    assert tok is not None
    # a's fold picks on b and c with no weight: claude-code itself.
    assert (rec.lo, tok.lo) == (1.0, 1.0)


def _two_repositories(tmp_path: Path) -> Path:
    tmp_path.mkdir()
    session_with_one_compaction().save(tmp_path / "one__repo__1.jsonl")
    session_with_one_compaction().save(tmp_path / "two__repo__1.jsonl")
    t = Transcript()
    t.read("big.py", _text("x", 400), offset=100, limit=20)
    t.compact()
    t.read("big.py", _text("x", 400), offset=110, limit=30)
    t.save(tmp_path / "two__repo__2.jsonl")
    return tmp_path


def test_the_cross_validated_result_through_the_command_line(tmp_path: Path) -> None:
    corpus = _two_repositories(tmp_path / "corpus")
    doc = tmp_path / "eval.md"
    doc.write_text("# Kept\n\n<!-- everything below is written by `make eval` -->\n")
    args = ["--policy=claude-code", "--policy=default", "--family=claude-code-2.1.88", "--json"]
    out, _ = _eval(corpus, *args, "--workers=1", "--markdown", doc)
    # The procedure chooses among the families bounded by Claude Code's tokens at every
    # compaction (here: claude-code alone); every family, for comparison.
    cv = out["crossval"]
    assert cv["families"] == {"claude-code": 1}
    assert cv["configurations"] == 1
    assert [f["repo"] for f in cv["folds"]] == ["one/repo", "two/repo"]
    assert cv["pick"] == "claude-code"
    assert cv["procedure"]["compactions"] == 3
    assert cv["recall_ratio_ci"] is not None
    every = out["crossval_every_family"]
    assert every["families"] == {"claude-code": 1, "claude-code-2.1.88": 1}
    assert every["pick"] in ("claude-code", "claude-code-2.1.88")
    text = doc.read_text()
    assert "### Cross-validated: the procedure, each repository held out" in text
    assert "### In-sample: the configurations were chosen on these same compactions" in text
    assert text.index("Cross-validated") < text.index("In-sample")
    # Two workers: the same table, so the same figures.
    out2, _ = _eval(corpus, *args, "--workers=2")
    out.pop("seconds")
    out2.pop("seconds")
    assert out2 == out


def test_a_complement_is_scored_beside_claude_codes_own_rule(tmp_path: Path) -> None:
    """claude-code + complement: Claude Code's five (c.py and the four most recently used) and
    postcompact's restoration of the two it leaves out (a.py, f.py), scored together; the
    complement predicted Claude Code's choice exactly."""
    path = session_with_one_compaction().save(tmp_path / "c.jsonl")
    name = "claude-code+complement-2400"
    out, _ = _eval(path, "--policy=claude-code", f"--policy={name}", "--json")
    cc, both = out["policies"]["claude-code"], out["policies"][name]
    assert (cc["covered_files"], cc["needed_files"]) == (1, 3)
    assert (both["covered_files"], both["needed_files"]) == (3, 3)
    assert both["files_restored"] == 7
    assert cc["tokens_restored"] < both["tokens_restored"] <= cc["tokens_restored"] + 2400
    assert (both["harness_lost"], both["harness_unpredicted"]) == (0, 0)
