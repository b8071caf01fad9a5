"""The learned ranking's family (docs/eval.md §5): its training is deterministic and learns what
the labels say; a fold's configuration reads the model trained without the held-out repository;
`--write-model` and `--check-model` through the command line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from postcompact.evaluation import crossval, intervals, learned
from postcompact.evaluation.measure import Counts
from postcompact.restore import ranker

from tests.daemon.evaluation.test_eval import _run, _two_repositories


def _examples() -> list[learned.Example]:
    """Recently used files are needed, older ones not (with noise, so the fit is finite)."""
    out = []
    for i in range(200):
        place = i % 10
        needed = place < 3 if i % 17 else place >= 3  # one label in 17 goes against the rule
        x = (math.log1p(place), math.log1p(100 + 37 * i % 900), 0.0, float(i % 2), 1.0)
        out.append(learned.Example("r/" + "ab"[i % 2], i // 10, f"f{place}", x, needed))
    return out


def test_training_is_deterministic_and_learns_the_labels() -> None:
    data = _examples()
    model = learned.train(data, 1.0)
    assert model == learned.train(list(data), 1.0)  # the same weights to the last bit
    assert model.weights[ranker.FEATURES.index("recency")] < -1.0  # older: less needed
    assert model.alpha == 1.0
    assert model.about["examples"] == 200
    assert model.about["positives"] == sum(e.label for e in data)
    # The probabilities it gives follow the labels: most recent first.
    recent = model.probability(data[0].x)
    old = model.probability(data[9].x)
    assert recent > 0.5 > old


def test_the_model_round_trips_through_its_json_and_the_committed_one_loads() -> None:
    model = learned.train(_examples(), 1.5)
    again = ranker.Model.from_json(json.loads(json.dumps(model.as_json())))
    assert (again.bias, again.weights, again.alpha) == (model.bias, model.weights, model.alpha)
    committed = ranker.committed()
    assert len(committed.weights) == len(ranker.FEATURES)
    bad = model.as_json()
    bad["features"] = ["recency"]
    with pytest.raises(ValueError, match="features"):
        ranker.Model.from_json(bad)


def test_a_fold_reads_the_model_trained_without_its_repository() -> None:
    fit = learned.fit(_examples(), ["r/a", "r/b"], alphas=(1.0,))
    name = learned.configuration_name(1.0)
    assert set(fit.folds) == {"r/a", "r/b"}
    # Without r/a, the model saw only r/b's examples.
    assert fit.folds["r/a"][name] == learned.train([e for e in _examples() if e.repo == "r/b"], 1.0)
    assert fit.table_names("r/a") == {name: learned.Learned.fold_name(name, "r/a")}
    assert fit.table_names(None) == {name: name}


def _c(cov: int, need: int, tok: int) -> Counts:
    return Counts(compactions=1, needed_files=need, covered_files=cov, tokens_restored=tok)


def test_the_procedure_scores_a_held_out_repository_under_its_folds_model() -> None:
    """`learned` reads, in each fold, the column of its model trained without the held-out
    repository: here that column covers nothing on the training repository (so the fold picks
    claude-code), while the model on everything would look best."""
    repos = ["a", "b"]
    columns = {
        "claude-code": [_c(1, 2, 100), _c(1, 2, 100)],
        "learned": [_c(2, 2, 90), _c(2, 2, 90)],  # on every repository
        "learned without a": [_c(2, 2, 90), _c(0, 2, 90)],  # trained on b: poor on b
        "learned without b": [_c(0, 2, 90), _c(2, 2, 90)],
    }

    def names(repo: str | None) -> dict[str, str]:
        return {
            "claude-code": "claude-code",
            "learned": "learned" if repo is None else f"learned without {repo}",
        }

    cv = crossval.loro(columns, repos, "claude-code", 30, names)
    assert [(f.repo, f.pick) for f in cv.folds] == [("a", "claude-code"), ("b", "claude-code")]
    assert cv.pick == "learned"
    assert cv.candidates == ["claude-code", "learned"]

    def table(repo: str | None) -> crossval.Table:
        return {c: columns[col] for c, col in names(repo).items()}

    import numpy as np

    rec, _ = intervals.loro_intervals(table, repos, cv, np.ones((1, 2)))
    assert rec is not None
    assert rec.lo == pytest.approx(1.0)  # held out: claude-code's own figures


def test_write_model_and_check_model_through_the_command_line(tmp_path: Path) -> None:
    corpus = _two_repositories(tmp_path / "corpus")
    out = tmp_path / "model.json"
    args = ["--policy=claude-code", "--family=learned", "--workers=1", "--quiet"]
    r = _run(corpus, *args, "--write-model", out)
    assert r.returncode == 0, r.stdout + r.stderr
    model = ranker.Model.from_json(json.loads(out.read_text()))
    assert model.alpha in learned.ALPHAS
    assert model.about["repositories"] == 2
    assert "learned/alpha-" in r.stdout  # the family's configurations are in the tables
    # The committed model was trained on other transcripts: a check against this corpus fails.
    r = _run(corpus, *args, "--check-model")
    assert r.returncode == 1
    assert "differs from the one trained here: run `make eval-model`" in r.stderr
    # Without the family there is nothing to write or check.
    r = _run(corpus, "--policy=claude-code", "--quiet", "--check-model")
    assert r.returncode == 2
    assert "need the learned family" in r.stderr
