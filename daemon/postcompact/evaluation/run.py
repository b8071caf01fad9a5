"""`postcompact eval`'s work (docs/eval.md): the transcripts read and checked first, then every
policy and configuration replayed once over every compaction, into one table of per-compaction
counts that the tables, the selection procedure and the intervals all read.

- `load` parses every transcript once, before any replay: a file that cannot be read, or a line
  that is not a JSON object, is an `InputError` naming `file:line`; a transcript without a
  main-thread compaction, or whose working directory the replay cannot place, is set aside and
  counted. The parsed transcripts are kept for the replay.
- `evaluate` replays each policy over each transcript (a task per transcript and group of
  policies), on `workers` processes forked after the parse, so the workers share the parsed
  transcripts instead of reading them again.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from postcompact.errors import PostcompactError
from postcompact.evaluation.corpus import TranscriptFile
from postcompact.evaluation.measure import Counts, score_transcript
from postcompact.evaluation.need import Point, points
from postcompact.evaluation.policies import Policy
from postcompact.restore import ranker
from postcompact.transcript import replay
from postcompact.transcript.disk import DiskBudgetExceeded
from postcompact.transcript.parse import Transcript, TranscriptError, parse
from postcompact.transcript.paths import PathMap

__all__ = ["Compaction", "Corpus", "Evaluation", "InputError", "Loaded", "evaluate", "load"]

CHUNK = 12  # policies per task: enough tasks to keep two workers busy to the end


class InputError(ValueError):
    """A transcript `eval` cannot read: one line, `file[:line]: why`."""


@dataclass(frozen=True, slots=True)
class Compaction:
    """One main-thread compaction of one transcript."""

    file: str
    repo: str
    number: int  # 1-based among the file's main-thread compactions
    line: int
    trigger: str


@dataclass(slots=True)
class Loaded:
    """A transcript parsed, with its compactions' need."""

    file: TranscriptFile
    transcript: Transcript
    points: list[Point]


@dataclass(slots=True)
class Corpus:
    loaded: list[Loaded] = field(default_factory=list)  # with at least one compaction
    without_compaction: list[str] = field(default_factory=list)
    unplaceable: list[str] = field(default_factory=list)  # "file: why"


def load(files: Sequence[TranscriptFile], window: int) -> Corpus:
    """Every file parsed (once) and checked; InputError for the first that cannot be read."""
    out = Corpus()
    probe = PathMap.under("/postcompact-eval")
    for f in files:
        try:
            t = parse(f.path.read_bytes())
        except OSError as exc:
            raise InputError(f"{f.path}: {exc.strerror or exc}") from None
        except TranscriptError as exc:
            where = f"{f.path}:{exc.line}" if exc.line else str(f.path)
            what = f"{exc.field}: " if exc.field else ""
            raise InputError(f"{where}: {what}{exc.message}") from None
        pts = points(t, window)
        if not pts:
            out.without_compaction.append(str(f.path))
        elif probe.local(t.cwd) is None:
            out.unplaceable.append(f"{f.path}: its working directory cannot be placed: {t.cwd!r}")
        else:
            out.loaded.append(Loaded(f, t, pts))
    return out


@dataclass(slots=True)
class Evaluation:
    """Per policy (named or a family's configuration), per compaction, per window: `Counts`."""

    policies: list[Policy]  # the named policies of the descriptive tables
    configurations: list[Policy]  # the families' grid points: the selection's candidates
    windows: tuple[int, ...]
    compactions: list[Compaction] = field(default_factory=list)
    counts: dict[str, list[dict[int, Counts]]] = field(default_factory=dict)
    files: int = 0  # transcripts scored
    failures: list[str] = field(default_factory=list)  # "file: why" for files not scored
    seconds: float = 0.0
    workers: int = 1
    # Columns that are no candidate of their own: the learned family's fold models (learned.py).
    extra: list[Policy] = field(default_factory=list)

    def column(self, name: str, window: int) -> list[Counts]:
        """`name`'s counts at each compaction, in `compactions` order."""
        return [c[window] for c in self.counts[name]]

    def pooled(self, name: str, window: int, *, repo: str | None = None) -> Counts:
        out = Counts()
        for k, c in zip(self.compactions, self.counts[name], strict=True):
            if repo is None or k.repo == repo:
                out.add(c[window])
        return out

    @property
    def repos(self) -> list[str]:
        return sorted({k.repo for k in self.compactions})

    def measured(self) -> list[Policy]:
        return _unique([*self.policies, *self.configurations, *self.extra])


Progress = Callable[[int, int, TranscriptFile], None]

# What the forked workers read: set in the parent before the pool starts.
_LOADED: list[Loaded] = []
_BY_NAME: dict[str, Policy] = {}

# A task: (file index, policy names); its result: (file index, names, counts or a failure).
_Scores = list[list[dict[int, Counts]]]  # per policy of the task, per compaction
_Task = tuple[int, tuple[str, ...], tuple[int, ...]]
_Result = tuple[int, tuple[str, ...], _Scores | str]


