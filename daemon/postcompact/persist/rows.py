"""Row checks: what the daemon can use of each stored row, shared by the load and `state check`
(docs/persistence.md, "Rows the daemon cannot use")."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message

from postcompact import profiles
from postcompact.core import expand_path
from postcompact.errors import InvalidArgument
from postcompact.persist.schema import MIGRATION_DEFAULTS, ROW_KEYS
from postcompact.persist.sql import Db
from postcompact.render import TemplateError
from postcompact.restore.policy import validate_policy
from postcompact.state import (
    MAIN_AGENT,
    InvokedSkill,
    Session,
)
from postcompact.state.model import MAX_ID_LEN, MAX_PATH_BYTES
from postcompact.state.seen import Seen
from postcompact.v1 import postcompact_pb2 as pb

log = logging.getLogger("postcompact.persist")


# --- row checks: what the daemon can use (the load and `state check` share them) ---------------
#
# Each `*_of` decoder turns a stored row ({column: value}) into what the load builds from it, or
# raises BadRow saying which value is wrong and why. `scan_rows` runs them over every table and
# adds the rows whose session or agent is bad or not stored; the load moves what it finds to the
# quarantine table, `state check` reports it.

_SHA256_BYTES = 32
_ANNOUNCED = ("tools", "agent_types", "mcp", "sent_skills")
_M = TypeVar("_M", bound=Message)


class BadRow(ValueError):
    """A stored row the daemon cannot use; the message is the reason."""


@dataclass(frozen=True, slots=True)
class RowProblem:
    """A row `serve` moves to the quarantine table: where it is, why, and all of it."""

    table: str
    key: dict[str, Any]
    reason: str
    rowid: Any  # Db.rowid: SQLite's rowid, PostgreSQL's ctid
    row: dict[str, Any]

    def describe(self) -> str:
        return f"{self.table} {row_json(self.key)}: {self.reason}"


def _show(value: Any) -> str:
    """A stored value as a reason shows it: its repr, cut short (a value can be megabytes)."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}...({len(text)} characters)"


def _kind(value: Any) -> str:
    """The SQLite storage class of a value as sqlite3 returns it."""
    if value is None:
        return "NULL"
    return {bytes: "BLOB", str: "TEXT", int: "INTEGER", float: "REAL"}.get(type(value), "?")


def _int(row: Mapping[str, Any], col: str, minimum: int | None = None) -> int:
    v = row[col]
    if type(v) is not int:
        shown = _kind(v) if v is None or isinstance(v, bytes) else _show(v)
        raise BadRow(f"{col} is {shown}, not an integer")
    if minimum is not None and v < minimum:
        raise BadRow(f"{col} is {v}, below {minimum}")
    return v


def _opt_int(row: Mapping[str, Any], col: str, minimum: int | None = None) -> int | None:
    return None if row[col] is None else _int(row, col, minimum)


def _blob(row: Mapping[str, Any], col: str) -> bytes:
    v = row[col]
    if not isinstance(v, bytes):
        raise BadRow(f"{col} is {_kind(v)}, not a BLOB")
    return v


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise BadRow(f"{what} is {_kind(value)}, not text")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # read with surrogate escapes (`_lenient_text`)
            raise BadRow(f"{what} is not valid UTF-8") from None
    return value


def _id(value: Any, what: str, *, allow_empty: bool = False) -> str:
    """An id as clients must send it (service.sessions.check_id): one no call could name is
    unreachable."""
    v = _str(value, what)
    if not v and not allow_empty:
        raise BadRow(f"{what} is empty")
    if len(v) > MAX_ID_LEN or any(ord(c) < 0x20 or c == "\x7f" for c in v):
        raise BadRow(f"{what} {_show(v)} is not an id (at most 256 characters, none a control)")
    return v


def _abs_path(value: Any, what: str) -> str:
    p = _str(value, what)
    if "\0" in p:
        raise BadRow(f"{what} contains a NUL byte")
    if not p.startswith("/"):
        raise BadRow(f"{what} is not an absolute path: {_show(p)}")
    if len(p.encode()) > MAX_PATH_BYTES:
        raise BadRow(f"{what} is over the {MAX_PATH_BYTES}-byte path limit")
    return p


def _json_col(row: Mapping[str, Any], col: str) -> Any:
    text = _str(row[col], col)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadRow(f"{col} is not valid JSON ({exc.msg} at character {exc.pos})") from None
    except (ValueError, RecursionError) as exc:  # an integer of over 4300 digits, deep nesting
        raise BadRow(f"{col} is JSON the daemon cannot read ({exc})") from None


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise BadRow(f"{what} is not a JSON object")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise BadRow(f"{what} is not a JSON array")
    return value


