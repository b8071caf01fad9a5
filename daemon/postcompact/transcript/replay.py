"""`postcompact replay`: postcompact's decisions at each compaction of a transcript, beside what
Claude Code recorded (docs/parity.md).

In-process and private: the session lives in memory only (no daemon, no state database), and the
files live in a fresh temporary tree where the transcript's disk is recreated (`disk.Disk`) from
the records before each boundary only, never from the attachments recorded after it. Every path
of the transcript is mapped into the tree (`/a/b` -> `<tree>/a/b`, `D:\\a\\b` -> `<tree>/D/a/b`)
and printed back as the transcript spells it.

At each boundary the pipeline runs on the state just before it (FULL, or PARTIAL with the
preserved segment), exactly as the daemon's Compact does, and goes on with the state it leaves.

The live calls' limits and the transcript's budget hold as on import (`build.Builder`); the disk
it recreates is bounded (`disk.Disk`), and its tree is removed on every way out.
"""

from __future__ import annotations

import bisect
import contextlib
import os
import secrets
import shutil
import signal
import tempfile
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from postcompact import core, profiles
from postcompact.restore.context import CompactContext
from postcompact.restore.pipeline import run_compact
from postcompact.state import AgentState, Session
from postcompact.transcript.build import Builder, restored_items
from postcompact.transcript.disk import Disk
from postcompact.transcript.parse import (
    Boundary,
    Event,
    FileChanged,
    FileRead,
    FileUnchanged,
    FileWritten,
    RecordedItem,
    Resumed,
    Transcript,
)
from postcompact.transcript.paths import PathMap
from postcompact.transcript.session import guess_home, new_session
from postcompact.units import DAY_MS
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["BoundaryResult", "Observer", "cleanup_on_sigterm", "replay"]

# Called at each boundary once the compaction is applied (the session, the compacted agent, the
# Compact answer, the path map), with the recreated disk as it was at the boundary: for callers
# that measure more than `BoundaryResult` holds (`postcompact eval`).
# Called at each boundary with what the daemon restored there; it may be a coroutine function.
Observer = Callable[
    [Boundary, Session, AgentState, pb.CompactResponse, PathMap], Awaitable[None] | None
]

# An idle stretch this long before a boundary leaves what the transcript saw of a file before it
# stale: the files may have changed while nothing was recorded (docs/parity.md).
STALE_GAP_MS = 8 * 3_600_000
NEVER = -(2**62)


@dataclass(slots=True)
class BoundaryResult:
    uuid: str
    line: int
    trigger: str
    time_ms: int
    claude_code: list[RecordedItem] | None  # None: the transcript recorded no restoration
    postcompact: list[RecordedItem]
    decisions: list[dict[str, Any]] = field(default_factory=list)
    approximate: list[str] = field(default_factory=list)  # restored paths of estimated size
    # Evidence of what was restored, from the records after the boundary: files whose first
    # use after it is a successful Edit (Claude Code only allows it for a file it holds as read,
    # which after a compaction without carried read state means: restored).
    edited_without_read: list[str] = field(default_factory=list)
    # What the transcript determines of each candidate (transcript path ->): the interval its
    # entry's timestamp lies in (mtimes are not recorded), and whether its size and its whole
    # record are known (`stale`: last seen before a long idle stretch).
    intervals: dict[str, tuple[int, int]] = field(default_factory=dict)
    stale: set[str] = field(default_factory=set)

    def disagreements(self) -> list[str]:
        """Where postcompact and Claude Code differ on what the transcript determines: the
        order of two files both restored, a file one restored and the other did not, a file
        restored whole by one and as a too-large note by the other. [] when they agree."""
        if self.claude_code is None:
            return []
        ours = {x.path: (i, x.kind) for i, x in enumerate(self.postcompact)}
        theirs = {x.path: (i, x.kind) for i, x in enumerate(self.claude_code)}
        out: list[str] = []
        both = [p for p in theirs if p in ours]
        for i, a in enumerate(both):
            for b in both[i + 1 :]:
                swapped = (ours[a][0] < ours[b][0]) != (theirs[a][0] < theirs[b][0])
                if swapped and self.determined(a, b):
                    out.append(f"order of {a} and {b}")
            if ours[a][1] != theirs[a][1] and a not in self.approximate and a not in self.stale:
                out.append(f"{a}: {theirs[a][1]} for Claude Code, {ours[a][1]} for postcompact")
        only_theirs = [p for p in theirs if p not in ours]
        only_ours = [p for p in ours if p not in theirs]
        for p in only_theirs:
            if not any(not self.determined(p, q) for q in only_ours):
                out.append(f"{p}: restored by Claude Code only")
        for q in only_ours:
            if not any(not self.determined(p, q) for p in only_theirs):
                out.append(f"{q}: restored by postcompact only")
        return out

    def determined(self, a: str, b: str) -> bool:
        """Whether the transcript fixes which of `a` and `b` ranks first."""
        if a in self.stale or b in self.stale:
            return False
        ia, ib = self.intervals.get(a), self.intervals.get(b)
        if ia is None or ib is None:
            return False
        return ia[0] > ib[1] or ib[0] > ia[1]

    @property
    def equal(self) -> bool | None:
        return None if self.claude_code is None else self.claude_code == self.postcompact

    def as_json(self) -> dict[str, Any]:
        def items(xs: Sequence[RecordedItem]) -> list[dict[str, str]]:
            return [{"kind": x.kind, "path": x.path} for x in xs]

        return {
            "boundary": self.uuid,
            "claude_code": None if self.claude_code is None else items(self.claude_code),
            "postcompact": items(self.postcompact),
            "equal": self.equal,
        }