def _unique(policies: Sequence[Policy]) -> list[Policy]:
    """Each name once; one name given to two different policies is a bug."""
    out: dict[str, Policy] = {}
    for p in policies:
        q = out.setdefault(p.name, p)
        if (q.profile, q.policy) != (p.profile, p.policy):
            raise ValueError(f"two policies are named {p.name!r}: {q.spec} and {p.spec}")
    return list(out.values())


def _score(task: _Task) -> _Result:
    i, names, windows = task
    item = _LOADED[i]

    async def run() -> _Scores:
        out: _Scores = []
        for name in names:
            policy = _BY_NAME[name]
            token = ranker.MODEL.set(policy.model)  # a fold's model; None: the committed one
            try:
                scored = await score_transcript(item.transcript, item.points, policy, windows)
            finally:
                ranker.MODEL.reset(token)
            out.append([s.counts for s in scored])
        return out

    try:
        return i, names, asyncio.run(run())
    except (ValueError, DiskBudgetExceeded) as exc:  # a bad value, one it cannot place
        return i, names, f"{item.file.path}: {exc}"
    except PostcompactError as exc:  # a live call's limit (TOO_MANY_AGENTS, ...)
        return i, names, f"{item.file.path}: {exc.reason}: {exc.message}"


def evaluate(
    corpus: Corpus,
    policies: Sequence[Policy],
    configurations: Sequence[Policy],
    windows: Sequence[int],
    progress: Progress | None = None,
    workers: int = 1,
) -> Evaluation:
    """Every policy and configuration on every loaded transcript, once; a transcript the replay
    fails on is left out of every column (reported in `failures`)."""
    started = time.monotonic()
    ev = Evaluation(list(policies), list(configurations), tuple(sorted(set(windows))))
    ev.workers = workers
    measured = ev.measured()
    _LOADED[:] = corpus.loaded
    _BY_NAME.clear()
    _BY_NAME.update({p.name: p for p in measured})
    names = [p.name for p in measured]
    chunks = [tuple(names[k : k + CHUNK]) for k in range(0, len(names), CHUNK)]
    # The largest transcripts first, so that no long task is left for the end.
    order = sorted(
        range(len(corpus.loaded)), key=lambda i: -len(corpus.loaded[i].transcript.records)
    )
    tasks = [(i, c, ev.windows) for i in order for c in chunks]
    got: dict[int, dict[str, list[dict[int, Counts]]]] = {}
    failed: dict[int, str] = {}
    left = {i: len(chunks) for i in order}
    done = 0
    try:
        if workers > 1:
            for result in _pooled(tasks, workers):
                done += _collect(result, got, failed, left, corpus, progress, done)
        else:
            for task in tasks:
                done += _collect(_score(task), got, failed, left, corpus, progress, done)
    finally:
        _LOADED.clear()
        _BY_NAME.clear()
    for i, item in enumerate(corpus.loaded):
        if i in failed:
            ev.failures.append(failed[i])
            continue
        ev.files += 1
        for p in item.points:
            b = p.boundary
            ev.compactions.append(
                Compaction(item.file.path.name, item.file.repo, p.number, b.line, b.trigger)
            )
        for name in names:
            ev.counts.setdefault(name, []).extend(got[i][name])
    ev.seconds = time.monotonic() - started
    return ev


def _pooled(tasks: list[_Task], workers: int) -> Iterator[_Result]:
    """`_score` over `tasks` on `workers` forked processes, in the order they finish.

    Each worker names its replay trees in a registry of this process before making them, and
    this process removes them on every way out; so a worker needs no cleanup of its own and dies
    at once on SIGTERM. At the end the workers are told to stop and joined, never signalled: a
    SIGTERM that lands just before a worker blocks on the pool's queue lock (which `terminate`
    holds) is handled by Python only after the lock is taken, i.e. never, and `eval` hung
    (1 run in ~115)."""
    ctx = multiprocessing.get_context("fork")
    with tempfile.TemporaryDirectory(prefix="postcompact-eval-") as registry:
        replay.TREE_REGISTRY = registry  # the forked workers inherit it
        try:
            pool = ctx.Pool(workers, initializer=_worker_started)
            try:
                yield from pool.imap_unordered(_score, tasks)
                pool.close()
            except BaseException:
                pool.terminate()
                raise
            finally:
                pool.join()
        finally:
            replay.TREE_REGISTRY = None
            replay.remove_registered(registry)


def _worker_started() -> None:
    # The default action: the parent removes the trees (see `_pooled`).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _collect(
    result: _Result,
    got: dict[int, dict[str, list[dict[int, Counts]]]],
    failed: dict[int, str],
    left: dict[int, int],
    corpus: Corpus,
    progress: Progress | None,
    done: int,
) -> int:
    """Store one task's result; 1 when it completed its transcript (then reported)."""
    i, names, scores = result
    if isinstance(scores, str):
        failed.setdefault(i, scores)
    else:
        got.setdefault(i, {}).update(zip(names, scores, strict=True))
    left[i] -= 1
    if left[i]:
        return 0
    if progress is not None:
        progress(done + 1, len(left), corpus.loaded[i].file)
    return 1