def _paths(row: Mapping[str, Any], col: str) -> list[str]:
    items = _list(_json_col(row, col), col)
    return [_abs_path(p, f"{col}[{i}]") for i, p in enumerate(items)]


def _message(row: Mapping[str, Any], col: str, cls: type[_M]) -> _M:
    blob = _blob(row, col)
    try:
        return cls.FromString(blob)
    except DecodeError as exc:
        raise BadRow(f"{col} is not a serialised {cls.DESCRIPTOR.full_name} ({exc})") from None


def session_of(row: Mapping[str, Any]) -> Session:
    sid = _id(row["session_id"], "session_id")
    _int(row, "seq")
    roots = _paths(row, "roots")
    if not roots:
        raise BadRow("roots is empty")
    policy = _message(row, "policy", pb.RestorePolicy)
    try:
        validate_policy(policy)
    except InvalidArgument as exc:
        raise BadRow(f"policy: {exc.message}") from None
    profile = _int(row, "profile")
    if profile not in pb.Profile.values():  # 0 (unspecified) is the default profile
        raise BadRow(f"profile {profile} is not a known profile")
    spec = _message(row, "templates", pb.TemplateSpec)
    try:
        profiles.templates_for(pb.Profile.ValueType(profile), spec.SerializeToString())
    except TemplateError as exc:
        raise BadRow(f"templates: {exc}") from None
    return Session(
        session_id=sid,
        cwd=_abs_path(row["cwd"], "cwd"),
        home=_abs_path(row["home"], "home"),
        roots=roots,
        memory_paths=frozenset(_paths(row, "memory_paths")),
        plans_directory=_abs_path(row["plans_directory"], "plans_directory"),
        policy=policy,
        profile=pb.Profile.ValueType(profile),
        created_at_ms=_int(row, "created_at_ms"),
        last_active_ms=_int(row, "last_active_ms"),
        templates_spec=spec.SerializeToString(),
    )


@dataclass(slots=True)
class AgentRow:
    session_id: str
    agent_id: str
    plan_file_path: str | None
    mode: pb.PermissionMode.ValueType
    compactions: int
    nested_memory: list[str]
    announced: dict[str, list[str]]
    parent_agent_id: str
    carried_reads: dict[str, tuple[bytes, int]]
    carried_refs: dict[str, int]
    harness_unaware: dict[str, int]


def agent_of(row: Mapping[str, Any]) -> AgentRow:
    aid = _id(row["agent_id"], "agent_id", allow_empty=True)
    _int(row, "seq")
    plan = row["plan_file_path"]
    mode = _int(row, "mode")
    if mode not in pb.PermissionMode.values():
        raise BadRow(f"mode {mode} is not a known permission mode")
    announced = _object(_json_col(row, "announced"), "announced")
    sets = {}
    for name in _ANNOUNCED:  # another key is ignored, as the load always did
        items = _list(announced.get(name, []), f"announced.{name}")
        sets[name] = [_str(x, f"announced.{name}[]") for x in items]
    carried = _object(_json_col(row, "carried"), "carried")
    reads, refs = _carried_of(carried)
    unaware = _stamps(carried.get("unaware", {}), "carried.unaware")
    return AgentRow(
        session_id=row["session_id"],
        agent_id=aid,
        plan_file_path=None if plan is None else _abs_path(plan, "plan_file_path"),
        mode=pb.PermissionMode.ValueType(mode),
        compactions=_int(row, "compactions", 0),
        nested_memory=_paths(row, "nested_memory"),
        announced=sets,
        parent_agent_id=_id(row["parent_agent_id"], "parent_agent_id", allow_empty=True),
        carried_reads=reads,
        carried_refs=refs,
        harness_unaware=unaware,
    )


def _carried_of(
    carried: Mapping[str, Any],
) -> tuple[dict[str, tuple[bytes, int]], dict[str, int]]:
    """`agents.carried` as `_carried_json` writes it: {"reads": {path: [SHA-256 hex or "",
    length]}, "refs": {path: timestamp}}."""
    reads: dict[str, tuple[bytes, int]] = {}
    for path, value in _object(carried.get("reads", {}), "carried.reads").items():
        what = f"carried.reads[{_show(path)}]"
        _abs_path(path, f"{what}'s path")
        if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)):
            raise BadRow(f"{what} is not [SHA-256 hex, length]")
        try:
            digest = bytes.fromhex(value[0])
        except ValueError:
            raise BadRow(f"{what} has a digest that is not hex") from None
        if len(digest) not in (0, _SHA256_BYTES) or type(value[1]) is not int or value[1] < 0:
            raise BadRow(f"{what} is not [SHA-256 hex, length]")
        reads[path] = (digest, value[1])
    return reads, _stamps(carried.get("refs", {}), "carried.refs")


