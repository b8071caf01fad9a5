"""ImportTranscript: a session's state on the running daemon, built from a Claude Code
transcript (docs/transcripts.md).

The transcript is parsed whole first (a bad line fails the call, naming it), the session is
built in memory (`build.Builder`, timestamps from the records' times, as Claude Code's own
`--resume` rebuilds them), each compaction is replayed through the pipeline on the spot (hooks do
not run), and only then is the session registered and written to the state database in one
transaction: nothing is half-imported.

Hostile input (issue 37, docs/reliability.md): the parse runs in a parser process of its own
(parser_process.py: a `json.loads` of a multi-megabyte line holds its process's GIL throughout),
driven from a thread of the imports' own (`_threads`), and the build in that thread (on a
private event loop there), never on the daemon's loop, so every other call is answered while an
import runs; both check whether the caller's deadline passed or it cancelled (the parse every
`POLL_S` while it waits, the build every `CHECK_EVERY` events), and stop then (the parser
process killed, nothing applied). The transcript's budget (limits.max_transcript_*) and the
live calls' limits hold; every refusal names the line. The parser process holds
limits.max_parser_memory_bytes (RESOURCE_EXHAUSTED `TRANSCRIPT_TOO_COMPLEX` past it); one that
ends without an answer is UNAVAILABLE `PARSER_CRASHED`, naming how it ended (logged too).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import os
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from postcompact import core, failpoints
from postcompact.admission import reserve_answer
from postcompact.errors import (
    AlreadyExists,
    DeadlineExceeded,
    InvalidArgument,
    PostcompactError,
    ResourceExhausted,
    Unavailable,
    check_answer,
    transcript_refusal,
)
from postcompact.paths import now_ms
from postcompact.restore.context import CompactContext
from postcompact.restore.pipeline import run_compact
from postcompact.service.sessions import check_abs_path, check_path_length, session_info
from postcompact.state import AgentState, Session, catalog_parts
from postcompact.state.registry import Registry, check_id
from postcompact.transcript.build import Builder, restored_items
from postcompact.transcript.parse import (
    Boundary,
    Budget,
    Event,
    FileChanged,
    FileRead,
    FileWritten,
    RecordedItem,
    Transcript,
    TranscriptError,
)
from postcompact.transcript.parser_process import (
    Events,
    ParserCrashed,
    ParserOutOfMemory,
    parse_elsewhere,
)
from postcompact.transcript.paths import PathMap
from postcompact.transcript.session import guess_home, new_session
from postcompact.v1 import postcompact_pb2 as pb

__all__ = ["import_transcript", "shutdown"]

MAX_WARNINGS = 50
# Imports building at once: each holds its transcript parsed (several times its bytes, up to
# max_message_bytes); the others wait their turn on the loop, their deadline still holding.
MAX_IMPORTS_AT_ONCE = 2
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)
# The threads an import's work runs in, not the default executor's (workers.py), whose threads
# run at a lower CPU priority: what an import does in the daemon is Python, holding the GIL (the
# events taken in from its parser process, the build), and a low-priority thread holding the
# GIL while the machine's other work keeps it off the CPU holds the event loop up too (a
# priority inversion: 110 ms gaps measured with the machine loaded). Started from the loop's
# thread, these run at its priority.
_threads: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ThreadPoolExecutor] = (
    weakref.WeakKeyDictionary()
)
_R = TypeVar("_R")
log = logging.getLogger("postcompact.transcript")


class _Stopped(Exception):
    """The import's caller is gone (its deadline passed, or it cancelled): stop the work."""


@dataclass(slots=True)
class _Watch:
    """What the worker checks between slices: a cancel from the loop, the caller's deadline.
    The failpoint `import.worker` holds the worker there (tests: docs/reliability.md)."""

    deadline: float | None  # time.monotonic()
    cancelled: threading.Event

    def __call__(self) -> None:
        failpoints.hit("import.worker")
        why = None
        if self.cancelled.is_set():
            why = "the caller cancelled"
        elif self.deadline is not None and time.monotonic() > self.deadline:
            why = "the caller's deadline passed"
        if why is not None:
            log.info("import worker stopped: %s", why)
            raise _Stopped(why)


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
    transcript: bytes | memoryview,
    *,
    config_policy: pb.RestorePolicy,
    deny_globs: tuple[str, ...],
    time_remaining: float | None = None,
) -> pb.ImportTranscriptResponse:
    """`transcript`: the request's (`req.transcript` is not read: request.py);
    `time_remaining`: seconds to the caller's deadline (None: none)."""
    if not transcript:
        raise InvalidArgument("TRANSCRIPT_REQUIRED", "transcript must not be empty")
    cwd = check_abs_path("cwd", req.cwd)
    home = check_abs_path("home", req.home) if req.home else _user_home()
    deadline = None if time_remaining is None else time.monotonic() + time_remaining
    slots = _slots.setdefault(asyncio.get_running_loop(), asyncio.Semaphore(MAX_IMPORTS_AT_ONCE))
    async with slots:
        return await _import(
            registry, req, transcript, cwd, home, deadline, config_policy, deny_globs
        )