def _outcome(value: int) -> str:
    return pb.Outcome.Name(value).removeprefix("OUTCOME_").lower()  # type: ignore[arg-type]


async def replay(
    t: Transcript,
    *,
    profile: pb.Profile.ValueType = pb.PROFILE_CLAUDE_CODE,
    policy: pb.RestorePolicy | None = None,
    tree: str | None = None,
    observe: Observer | None = None,
) -> list[BoundaryResult]:
    """One result per boundary of `t`, in transcript order (see the module docstring)."""
    if tree is None:
        with _tree() as tmp:
            return await replay(t, profile=profile, policy=policy, tree=tmp, observe=observe)
    paths = PathMap.under(tree)
    first = min((r.time_ms for r in t.records if r.time_ms), default=0)
    disk = Disk(unknown_mtime_ms=max(0, first - DAY_MS))
    rules = profiles.rules(profile)
    home = paths.local(guess_home(t) or "/home/user") or os.path.join(tree, "home")
    cwd = paths.local(t.cwd)
    if cwd is None:
        raise ValueError(f"the transcript's cwd cannot be placed: {t.cwd!r}")
    try:
        os.makedirs(cwd, exist_ok=True)
    except OSError as exc:  # a component over NAME_MAX, a file on its way
        raise ValueError(
            f"the transcript's cwd cannot be placed: {t.cwd!r} ({exc.strerror})"
        ) from None

    def cache(s: Session) -> core.FileStateCache:
        return s.new_cache(rules.cache_max_entries, 25 * 1024 * 1024)

    session = new_session(
        t,
        paths,
        session_id=t.session_id or "replay",
        cwd=cwd,
        home=home,
        profile=profile,
        policy=policy or pb.RestorePolicy(),
        new_cache=cache,
        now_ms=first,
    )
    session.roots = [tree]
    results: list[BoundaryResult] = []
    times = sorted(r.time_ms for r in t.records if r.time_ms > 0)  # once, not per boundary
    at_index = {id(e): i for i, e in enumerate(t.events) if isinstance(e, Boundary)}

    def stamp(e: Event, local: str) -> int:
        if isinstance(e, FileWritten | FileChanged) or not rules.mtime_timestamps:
            return e.time_ms
        return disk.mtime_of(e.path)  # type: ignore[attr-defined]

    # Per (agent, transcript path): the interval the entry's timestamp lies in, and when the
    # transcript last saw the file.
    intervals: dict[tuple[str, str], tuple[int, int]] = {}
    seen_at: dict[str, int] = {}

    def track(e: Event) -> None:
        path = getattr(e, "path", None)
        if path is None:
            return
        seen_at[path] = e.time_ms
        if isinstance(e, FileWritten | FileChanged) or (
            isinstance(e, FileRead) and not rules.mtime_timestamps
        ):
            intervals[(e.agent, path)] = (e.time_ms, e.time_ms)
        elif isinstance(e, FileRead):
            f = disk.files.get(path)
            low = f.mtime_ms if f is not None and f.mtime_ms is not None else NEVER
            intervals[(e.agent, path)] = (low, e.time_ms)

    def resumed(e: Resumed) -> None:
        for (agent, path), (low, high) in list(intervals.items()):
            if agent == e.agent:
                intervals[(agent, path)] = (low if low == high else NEVER, high)

    async def on_boundary(
        b: Boundary, agent: AgentState, preserved: list[pb.ConversationMessage]
    ) -> None:
        local = {p: lp for p in disk.files if (lp := paths.local(p)) is not None}
        disk.materialize(local)
        req = pb.CompactRequest(
            session_id=session.session_id,
            agent_id=agent.agent_id,
            kind=pb.COMPACT_KIND_PARTIAL if preserved else pb.COMPACT_KIND_FULL,
            preserved_messages=preserved,
            skip_hooks=True,
        )
        ctx = CompactContext.of(
            session, req, hash_contents=False, carry_limit=agent.files.max_entries
        )
        result = await run_compact(ctx, session, agent, req)
        result.apply(agent)  # in memory only: a replay stores nothing
        resp = result.response
        if observe is not None:
            seen = observe(b, session, agent, resp, paths)
            if seen is not None:
                await seen
        restored = restored_items(resp, paths)
        approximate = [
            x.path for x in restored if (m := disk.files.get(x.path)) is not None and m.approximate
        ]
        idle_from = _idle_before(times, b.time_ms)
        candidates = {
            paths.original(d.name) for d in resp.decisions if d.subject == pb.SUBJECT_FILE
        }
        for x in b.recorded:
            candidates.add(x.path)
        spans = {
            p: intervals[(agent.agent_id, p)]
            for p in candidates
            if (agent.agent_id, p) in intervals
        }
        stale = {p for p in candidates if seen_at.get(p, NEVER) < idle_from}
        decisions = [
            {
                "path": paths.original(d.name) if d.subject == pb.SUBJECT_FILE else d.name,
                "subject": pb.Subject.Name(d.subject).removeprefix("SUBJECT_").lower(),
                "outcome": _outcome(d.outcome),
                "rank": d.rank,
                "tokens": d.tokens,
                "detail": d.detail,
            }
            for d in resp.decisions
        ]
        results.append(
            BoundaryResult(
                b.uuid,
                b.line,
                b.trigger,
                b.time_ms,
                list(b.recorded) if b.has_recorded_restore else None,
                restored,
                decisions,
                approximate,
                edits_without_read(t.events, b, at_index[id(b)]),
                spans,
                stale,
            )
        )
        for x in restored:  # re-seeded: the file's mtime now, as far as the model knows it
            f = disk.files.get(x.path)
            low = f.mtime_ms if f is not None and f.mtime_ms is not None else NEVER
            intervals[(agent.agent_id, x.path)] = (low, b.time_ms)

    builder = Builder(session, paths, cache, stamp, on_boundary, home=guess_home(t))
    for e in t.events:
        if isinstance(e, Boundary):
            await builder.guarded(e)
            continue
        disk.event(e)
        track(e)
        if isinstance(e, Resumed):
            resumed(e)
        await builder.guarded(e)
    builder.check_catalogs()
    return results


