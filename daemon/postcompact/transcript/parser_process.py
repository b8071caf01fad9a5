"""ImportTranscript's parse in processes of their own (issue 37; docs/reliability.md,
"Transcripts").

The parse holds the GIL of the process that runs it for stretches no worker thread can break:
`json.loads` of one multi-megabyte line is a single C call (265 ms for the testers' 8 MB line
here), and so is a full pass of the cyclic collector over the dicts of 200,000 records (about
0.5 s). Run in a worker thread of the daemon, each was a stall of every other call (a 519 ms
ping). So the daemon parses in child processes, each an interpreter, and a GIL, of its own
(`python -m postcompact.transcript.parser_process`):

- a child is started when an import first needs one (a fresh interpreter: nothing is forked from
  the daemon's threads), at most one per import running (`importer.MAX_IMPORTS_AT_ONCE` build at
  once), and kept for the next; one that waits `IDLE_S` for work ends (the daemon no longer hands
  work to one idle for half that), one whose memory grew past `RETIRE_RSS_BYTES` ends after its
  import, and every one ends with the daemon (its stdin closes; while it parses, it checks its
  parent every `CHECK_EVERY` records). It runs at the worker threads' lower CPU priority;
- the daemon counts the transcript's lines against `limits.max_transcript_records` first (a
  refused transcript is never sent), then writes it to the child a MiB at a time;
- the child runs `parse.parse` (the code replay and eval run in their own process) and answers
  the events as rows of plain values (`Events`: the collector stops tracking them) in slices of
  at most `SLICE_OBJECTS` objects, so that no single unpickling in the daemon holds its GIL
  long; an event larger than that alone is unpickled by the pure-Python unpickler, which lets
  the other threads run. The records stay in the child (their count crosses), and a kept record
  crosses with only what a compaction reads of it (its type, message and attachment);
- a refused transcript comes back as its TranscriptError (line, field, reason, limit);
- before it reads a transcript the child sets its own address space limit (RLIMIT_AS) to the
  job's `memory` (limits.max_parser_memory_bytes; no core file either: a transcript is the
  user's). Past it an allocation fails, and the child exits at once with `_EXIT_MEMORY`:
  `ParserOutOfMemory` (the importer's RESOURCE_EXHAUSTED `TRANSCRIPT_TOO_COMPLEX`). A child that
  had parsed before (what it kept counts too) is not the judge: the transcript is given to a
  fresh one first.

The daemon's thread waiting for the child calls `stop` (the caller's deadline or cancel, the
failpoint `import.worker`) at least every `POLL_S`; when it raises, the child is killed and
nothing of its work is kept. A child that ends without an answer (a signal, a crash, an exit) is
`ParserCrashed`, naming its exit status (the importer's UNAVAILABLE `PARSER_CRASHED`); one that
fails with a Python exception outside `parse`'s own checks is the daemon's fault: `ParserFailed`
(INTERNAL, logged with the child's traceback). Either way the child is killed and reaped.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import io
import itertools
import os
import pickle
import resource
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from typing import Any

from postcompact import failpoints
from postcompact.state.model import MAIN_AGENT
from postcompact.transcript.parse import (
    CHECK_EVERY,
    Announced,
    Boundary,
    Budget,
    Edit,
    Event,
    FileChanged,
    FileRead,
    FileReadFailed,
    FileUnchanged,
    FileWritten,
    ModeChanged,
    PlanFile,
    PlanSlug,
    Record,
    RecordedItem,
    Resumed,
    ShellRan,
    SkillInvoked,
    Stop,
    TaskChanged,
    Transcript,
    TranscriptError,
    check_lines,
    parse,
)
from postcompact.transcript.session import touched_paths

__all__ = [
    "Events",
    "ParserCrashed",
    "ParserFailed",
    "ParserOutOfMemory",
    "close",
    "parse_elsewhere",
    "release_rows",
]

# How often the waiting thread checks `stop`.
POLL_S = 0.05
# A child waiting this long for work ends; the daemon hands work only to one idle for less than
# half of it (so that a child never ends just as it is given work).
IDLE_S = 60.0
# A child whose resident memory passed this after an import ends (Python keeps what a large
# parse made; a fresh child starts at ~40 MiB).
RETIRE_RSS_BYTES = 256 << 20
# Objects (containers, strings, numbers) per slice of events: one C unpickling of this many takes
# a few ms.
SLICE_OBJECTS = 10_000
# The transcript is written to the child this many bytes at a time.
WRITE_STEP = 1 << 20
# Kept idle at most (importer.MAX_IMPORTS_AT_ONCE).
MAX_IDLE = 2
# Rows freed at a time (`release_rows`).
_FREE_STEP = 2048
# A worker ends at once when its stdin closes, else: "idle".
_EXIT_IDLE = 0
# A worker whose allocation failed under its memory limit exits at once with this status (it
# needs no memory to say so).
_EXIT_MEMORY = 4

# pickle's own Python implementation (the C one runs a whole load without letting go of the GIL).
_PyUnpickler = pickle._Unpickler
_HEADER = struct.Struct("<BQ")  # kind, payload length
_JOB, _DATA, _EVENTS, _BIG, _PATHS, _DONE, _REFUSED, _FAILED = range(1, 9)
# What a compaction reads of a kept record (build.conversation).
_KEPT_KEYS = ("type", "message", "attachment")


# Events cross as rows: tuples of their kind's index and their fields' values, the records,
# edits and items they hold as tuples too. A tuple of strings and numbers is one the collector
# stops tracking at its first pass, so however many events an import holds, they never make
# the collector's full passes (each one C call over every object tracked: 0.1-0.7 s over the
# events of 200,000 records, when they were dataclass objects) longer; each becomes an Event
# again only when it is read (`Events`).
_KINDS: tuple[type[Event], ...] = (
    FileRead,
    FileUnchanged,
    FileReadFailed,
    FileWritten,
    FileChanged,
    ShellRan,
    SkillInvoked,
    ModeChanged,
    PlanFile,
    PlanSlug,
    TaskChanged,
    Announced,
    Resumed,
    Boundary,
)
_KIND_OF = {kind: i for i, kind in enumerate(_KINDS)}
_FIELDS = {kind: tuple(f.name for f in dataclasses.fields(kind)) for kind in _KINDS}
Row = tuple[Any, ...]


def _row(e: Event) -> Row:
    """`e` as a row (in the child; a Boundary's kept records with their `_KEPT_KEYS` only)."""
    values: list[Any] = [getattr(e, name) for name in _FIELDS[type(e)]]
    if isinstance(e, FileWritten):
        values[_FIELDS[FileWritten].index("edits")] = tuple(
            (x.old, x.new, x.replace_all) for x in e.edits
        )
    elif isinstance(e, Boundary):
        names = _FIELDS[Boundary]
        values[names.index("preserved")] = tuple(
            (r.line, {k: r.data[k] for k in _KEPT_KEYS if k in r.data}) for r in e.preserved
        )
        values[names.index("recorded")] = tuple((x.kind, x.path) for x in e.recorded)
    return (_KIND_OF[type(e)], *values)


_EDITS = _FIELDS[FileWritten].index("edits") + 1
_PRESERVED = _FIELDS[Boundary].index("preserved") + 1
_RECORDED = _FIELDS[Boundary].index("recorded") + 1


def _event(row: Row) -> Event:
    """The Event `row` is (in the daemon)."""
    kind = _KINDS[row[0]]
    if kind is FileWritten:
        values = list(row)
        values[_EDITS] = tuple(Edit(*x) for x in row[_EDITS])
        row = tuple(values)
    elif kind is Boundary:
        values = list(row)
        values[_PRESERVED] = tuple(Record(line, data) for line, data in row[_PRESERVED])
        values[_RECORDED] = tuple(RecordedItem(*x) for x in row[_RECORDED])
        row = tuple(values)
    return kind(*row[1:])


class Events(Sequence[Event]):
    """A transcript's events as the daemon holds them: rows, each made an Event when read."""

    def __init__(self, rows: list[Row]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [_event(r) for r in self._rows[index]]
        return _event(self._rows[index])

    def __iter__(self) -> Iterator[Event]:
        return map(_event, self._rows)

    def release(self) -> None:
        """Free the rows (in the worker thread: `release_rows`)."""
        release_rows(self._rows)


def release_rows(rows: list[Row]) -> None:
    """Empty `rows` a slice at a time: freeing 200,000 rows at once is one C call (tens of ms,
    the GIL held), and on the event loop's thread, where the last reference to an import's
    transcript would go, a stall of every call."""
    while rows:
        del rows[-_FREE_STEP:]


class ParserFailed(RuntimeError):
    """The parser process failed: a fault of the daemon, not of the transcript."""


class ParserCrashed(ParserFailed):
    """The parser process ended without an answer: killed by a signal (a crash, the kernel's
    OOM killer, someone's kill), or it exited."""

    def __init__(self, pid: int, returncode: int) -> None:
        self.pid = pid
        self.returncode = returncode
        self.signal = ""
        if returncode < 0:
            try:
                self.signal = signal.Signals(-returncode).name
            except ValueError:
                self.signal = f"signal {-returncode}"
            self.status = f"killed by {self.signal}"
        else:
            self.status = f"exited with status {returncode}"
        super().__init__(f"the transcript parser process (pid {pid}) {self.status}")


class ParserOutOfMemory(ParserFailed):
    """The parse needed more address space than the limit (`limit` bytes) allows."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the transcript parser process ran out of its {limit} bytes")
        self.limit = limit


class _Gone(Exception):
    """The child ended before it answered (`idle`: it had ended waiting for work; `memory`: an
    allocation failed under its limit)."""

    def __init__(self, returncode: int) -> None:
        super().__init__(f"the transcript parser process ended (exit {returncode})")
        self.returncode = returncode
        self.idle = returncode == _EXIT_IDLE
        self.memory = returncode == _EXIT_MEMORY


# --- the daemon's side ---------------------------------------------------------------------------


def parse_elsewhere(
    data: bytes | memoryview,
    budget: Budget,
    stop: Stop,
    *,
    max_agents: int | None = None,
    memory: int | None = None,
) -> tuple[Transcript, int]:
    """`parse(data, budget, stop)` in a parser process: the transcript (its `records` and
    `versions` left empty, its `touched` paths set) and its number of records. TranscriptError
    as `parse` raises it; whatever `stop` raises, the child killed; ParserOutOfMemory when the
    parse needs more than `memory` bytes of address space (None: no limit); ParserCrashed when
    the child ends without an answer, ParserFailed when it fails. `max_agents` (the build's
    limits.max_agents_per_session): the events end with the first one whose agent the build
    refuses (`_agents_within`)."""
    stop()
    check_lines(data, budget)
    for attempt in (1, 2):
        child = _pool.take()
        try:
            out = child.parse(data, (budget, max_agents, memory), stop)
        except _Gone as exc:
            _pool.drop(child)
            if exc.idle and attempt == 1:
                continue  # it ended waiting for work as it was given some: another one
            if exc.memory and memory is not None:
                if child.jobs > 1 and attempt == 1:
                    continue  # what it kept of earlier imports counted: a fresh one judges
                raise ParserOutOfMemory(memory) from None
            raise ParserCrashed(child.proc.pid, exc.returncode) from None
        except TranscriptError:
            _pool.give(child)
            raise
        except BaseException:
            _pool.drop(child)
            raise
        _pool.give(child)
        return out
    raise AssertionError("unreachable")


def close() -> None:
    """End every parser process (the daemon stops)."""
    _pool.close()


class _Child:
    def __init__(self) -> None:
        import postcompact

        root = os.path.dirname(os.path.dirname(os.path.abspath(postcompact.__file__)))
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", __name__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            close_fds=True,
            env=env,
        )
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.stdin = self.proc.stdin
        self.out = self.proc.stdout.fileno()
        self.idle_since = time.monotonic()
        self.retiring = False
        self.jobs = 0  # transcripts given to it

    def alive(self) -> bool:
        return self.proc.poll() is None and not self.retiring

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(OSError):
            self.stdin.close()
        with contextlib.suppress(OSError):
            assert self.proc.stdout is not None
            self.proc.stdout.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)

    def parse(
        self, data: bytes | memoryview, job: tuple[Budget, int | None, int | None], stop: Stop
    ) -> tuple[Transcript, int]:
        self.jobs += 1
        try:
            self._write(_JOB, pickle.dumps(job), stop)
            self._write(_DATA, data, stop)
        except (BrokenPipeError, ConnectionResetError):
            raise _Gone(self.proc.wait()) from None
        rows: list[Row] = []
        try:
            return self._answer(rows, [], stop)
        except BaseException:
            release_rows(rows)  # here, not wherever the exception's traceback goes
            raise

    def _answer(self, rows: list[Row], touched: list[str], stop: Stop) -> tuple[Transcript, int]:
        while True:
            kind, payload = self._frame(stop)
            if kind == _EVENTS:
                rows.extend(pickle.loads(payload))
            elif kind == _BIG:  # one large event: the pure-Python unpickler lets others run
                rows.append(_PyUnpickler(io.BytesIO(payload)).load())
            elif kind == _PATHS:
                touched.extend(pickle.loads(payload))
            elif kind == _DONE:
                meta = pickle.loads(payload)
                self.retiring = bool(meta["retiring"])
                t = Transcript(
                    records=[],
                    events=Events(rows),
                    cwd=meta["cwd"],
                    session_id=meta["session_id"],
                    slug=meta["slug"],
                    warnings=meta["warnings"],
                    touched=touched,
                )
                return t, int(meta["records"])
            elif kind == _REFUSED:
                line, message, field, reason, limit = pickle.loads(payload)
                raise TranscriptError(line, message, field=field, reason=reason, limit=limit)
            elif kind == _FAILED:
                raise ParserFailed(bytes(payload).decode("utf-8", "replace"))
            else:
                raise ParserFailed(f"the transcript parser process sent a frame of kind {kind}")

    def _write(self, kind: int, payload: bytes | memoryview, stop: Stop) -> None:
        fd = self.stdin.fileno()
        _write_all(fd, _HEADER.pack(kind, len(payload)))
        view = memoryview(payload)
        for at in range(0, len(view), WRITE_STEP):
            stop()
            _write_all(fd, view[at : at + WRITE_STEP])

    def _frame(self, stop: Stop) -> tuple[int, bytearray]:
        kind, size = _HEADER.unpack(self._read(_HEADER.size, stop))
        return kind, self._read(size, stop)

    def _read(self, size: int, stop: Stop) -> bytearray:
        buf = bytearray(size)
        view = memoryview(buf)
        got = 0
        while got < size:
            ready, _, _ = select.select([self.out], [], [], POLL_S)
            stop()
            if not ready:
                continue
            n = os.readv(self.out, [view[got:]])  # the GIL released while it reads
            if n == 0:
                raise _Gone(self.proc.wait())
            got += n
        return buf


class _Pool:
    """The parser processes: started when needed, kept idle for the next import."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[_Child] = []
        self._busy: set[_Child] = set()
        self._closed = False

    def take(self) -> _Child:
        with self._lock:
            if self._closed:
                raise ParserFailed("the daemon is stopping")
            while self._idle:
                child = self._idle.pop()
                if child.alive() and time.monotonic() - child.idle_since < IDLE_S / 2:
                    self._busy.add(child)
                    return child
                child.kill()
        child = _Child()
        with self._lock:
            self._busy.add(child)
        return child

    def give(self, child: _Child) -> None:
        with self._lock:
            self._busy.discard(child)
            if not self._closed and child.alive() and len(self._idle) < MAX_IDLE:
                child.idle_since = time.monotonic()
                self._idle.append(child)
                return
        child.kill()

    def drop(self, child: _Child) -> None:
        """Kill `child` (and reap it): its import failed, or it ended."""
        with self._lock:
            self._busy.discard(child)
        child.kill()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            children = [*self._idle, *self._busy]
            self._idle.clear()
        for child in children:
            child.kill()


_pool = _Pool()


# --- the child's side ----------------------------------------------------------------------------


def _read_exact(fd: int, size: int) -> bytes | None:
    """`size` bytes of `fd`; None at its end."""
    buf = bytearray(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = os.readv(fd, [view[got:]])
        if n == 0:
            return None
        got += n
    return bytes(buf)


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]  # the GIL released while it writes


def _send(out: int, kind: int, payload: bytes) -> None:
    _write_all(out, _HEADER.pack(kind, len(payload)))
    _write_all(out, payload)


def _objects(value: object) -> int:
    """How many objects pickling `value` makes (each container, string and number)."""
    n = 0
    todo = [value]
    while todo:
        v = todo.pop()
        n += 1
        if isinstance(v, tuple | list):
            todo.extend(v)
        elif isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
    return n


def _agents_within(events: Sequence[Event], cap: int | None) -> Sequence[Event]:
    """`events` up to the first whose agent the build refuses, that one included: the build
    makes the main agent and then one for each new agent an event names, refusing
    TOO_MANY_AGENTS at the first past `cap` (build.Builder.agent), so it never applies an event
    after it. (200,000 sidechain agents would cross, and be held, for nothing.)"""
    if cap is None:
        return events
    agents = {MAIN_AGENT}
    for i, e in enumerate(events):
        if e.agent not in agents:
            if len(agents) >= cap:
                return events[: i + 1]
            agents.add(e.agent)
    return events


def _paths(paths: Sequence[str]) -> Iterator[tuple[int, bytes]]:
    for at in range(0, len(paths), SLICE_OBJECTS):
        yield _PATHS, pickle.dumps(list(paths[at : at + SLICE_OBJECTS]), pickle.HIGHEST_PROTOCOL)


def _slices(events: Sequence[Event]) -> Iterator[tuple[int, bytes]]:
    batch: list[Row] = []
    weight = 0
    for event in events:
        row = _row(event)
        n = _objects(row)
        if batch and weight + n > SLICE_OBJECTS:
            yield _EVENTS, pickle.dumps(batch, pickle.HIGHEST_PROTOCOL)
            batch, weight = [], 0
        if n > SLICE_OBJECTS:
            yield _BIG, pickle.dumps(row, pickle.HIGHEST_PROTOCOL)
            continue
        batch.append(row)
        weight += n
    if batch:
        yield _EVENTS, pickle.dumps(batch, pickle.HIGHEST_PROTOCOL)


def _rss() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _limit_memory(memory: int | None) -> None:
    """At most `memory` bytes of address space from now on (None: the hard limit); a child
    kept for the next import gets that one's."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = hard
    if memory is not None:
        soft = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _serve(data: bytes, budget: Budget, max_agents: int | None, out: int) -> None:
    parent = os.getppid()

    def orphaned() -> None:
        if os.getppid() != parent:
            os._exit(3)  # the daemon is gone: nobody will read the answer

    try:
        t = parse(data, budget, orphaned)
    except TranscriptError as exc:
        refusal = (exc.line, exc.message, exc.field, exc.reason, exc.limit)
        _send(out, _REFUSED, pickle.dumps(refusal))
        return
    except MemoryError:
        raise  # main's: the child exits _EXIT_MEMORY
    except Exception:
        _send(out, _FAILED, traceback.format_exc().encode())
        return
    del data
    frames = itertools.chain(
        _paths(touched_paths(t.events)), _slices(_agents_within(t.events, max_agents))
    )
    for i, (kind, payload) in enumerate(frames):
        if i % CHECK_EVERY == 0:
            orphaned()
        _send(out, kind, payload)
    meta: dict[str, Any] = {
        "records": len(t.records),
        "cwd": t.cwd,
        "session_id": t.session_id,
        "slug": t.slug,
        "warnings": t.warnings,
        "retiring": False,
    }
    del t
    meta["retiring"] = _rss() > RETIRE_RSS_BYTES
    _send(out, _DONE, pickle.dumps(meta))


def main() -> int:
    """The child: parse each transcript its stdin brings, answer on its stdout."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C is the daemon's to handle
    with contextlib.suppress(OSError):
        from postcompact.workers import WORKER_NICE

        os.setpriority(os.PRIO_PROCESS, 0, max(os.getpriority(os.PRIO_PROCESS, 0), WORKER_NICE))
    failpoints.configure(os.environ.get(failpoints.ENV))
    with contextlib.suppress(ValueError, OSError):  # no core file of a transcript, ever
        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    # What a parse makes holds no cycle (JSON values, events): reference counts free it all, and
    # the collector's passes over a large transcript's dicts would only cost the CPU.
    gc.freeze()
    gc.disable()
    # Frames only on the answer channel: anything printed goes to stderr.
    out = os.dup(1)
    os.dup2(2, 1)
    while True:
        ready, _, _ = select.select([0], [], [], IDLE_S)
        if not ready:
            return _EXIT_IDLE
        job = _read_exact(0, _HEADER.size)
        if job is None:
            return _EXIT_IDLE  # the daemon closed it (stopped, or gone)
        kind, size = _HEADER.unpack(job)
        params = _read_exact(0, size)
        if kind != _JOB or params is None:
            return 2
        budget, max_agents, memory = pickle.loads(params)
        _limit_memory(memory)  # before the transcript is read: its copies count
        try:
            head = _read_exact(0, _HEADER.size)
            if head is None:
                return 2
            kind, size = _HEADER.unpack(head)
            data = _read_exact(0, size)
            if kind != _DATA or data is None:
                return 2
            _serve(data, budget, max_agents, out)
            del data
        except MemoryError:
            # Nothing more is allocated: the exit status says it (the daemon's _Gone.memory).
            os._exit(_EXIT_MEMORY)
        if _rss() > RETIRE_RSS_BYTES:
            return 0


if __name__ == "__main__":
    sys.exit(main())