async def _import(
    registry: Registry,
    req: pb.ImportTranscriptRequest,
    transcript: bytes | memoryview,
    cwd: str,
    home: str,
    deadline: float | None,
    config_policy: pb.RestorePolicy,
    deny_globs: tuple[str, ...],
) -> pb.ImportTranscriptResponse:
    watch = _Watch(deadline, threading.Event())
    budget = Budget.of(registry.config)
    parsed: Transcript | None = None
    try:
        t, records = await _in_worker(
            watch,
            functools.partial(
                parse_elsewhere,
                max_agents=registry.config.max_agents_per_session,
                memory=registry.config.parser_memory_bytes,
            ),
            transcript,
            budget,
            watch,
        )
        parsed = t
        sid = (
            check_id("session", req.session_id, allow_empty=True)
            or t.session_id
            or uuid.uuid4().hex
        )
        check_id("session", sid)
        await _check_existing(registry, sid, req.replace)
        paths = _path_map(t, req, cwd)
        s, boundaries, builder = await _in_worker(
            watch, _build, registry, req, t, paths, sid, cwd, home, config_policy, deny_globs, watch
        )
    except TranscriptError as exc:
        raise transcript_refusal(exc.line, exc.field, exc.reason, exc.limit, str(exc)) from None
    except _Stopped as exc:
        log.info("import stopped: %s", exc)
        raise DeadlineExceeded(
            "IMPORT_STOPPED", f"the import stopped: {exc}; nothing was imported"
        ) from None
    except ParserOutOfMemory as exc:
        raise _too_complex(exc.limit, len(transcript)) from None
    except ParserCrashed as exc:
        log.warning(
            "transcript parser process crashed",
            extra={"pid": exc.pid, "exit_status": exc.returncode, "how": exc.status},
        )
        raise _crashed(exc) from None
    finally:
        if parsed is not None and isinstance(parsed.events, Events) and len(parsed.events):
            # Refused before its build (which frees them): freed in an import thread, never
            # here on the loop (parser_process.release_rows).
            _in_thread(parsed.events.release)
    for a in s.agents.values():
        a.catalog.charge = core.Charge(catalog_parts(a.catalog).ByteSize())
    # What the import built is live (counted) already: it must fit the ceiling as it is.
    await registry.admit(0, f"importing session {sid}")
    warnings = [*t.warnings, *builder.warnings]
    resp = pb.ImportTranscriptResponse(
        session_id=sid,
        session=session_info(s),
        records=records,
        events=builder.applied,
        boundaries=boundaries,
        warnings=warnings[:MAX_WARNINGS],
    )
    size = resp.ByteSize()
    check_answer(size, registry.config.max_message_bytes, "ImportTranscript")
    reserve_answer(size)
    # Checked again: the build awaited, and another call may have made the session meanwhile.
    existing = await _check_existing(registry, sid, req.replace)
    if existing is not None:
        await registry.close(sid)
    await registry.adopt(s)
    return resp


def _too_complex(limit: int, size: int) -> PostcompactError:
    """RESOURCE_EXHAUSTED `TRANSCRIPT_TOO_COMPLEX`: the parse of a transcript of `size` bytes
    needed more than the parser's `limit` bytes of address space (one that many small JSON
    values make: each empty object of 3 bytes takes about 70 in memory)."""
    return ResourceExhausted(
        "TRANSCRIPT_TOO_COMPLEX",
        f"parsing the transcript ({size} bytes) needs more memory than "
        f"limits.max_parser_memory_bytes allows ({limit} bytes, {limit >> 20} MiB, of the parser "
        "process's address space); nothing was imported. If the transcript is genuine, raise "
        "limits.max_parser_memory_bytes in the daemon's config.toml and import it again",
        {"limit": "max_parser_memory_bytes", "limit_bytes": str(limit)},
    )


def _crashed(exc: ParserCrashed) -> PostcompactError:
    """UNAVAILABLE `PARSER_CRASHED`: the parser process ended without an answer. No RetryInfo:
    a transcript that crashes its parser would crash the next one too, so the clients do not
    retry it by themselves; the caller may (a parser killed from outside)."""
    how = {"signal": exc.signal} if exc.signal else {"exit_status": str(exc.returncode)}
    return Unavailable(
        "PARSER_CRASHED",
        f"the transcript parser process ended before it answered ({exc.status}); nothing was "
        "imported. The import may be tried again; if it ends so again, the transcript is what "
        "crashes the parser (the daemon's log has each exit)",
        how,
    )