def _idle_before(times: Sequence[int], at_ms: int) -> int:
    """The start of the last idle stretch of `STALE_GAP_MS` or more before `at_ms` (NEVER if
    none): the time of the record before it. `times`: the records' times (> 0), sorted."""
    end = bisect.bisect_right(times, at_ms)
    for k in range(end - 1, 0, -1):
        if times[k] - times[k - 1] >= STALE_GAP_MS:
            return times[k - 1] + 1
    return NEVER


def edits_without_read(
    events: Sequence[Event], boundary: Boundary, index: int | None = None
) -> list[str]:
    """Paths whose first use after `boundary` (up to the next one) is a successful Edit or
    MultiEdit of the main thread. `index`: the boundary's place in `events`, when known (a
    replay: its events are walked from there, not from the start at each boundary)."""
    if index is None:
        index = next(i for i, e in enumerate(events) if e is boundary)
    seen: set[str] = set()
    out: list[str] = []
    for k in range(index + 1, len(events)):
        e = events[k]
        if e.agent:
            continue
        if isinstance(e, Boundary):
            break
        path = getattr(e, "path", None)
        if path is None or path in seen:
            continue
        if isinstance(e, FileWritten | FileRead | FileUnchanged):
            seen.add(path)
            if isinstance(e, FileWritten) and e.tool in ("Edit", "MultiEdit"):
                out.append(path)
    return out


# Set in a process whose trees another one removes (`eval`'s workers): a directory where each
# tree's name is written before the tree is made.
TREE_REGISTRY: str | None = None
TREE_PREFIX = "postcompact-replay-"


@contextlib.contextmanager
def _tree() -> Iterator[str]:
    """A fresh temporary directory for one replay, removed on the way out. Its name has the
    length of `tempfile`'s own (8 random characters): the replayed paths, hence the tokens of
    what names them, do not depend on who made it."""
    base = tempfile.gettempdir()
    while True:
        name = TREE_PREFIX + secrets.token_hex(4)
        path = os.path.join(base, name)
        entry = os.path.join(TREE_REGISTRY, name) if TREE_REGISTRY is not None else None
        if entry is not None:
            # A name drawn twice in one run (32 random bits, ~10,000 replays in `make eval`:
            # about one run in a hundred) is drawn again: the registry keeps every name to the end.
            try:
                open(entry, "x").close()
            except FileExistsError:
                continue
        try:
            os.mkdir(path, 0o700)
            break
        except FileExistsError:  # another process's tree: not ours to remove at the end
            if entry is not None:
                os.unlink(entry)
            continue
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def remove_registered(registry: str) -> None:
    """Remove every tree named in `registry` (made by processes that may have died)."""
    base = tempfile.gettempdir()
    for name in os.listdir(registry):
        shutil.rmtree(os.path.join(base, name), ignore_errors=True)


def cleanup_on_sigterm() -> None:
    """SIGTERM (`timeout`, `kill`) unwinds like an exception: the temporary trees
    of the replays running are removed on the way out, as on any other exit."""

    def unwind(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, unwind)