def _stamps(value: Any, what: str) -> dict[str, int]:
    """{absolute path: integer timestamp} (`carried.refs`, `carried.unaware`)."""
    out: dict[str, int] = {}
    for path, ts in _object(value, what).items():
        _abs_path(path, f"a {what} path")
        if type(ts) is not int:
            raise BadRow(f"{what}[{_show(path)}] is not an integer timestamp")
        out[path] = ts
    return out


@dataclass(slots=True)
class CatalogRow:
    session_id: str
    agent_id: str
    parts: pb.SetCatalogRequest
    size: int  # of the stored blob (0: nothing set)


def catalog_of(row: Mapping[str, Any]) -> CatalogRow:
    parts = _message(row, "parts", pb.SetCatalogRequest)
    return CatalogRow(row["session_id"], row["agent_id"], parts, len(row["parts"]))


@dataclass(slots=True)
class FileRow:
    path: str
    seq: int
    timestamp: int
    offset: int | None
    limit: int | None
    partial_view: bool
    digest: bytes
    size: int
    mark: tuple[int, int] | None
    seen: Seen | None = None


def file_of(row: Mapping[str, Any], cwd: str, home: str) -> FileRow:
    """A file row of a session with `cwd` and `home`: its path must be the key the cache gives
    it (a row under another form would be dropped by the cache's load)."""
    path = _abs_path(row["path"], "path")
    key = expand_path(path, cwd, home)
    if key != path:
        raise BadRow(f"path {_show(path)} is not in normal form (the cache keys it {_show(key)})")
    partial = _int(row, "partial_view")
    if partial not in (0, 1):
        raise BadRow(f"partial_view is {partial}, not 0 or 1")
    digest = _blob(row, "content_sha256")
    if len(digest) != _SHA256_BYTES:
        raise BadRow(
            f"content_sha256 has {len(digest)} bytes, not the {_SHA256_BYTES} of a SHA-256"
        )
    mark_ts, mark_mtime = _opt_int(row, "mark_ts_ms"), _opt_int(row, "mark_mtime_ms")
    if (mark_ts is None) != (mark_mtime is None):
        raise BadRow("mark_ts_ms and mark_mtime_ms are not both set or both NULL")
    first, last = _opt_int(row, "seen_first"), _opt_int(row, "seen_last")
    if (first is None) != (last is None) or (
        first is not None and last is not None and (first < 0 or last < first)
    ):
        raise BadRow(f"seen_first {first} and seen_last {last} are not a range of lines")
    edited = _int(row, "seen_edited")
    if edited not in (0, 1):
        raise BadRow(f"seen_edited is {edited}, not 0 or 1")
    seen = None if first is None or last is None else Seen(first, last, bool(edited))
    return FileRow(
        path=path,
        seq=_int(row, "seq"),
        timestamp=_int(row, "timestamp_ms"),
        # 0 is what FileState takes and an import may record; lines count from 1 on reading.
        offset=_opt_int(row, "read_offset", 0),
        limit=_opt_int(row, "read_limit", 0),
        partial_view=bool(partial),
        digest=digest,
        size=_int(row, "content_len", 0),
        mark=None if mark_ts is None or mark_mtime is None else (mark_ts, mark_mtime),
        seen=seen,
    )


def skill_of(row: Mapping[str, Any]) -> InvokedSkill:
    name = _str(row["name"], "name")
    if not name:
        raise BadRow("name is empty")
    _int(row, "seq")
    # Its content need not be UTF-8 (an import keeps what it read); rendering replaces.
    content = _blob(row, "content")
    return InvokedSkill(name, _str(row["path"], "path"), content, _int(row, "invoked_at_ms", 0))


def task_of(row: Mapping[str, Any]) -> pb.Task:
    task_id = _str(row["task_id"], "task_id")
    if not task_id:
        raise BadRow("task_id is empty")
    _int(row, "seq")
    task = _message(row, "task", pb.Task)
    if task.task_id != task_id:
        raise BadRow(f"the task blob is of task {_show(task.task_id)}, not {_show(task_id)}")
    if task.status not in pb.TaskStatus.values():
        raise BadRow(f"task status {task.status} is not a known status")
    return task


def history_of(row: Mapping[str, Any]) -> tuple[int, int, str]:
    return (
        _int(row, "version", 1),
        _int(row, "applied_at_ms"),
        _str(row["daemon_version"], "daemon_version"),
    )