async def _check_existing(registry: Registry, sid: str, replace: bool) -> Session | None:
    existing = await registry.find(sid)
    if existing is not None and not replace:
        raise AlreadyExists(
            "SESSION_EXISTS",
            f"session {sid!r} exists; pass replace to import over it",
            {"session_id": sid},
        )
    return existing


def _in_thread(fn: Callable[..., _R], *args: object) -> asyncio.Future[_R]:
    """`fn(*args)` in one of the import's threads (`_threads`), in a copy of this context."""
    loop = asyncio.get_running_loop()
    pool = _threads.get(loop)
    if pool is None:
        pool = _threads[loop] = ThreadPoolExecutor(MAX_IMPORTS_AT_ONCE, "postcompact-import")
    return loop.run_in_executor(pool, functools.partial(contextvars.copy_context().run, fn, *args))


def shutdown() -> None:
    """Let the import threads go (the daemon stops): each ends once its work is done."""
    for pool in list(_threads.values()):
        pool.shutdown(wait=False, cancel_futures=True)
    _threads.clear()


async def _in_worker(watch: _Watch, fn: Callable[..., _R], *args: object) -> _R:
    """`fn` in an import thread; a cancel of the call (the client's, or its deadline) tells the
    worker to stop at its next check."""
    try:
        return await _in_thread(fn, *args)
    except asyncio.CancelledError:
        watch.cancelled.set()
        log.info("import stopped: the caller cancelled")
        raise


def _build(
    registry: Registry,
    req: pb.ImportTranscriptRequest,
    t: Transcript,
    paths: PathMap,
    sid: str,
    cwd: str,
    home: str,
    config_policy: pb.RestorePolicy,
    deny_globs: tuple[str, ...],
    stop: _Watch,
) -> tuple[Session, list[pb.TranscriptBoundary], Builder]:
    """The session `t` makes, in memory, each compaction run (in the worker thread, on its own
    event loop: the session is nobody else's until adopted). `t`'s events are freed here, in
    the worker thread, whatever the outcome (parser_process.release_rows)."""
    try:
        return _build_session(
            registry, req, t, paths, sid, cwd, home, config_policy, deny_globs, stop
        )
    finally:
        if isinstance(t.events, Events):
            t.events.release()


def _build_session(
    registry: Registry,
    req: pb.ImportTranscriptRequest,
    t: Transcript,
    paths: PathMap,
    sid: str,
    cwd: str,
    home: str,
    config_policy: pb.RestorePolicy,
    deny_globs: tuple[str, ...],
    stop: _Watch,
) -> tuple[Session, list[pb.TranscriptBoundary], Builder]:
    profile = req.profile or registry.config.profile
    policy = pb.RestorePolicy()
    policy.CopyFrom(req.policy)
    try:
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
    except ValueError as exc:  # its cwd is not an absolute path
        raise TranscriptError(0, str(exc), field="cwd") from None
    registry.check_roots(len(s.roots))
    boundaries: list[pb.TranscriptBoundary] = []
    # With file_mtimes, every file's mtime is read up front (a transcript may name thousands);
    # a file gone since keeps the record's time, as without file_mtimes.
    mtimes = _mtimes(t, paths) if req.file_mtimes else {}

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
        # Summarised into the import's answer, never sent itself: no answer of its own to
        # reserve, nor a message limit of its own.
        ctx = CompactContext.of(
            s,
            creq,
            daemon_policy=config_policy,
            deny_globs=deny_globs,
            hash_contents=False,
            carry_limit=agent.files.max_entries,
        )
        result = await run_compact(ctx, s, agent, creq)
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

    builder = Builder(
        s,
        paths,
        registry.new_cache,
        stamp,
        on_boundary,
        home=guess_home(t),
        deny_globs=deny_globs,
        config=registry.config,
    )
    asyncio.run(builder.run(t.events, stop))
    _check_session_paths(s)
    return s, boundaries, builder


def _check_session_paths(s: Session) -> None:
    """Every path the session would store within PATH_MAX (PATH_TOO_LONG, as OpenSession
    answers): what the next start would quarantine is never acknowledged."""
    for field, values in (
        ("roots[]", s.roots),
        ("memory paths", sorted(s.memory_paths)),
        ("plans directory", [s.plans_directory]),
        ("plan file", [a.plan_file_path for a in s.agents.values() if a.plan_file_path]),
    ):
        for v in values:
            if v:
                check_path_length(field, v)


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
