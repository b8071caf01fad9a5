"""`postcompact replay`: postcompact's decisions at each compaction of a transcript, beside what
Claude Code recorded (docs/parity.md).

In-process and private: the session lives in memory only (no daemon, no state database), and the
files live in a fresh temporary tree where the transcript's disk is recreated (`disk.Disk`) from
the records before each boundary only, never from the attachments recorded after it. Every path
of the transcript is mapped into the tree (`/a/b` -> `<tree>/a/b`, `D:\\a\\b` -> `<tree>/D/a/b`)
and printed back as the transcript spells it.

At each boundary the pipeline runs on the state just before it (FULL, or PARTIAL with the
preserved segment), exactly as the daemon's Compact does, and goes on with the state it leaves.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from postcompact import _core, profiles
from postcompact.restore.pipeline import run_compact
from postcompact.state import AgentState, Session
from postcompact.transcript.build import Builder
from postcompact.transcript.disk import Disk
from postcompact.transcript.parse import (
    Boundary,
    Event,
    FileChanged,
    FileWritten,
    RecordedItem,
    Transcript,
    parse,
)
from postcompact.transcript.paths import PathMap
from postcompact.transcript.session import guess_home, new_session
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["BoundaryResult", "replay", "replay_file"]

DAY_MS = 86_400_000
_KINDS = {pb.ATTACHMENT_KIND_FILE: "file", pb.ATTACHMENT_KIND_COMPACT_FILE_REFERENCE: "reference"}


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
) -> list[BoundaryResult]:
    """One result per boundary of `t`, in transcript order (see the module docstring)."""
    if tree is None:
        with tempfile.TemporaryDirectory(prefix="postcompact-replay-") as tmp:
            return await replay(t, profile=profile, policy=policy, tree=tmp)
    paths = PathMap.under(tree)
    first = min((r.time_ms for r in t.records if r.time_ms), default=0)
    disk = Disk(unknown_mtime_ms=max(0, first - DAY_MS))
    rules = profiles.rules(profile)
    home = paths.local(guess_home(t) or "/home/user") or os.path.join(tree, "home")
    cwd = paths.local(t.cwd)
    if cwd is None:
        raise ValueError(f"the transcript's cwd cannot be placed: {t.cwd!r}")
    os.makedirs(cwd, exist_ok=True)

    def cache(s: Session) -> _core.FileStateCache:
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

    def stamp(e: Event, local: str) -> int:
        if isinstance(e, FileWritten | FileChanged) or not rules.mtime_timestamps:
            return e.time_ms
        return disk.mtime_of(e.path)  # type: ignore[attr-defined]

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
        resp = await run_compact(
            session, agent, req, hash_contents=False, carry_limit=agent.files.max_entries
        )
        restored = [
            RecordedItem(
                _KINDS[a.kind],
                paths.original(
                    a.file.path if a.kind == pb.ATTACHMENT_KIND_FILE else a.file_reference.path
                ),
            )
            for a in resp.attachments
            if a.kind in _KINDS
        ]
        approximate = [
            x.path for x in restored if (m := disk.files.get(x.path)) is not None and m.approximate
        ]
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
            )
        )

    builder = Builder(session, paths, cache, stamp, on_boundary, home=guess_home(t))
    for e in t.events:
        if isinstance(e, Boundary):
            await builder.event(e)
        else:
            disk.event(e)
            await builder.event(e)
    return results


def replay_file(path: str, **kw: Any) -> list[BoundaryResult]:
    """`replay` of the transcript file at `path` (a fresh event loop)."""
    with open(path, "rb") as f:
        t = parse(f.read())
    return asyncio.run(replay(t, **kw))