def select_rows(
    db: Db, table: str, tail: str = "", args: Sequence[Any] = ()
) -> Iterator[tuple[Any, dict[str, Any]]]:
    """(rowid, {column: value}) of `table`'s rows, `tail` (WHERE, ORDER BY) applied; a column
    the database lacks because it is not migrated yet has the value the migration gives it."""
    cur = db.execute(f"SELECT {db.rowid}, * FROM {table}{tail}", args)
    names = [d[0] for d in cur.description[1:]]
    added = MIGRATION_DEFAULTS.get(table, {})
    for rowid, *values in cur:
        row = dict(zip(names, values, strict=True))
        for col, value in added.items():
            row.setdefault(col, value)
        yield rowid, row


def _session_owner(
    row: Mapping[str, Any], sessions: Mapping[str, tuple[str, str]], bad_sessions: set[Any]
) -> tuple[str, str]:
    """The (cwd, home) of the row's session; BadRow unless it is stored and good."""
    sid = row["session_id"]
    if sid not in sessions:
        raise BadRow(
            "its session's row is bad" if sid in bad_sessions else "its session is not stored"
        )
    return sessions[sid]


def _agent_owner(
    row: Mapping[str, Any],
    sessions: Mapping[str, tuple[str, str]],
    bad_sessions: set[Any],
    agents: set[tuple[str, str]],
    bad_agents: set[tuple[Any, Any]],
) -> tuple[str, str]:
    """As `_session_owner`, and BadRow unless the row's agent is stored and good too. The main
    agent needs no row: the load makes it."""
    where = _session_owner(row, sessions, bad_sessions)
    key = (row["session_id"], row["agent_id"])
    if key in bad_agents:
        raise BadRow("its agent's row is bad")
    if key not in agents and key[1] != MAIN_AGENT:
        raise BadRow("its agent is not stored")
    return where


def scan_rows(db: Db, only: str | None = None) -> list[RowProblem]:
    """Every row the daemon cannot use (of the session `only`, or of all), with the reason (see
    the section's comment). Reads only; callers run it in one transaction, so the tables are
    seen at one moment."""
    problems: list[RowProblem] = []

    def bad(table: str, rowid: Any, row: dict[str, Any], exc: BadRow) -> None:
        key = {k: _stored(row.get(k)) for k in ROW_KEYS[table]}  # printable as JSON
        problems.append(RowProblem(table, key, str(exc), rowid, row))

    def rows(table: str) -> Iterator[tuple[Any, dict[str, Any]]]:
        # An unmigrated database (`state check`) may lack a table: it has no rows then.
        if not db.has_table(table):
            return iter(())
        if only is None:
            return select_rows(db, table)
        if table == "schema_history":  # no session's
            return iter(())
        return select_rows(db, table, " WHERE session_id = ?", (only,))

    sessions: dict[str, tuple[str, str]] = {}
    agents: set[tuple[str, str]] = set()
    bad_sessions: set[Any] = set()
    bad_agents: set[tuple[Any, Any]] = set()
    with db.lenient_text():
        for rowid, row in rows("sessions"):
            try:
                s = session_of(row)
            except BadRow as exc:
                bad("sessions", rowid, row, exc)
                bad_sessions.add(row["session_id"])
            else:
                sessions[s.session_id] = (s.cwd, s.home)
        for rowid, row in rows("agents"):
            try:
                _session_owner(row, sessions, bad_sessions)
                a = agent_of(row)
            except BadRow as exc:
                bad("agents", rowid, row, exc)
                bad_agents.add((row["session_id"], row["agent_id"]))
            else:
                agents.add((a.session_id, a.agent_id))
        for table in ("catalogs", "files", "skills"):
            for rowid, row in rows(table):
                try:
                    cwd, home = _agent_owner(row, sessions, bad_sessions, agents, bad_agents)
                    if table == "catalogs":
                        catalog_of(row)
                    elif table == "files":
                        file_of(row, cwd, home)
                    else:
                        skill_of(row)
                except BadRow as exc:
                    bad(table, rowid, row, exc)
        for rowid, row in rows("tasks"):
            try:
                _session_owner(row, sessions, bad_sessions)
                task_of(row)
            except BadRow as exc:
                bad("tasks", rowid, row, exc)
        for rowid, row in rows("schema_history"):
            try:
                history_of(row)
            except BadRow as exc:
                bad("schema_history", rowid, row, exc)
    return problems


def _stored(value: Any) -> Any:
    """A stored value as the quarantine table's JSON holds it: a BLOB as its hex string, a
    non-finite REAL as its repr (JSON has none)."""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    return value


def row_json(values: Mapping[str, Any]) -> str:
    return json.dumps({k: _stored(v) for k, v in values.items()})
