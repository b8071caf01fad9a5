"""`python -m bench._readfile_variants serve ...`: the daemon with ReadFile replaced by one of the
variants B4 measures to bound the real one from below (`BENCH_READ_VARIANT`):

- `canned`: the response of the first call answered again, without resolving, reading, numbering
  or recording anything: the service path alone (request decoding, the servicer's wrappers —
  errors, admission, the agent lock —, serialising the numbered text and the content, grpc.aio).
- `io`: `canned` plus the core re-read of the file (`_core.read_whole`, from the page cache) and
  the write-through commit of the read (the entry's row rewritten in one SQLite transaction):
  what no ReadFile that commits each read on this store can skip.
- `journal`: the real ReadFile, except that the store writes the row of a re-read whose content
  and range stay (`_MOVE_FILE`, the common re-read) as one append of its values to a log file
  beside the database instead of a SQLite statement: the hot path of a journal design (records
  appended before the answer, applied to SQLite in batches), which is not built; its batched
  apply and its replay are not measured.
- `least`: the least a ReadFile can be with this transport and core (run with `--no-persist`):
  the core reads, numbers and serialises the file (`core.read_file`, as the real ReadFile
  does), the entry is set in the agent's cache, and one record of the read (~80 bytes) is
  appended to a log file; no path resolution, deny rules, roots, "unchanged" check, policy,
  admission of the content, marks, seen lines or store bookkeeping.
"""

from __future__ import annotations

import functools
import os
import struct
import sys
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from postcompact import _core, cli, core, diskaccess, render
from postcompact.paths import now_ms
from postcompact.persist import sqlstore
from postcompact.restore.policy import Policy
from postcompact.service.files import FileService
from postcompact.state.model import AgentState, Session
from postcompact.v1 import postcompact_pb2 as pb

_real_read = FileService.read_file
_real_sync_entry = sqlstore.SqlStore._sync_entry
_first: dict[str, pb.ReadFileResponse] = {}
VARIANT = os.environ.get("BENCH_READ_VARIANT", "canned")
_logs: dict[str, int] = {}
# `least`'s log, in the daemon's state directory.
_READS_LOG = Path(os.environ.get("XDG_STATE_HOME", "."), "reads.log")


def _append(log: Path, numbers: tuple[int, ...], names: tuple[str, ...]) -> None:
    """One record appended with one write(): length, CRC-32, the numbers, the names (a torn
    record at the tail would fail its CRC at replay)."""
    fd = _logs.get(str(log))
    if fd is None:
        fd = _logs[str(log)] = os.open(
            log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600
        )
    body = struct.pack(f"<{len(numbers)}q", *numbers) + "\0".join(names).encode()
    os.write(fd, struct.pack("<II", len(body), zlib.crc32(body)) + body)


def read_log(log: Path, numbers: int) -> list[tuple[tuple[int, ...], list[str]]]:
    """The records `_append` wrote to `log` with `numbers` numbers each, in order; ValueError at
    a record that is torn or fails its CRC."""
    data, out, at = log.read_bytes(), [], 0
    while at < len(data):
        size, crc = struct.unpack_from("<II", data, at)
        body = data[at + 8 : at + 8 + size]
        if len(body) != size or zlib.crc32(body) != crc:
            raise ValueError(f"{log}: a bad record at byte {at}")
        fixed = 8 * numbers
        out.append((struct.unpack_from(f"<{numbers}q", body), body[fixed:].decode().split("\0")))
        at += 8 + size
    return out


