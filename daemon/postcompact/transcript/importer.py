"""ImportTranscript: a session's state on the running daemon, built from a Claude Code
transcript (docs/transcripts.md).

The transcript is parsed whole first (a bad line fails the call, naming it), the session is
built in memory (`build.Builder`, timestamps from the records' times, as Claude Code's own
`--resume` rebuilds them), each compaction is replayed through the pipeline on the spot (hooks do
not run), and only then is the session registered and written to the state database in one
transaction: nothing is half-imported.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid

from postcompact import core
from postcompact.admission import reserve_answer
from postcompact.errors import AlreadyExists, InvalidArgument, check_answer
from postcompact.paths import now_ms
from postcompact.restore.pipeline import run_compact
from postcompact.service.sessions import check_abs_path, session_info
from postcompact.state import AgentState, catalog_parts
from postcompact.state.registry import Registry, check_id
from postcompact.transcript.build import Builder, restored_items
from postcompact.transcript.parse import (
    Boundary,
    Event,
    FileChanged,
    FileRead,
    FileWritten,
    RecordedItem,
    Transcript,
    TranscriptError,
    parse,
)
from postcompact.transcript.paths import PathMap
from postcompact.transcript.session import guess_home, new_session
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["import_transcript"]

MAX_WARNINGS = 50


def _user_home() -> str:
    return os.path.expanduser("~")


def _mtimes(t: Transcript, paths: PathMap) -> dict[str, int]:
    """The mtime (ms) of the local file of every file event of `t` that exists."""
    local = {
        p
        for e in t.events
        if isinstance(e, FileRead | FileWritten | FileChanged)
        if (p := paths.local(e.path)) is not None
    }
    out: dict[str, int] = {}
    for p in local:
        with contextlib.suppress(OSError):
            out[p] = os.stat(p).st_mtime_ns // 1_000_000
    return out


def _path_map(t: Transcript, req: pb.ImportTranscriptRequest, cwd: str) -> PathMap:
    paths = PathMap()
    try:
        for m in req.path_map:
            paths.add(m.source, check_abs_path("path_map[].target", m.target))
        if t.cwd:
            paths.add(t.cwd, cwd)
    except ValueError as exc:
        raise InvalidArgument("BAD_PATH_MAP", str(exc)) from None
    return paths


async def import_transcript(
    registry: Registry,
    req: pb.ImportTranscriptRequest,
    *,
    config_policy: pb.RestorePolicy,
    deny_globs: tuple[str, ...],
) -> pb.ImportTranscriptResponse:
    if not req.transcript:
        raise InvalidArgument("TRANSCRIPT_REQUIRED", "transcript must not be empty")
    cwd = check_abs_path("cwd", req.cwd)
    try:
        t = await asyncio.to_thread(parse, req.transcript)
    except TranscriptError as exc:
        details = {"line": str(exc.line)} if exc.line else {}
        raise InvalidArgument("BAD_TRANSCRIPT", str(exc), details) from None
    sid = check_id("session", req.session_id, allow_empty=True) or t.session_id or uuid.uuid4().hex
    check_id("session", sid)
    existing = registry.sessions.get(sid)
    if existing is not None and not req.replace:
        raise AlreadyExists(
            "SESSION_EXISTS",
            f"session {sid!r} exists; pass replace to import over it",
            {"session_id": sid},
        )
    profile = req.profile or registry.config.profile
    home = check_abs_path("home", req.home) if req.home else _user_home()
    paths = _path_map(t, req, cwd)
    policy = pb.RestorePolicy()
    policy.CopyFrom(req.policy)
    s = new_session(
        t,
        paths,
        session_id=sid,
        cwd=cwd,
        home=home,
        profile=profile,
        policy=policy,
        new_cache=registry.new_cache,
        now_ms=now_ms(),
    )
    boundaries: list[pb.TranscriptBoundary] = []
    # With file_mtimes, every file's mtime is read up front, off the event loop (a transcript
    # may name thousands); a file gone since keeps the record's time, as without file_mtimes.
    mtimes = await asyncio.to_thread(_mtimes, t, paths) if req.file_mtimes else {}

    def stamp(e: Event, local: str) -> int:
        return mtimes.get(local, e.time_ms)

    async def on_boundary(
        b: Boundary, agent: AgentState, preserved: list[pb.ConversationMessage]
    ) -> None:
        creq = pb.CompactRequest(
            session_id=sid,
            agent_id=agent.agent_id,
            kind=pb.COMPACT_KIND_PARTIAL if preserved else pb.COMPACT_KIND_FULL,
            preserved_messages=preserved,
            skip_hooks=True,
        )
        result = await run_compact(
            s,
            agent,
            creq,
            config_policy=config_policy,
            deny_globs=deny_globs,
            hash_contents=False,
            carry_limit=agent.files.max_entries,
            answer=False,  # summarised into the import's answer, never sent itself
        )
        result.apply(agent)  # the session is not registered yet: stored whole by adopt
        resp = result.response
        boundaries.append(_boundary(b, resp, paths))
        # The import's clock is the transcript's: what the compaction re-seeded (stamped with
        # the files' mtimes, which are today's) is stamped with the boundary's time instead.
        for path, st in reversed(agent.files.snapshot()):
            if st.timestamp > b.time_ms:
                seed = core.FileState(st.content, b.time_ms, st.offset, st.limit, st.partial_view)
                agent.files.set(path, seed)
                agent.read_mtimes.pop(path, None)

    registry.check_roots(len(s.roots))
    builder = Builder(
        s,
        paths,
        registry.new_cache,
        stamp,
        on_boundary,
        home=guess_home(t),
        deny_globs=deny_globs,
    )
    await builder.run(t.events)
    for a in s.agents.values():
        a.catalog.charge = core.Charge(catalog_parts(a.catalog).ByteSize())
    # What the import built is live (counted) already: it must fit the ceiling as it is.
    registry.admit(0, f"importing session {sid}")
    warnings = [*t.warnings, *builder.warnings]
    resp = pb.ImportTranscriptResponse(
        session_id=sid,
        session=session_info(s),
        records=len(t.records),
        events=builder.applied,
        boundaries=boundaries,
        warnings=warnings[:MAX_WARNINGS],
    )
    size = resp.ByteSize()
    check_answer(size, registry.config.max_message_bytes, "ImportTranscript")
    reserve_answer(size)
    if existing is not None:
        registry.close(sid)
    registry.adopt(s)
    return resp


def _items(items: list[RecordedItem]) -> list[pb.RestoredItem]:
    return [pb.RestoredItem(kind=x.kind, path=x.path) for x in items]


def _boundary(b: Boundary, resp: pb.CompactResponse, paths: PathMap) -> pb.TranscriptBoundary:
    restored = restored_items(resp, paths)
    return pb.TranscriptBoundary(
        uuid=b.uuid,
        line=b.line,
        trigger=b.trigger,
        timestamp_ms=b.time_ms,
        preserved_messages=len(b.preserved),
        has_recorded_restore=b.has_recorded_restore,
        recorded=_items(list(b.recorded)),
        restored=_items(restored),
    )