async def canned(self: FileService, req: pb.ReadFileRequest) -> pb.ReadFileResponse:
    resp = _first.get("response")
    if resp is None:
        # Kept as the message and serialised per call by the servicer, as every answer was when
        # this floor was set (the real ReadFile now answers the bytes the core built).
        got = await _real_read(self, req)
        if isinstance(got, bytes):
            got = pb.ReadFileResponse.FromString(got)
        resp = _first["response"] = got
        return resp
    if VARIANT == "io":
        _core.read_whole(resp.path, 1 << 20, diskaccess.SNIFF_BYTES)
        s, a = await self.registry.agent(req.session_id, req.agent_id)
        async with self.registry.mutate(s, a) as change:
            # The entry's row rewritten with a new timestamp, as a real re-read rewrites it.
            e = a.files.peek(resp.path)
            if e is not None:
                a.files.set(
                    resp.path, core.FileState(e.content, e.timestamp + 1, e.offset, e.limit, False)
                )
            change.files = True
    return resp


@functools.lru_cache(maxsize=1)
def _least_plan() -> core.ReadPlan:
    """What `least` reads with: the default templates without the malware reminder, the default
    policy's token limit, no byte cap to speak of."""
    return core.ReadPlan(
        templates=render.file_templates(render.DEFAULT_TEMPLATES),
        malware=False,
        max_tokens=Policy().max_read_tokens,
        max_bytes=1 << 30,
        sniff_bytes=diskaccess.SNIFF_BYTES,
        exact=False,
        encoding="o200k_base",
        api_units=None,
        page=False,
    )


async def least(self: FileService, req: pb.ReadFileRequest) -> bytes | pb.ReadFileResponse:
    s, a = await self.registry.agent(req.session_id, req.agent_id)
    path, stamp = req.path, now_ms()  # B4 names its file by its canonical path
    spec = core.ReadSpec(
        real=path,
        binary_name=False,
        path=path,
        timestamp_ms=stamp,
        max_answer=self.config.max_message_bytes,
    )
    got = core.read_file(spec, _least_plan(), inline_max=diskaccess.INLINE_READ_BYTES)
    if not isinstance(got, core.ReadAnswer):  # a read the core does not answer: the real one does
        return await _real_read(self, req)
    wire, content, mtime_ns = got.wire, got.content, got.mtime_ns
    a.files.set(path, core.FileState(content, stamp, 1, None, False))
    _append(_READS_LOG, (stamp, mtime_ns), (s.session_id, a.agent_id, path))
    return wire


def journal_sync_entry(
    self: sqlstore.SqlStore,
    s: Session,
    a: AgentState,
    hints: Mapping[str, tuple[bytes, bytes]],
    path: str,
    old: dict[str, Any],
) -> bool:
    """`SqlStore._sync_entry` with a move that needs no other statement appended to a log."""
    st = a.files.peek(path)
    prev = old.get(path)
    if (
        st is None
        or prev is None
        or len(a.files) != len(old)
        or not prev.restamped(st)
        or self._activity_due(s)
        or not isinstance(self, sqlstore.SqliteStore)
    ):
        return _real_sync_entry(self, s, a, hints, path, old)
    key = (s.session_id, a.agent_id)
    mark, seen = a.read_mtimes.get(path), a.seen.get(path)
    row = sqlstore._Row(st, self._next_seq(), mark, prev.digest, prev.size, seen)
    args = sqlstore._move_args(key, path, row)
    numbers = tuple(-1 if v is None else v for v in args[:7])
    _append(self.path.with_name(self.path.name + ".moves"), numbers, args[7:])
    self._files.setdefault(key, {})[path] = row
    return True


if __name__ == "__main__":
    if VARIANT in ("canned", "io"):
        FileService.read_file = canned  # type: ignore[method-assign]
    elif VARIANT == "least":
        _READS_LOG.parent.mkdir(parents=True, exist_ok=True)
        FileService.read_file = least  # type: ignore[method-assign]
    elif VARIANT == "journal":
        sqlstore.SqlStore._sync_entry = journal_sync_entry  # type: ignore[method-assign]
    else:
        sys.exit(f"BENCH_READ_VARIANT={VARIANT!r}: canned, io, journal or least")
    sys.exit(cli.main(sys.argv[1:]))
