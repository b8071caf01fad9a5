"""The session registry: sessions -> agents, ids, limits, defaults and stats.

Everything here is synchronous and runs on the daemon's one event loop, so no locking is needed.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import logging
import os
import re
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field

from postcompact import core, profiles
from postcompact.admission import reserve_answer
from postcompact.config import Config
from postcompact.errors import (
    AlreadyExists,
    InvalidArgument,
    NotFound,
    ResourceExhausted,
    check_answer,
)
from postcompact.paths import now_ms
from postcompact.persist import ROW_BYTES, NullStore, Store, Written
from postcompact.restore.policy import validate_policy
from postcompact.state import MAIN_AGENT, AgentState, Session
from postcompact.v1 import postcompact_pb2 as pb

MAX_ID_LEN = 256
# Linux's PATH_MAX: no path a session names (cwd, home, roots, plans, memory) may be longer.
MAX_PATH_BYTES = 4096
# Memory file names and memory paths of one session, each.
MAX_MEMORY_ENTRIES = 64
REMEMBER_EXPIRED = 1024  # expired session ids remembered for a clearer NOT_FOUND message
DEFAULT_MEMORY_FILE_NAMES = ("CLAUDE.md", "CLAUDE.local.md")

log = logging.getLogger("postcompact.sessions")


def check_id(kind: str, value: str, *, allow_empty: bool = False) -> str:
    """Ids are opaque strings: non-empty (unless allowed), at most 256 chars, no control chars."""
    if not value:
        if allow_empty:
            return value
        raise InvalidArgument(f"{kind.upper()}_ID_REQUIRED", f"{kind}_id must not be empty")
    if len(value) > MAX_ID_LEN or any(ord(c) < 0x20 or c == "\x7f" for c in value):
        raise InvalidArgument(
            f"BAD_{kind.upper()}_ID",
            f"{kind}_id must be at most {MAX_ID_LEN} characters without control characters",
        )
    return value


def check_path_length(field: str, value: str) -> None:
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_PATH_BYTES:
        raise InvalidArgument(
            "PATH_TOO_LONG",
            f"{field} is {size} bytes, over the {MAX_PATH_BYTES}-byte path limit (PATH_MAX)",
            {"field": field, "limit": str(MAX_PATH_BYTES)},
        )


def check_abs_path(field: str, value: str) -> str:
    if not value:
        raise InvalidArgument("PATH_REQUIRED", f"{field} must not be empty")
    if "\x00" in value:
        raise InvalidArgument("PATH_HAS_NUL", f"{field} contains a NUL byte")
    check_path_length(field, value)
    if not os.path.isabs(value):
        raise InvalidArgument("PATH_NOT_ABSOLUTE", f"{field} must be an absolute path: {value!r}")
    return os.path.normpath(value)


_NOT_ALNUM = re.compile(r"[^a-zA-Z0-9]")
_MAX_PROJECT_NAME = 200


def project_dir_name(path: str) -> str:
    """The folder name Claude Code gives a project under `~/.claude/projects/`: every character
    that is not an ASCII letter or digit becomes "-" (`/home/u/app` -> `-home-u-app`,
    `D:\\oh-my-posh` -> `D--oh-my-posh`). A name over 200 characters is cut to 200 and gets "-"
    and a hash of the path; Claude Code's shipped binary takes Bun's hash there, this takes the
    djb2 hash of its non-Bun build (docs/claude-code.md §3: long names are approximate)."""
    name = _NOT_ALNUM.sub("-", path)
    if len(name) <= _MAX_PROJECT_NAME:
        return name
    raw = path.encode("utf-16-le", "surrogatepass")
    h = 0
    for i in range(0, len(raw), 2):  # over UTF-16 code units, as String.charCodeAt
        h = ((h << 5) - h + (raw[i] | raw[i + 1] << 8)) & 0xFFFFFFFF
    if h >= 2**31:
        h -= 2**32
    return f"{name[:_MAX_PROJECT_NAME]}-{_base36(abs(h))}"


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def auto_memory_path(home: str, cwd: str) -> str:
    """Claude Code's auto-memory entry point:
    `~/.claude/projects/<project_dir_name(cwd)>/memory/MEMORY.md`."""
    return os.path.join(home, ".claude", "projects", project_dir_name(cwd), "memory", "MEMORY.md")


def memory_paths(req: pb.OpenSessionRequest, cwd: str, home: str) -> frozenset[str]:
    for what, items in (("file_names", req.memory.file_names), ("paths", req.memory.paths)):
        if len(items) > MAX_MEMORY_ENTRIES:
            raise InvalidArgument(
                "TOO_MANY_MEMORY_FILES",
                f"memory.{what} has {len(items)} entries, over {MAX_MEMORY_ENTRIES}",
                {"field": f"memory.{what}", "limit": str(MAX_MEMORY_ENTRIES)},
            )
        for item in items:
            check_path_length(f"memory.{what}[]", item)
    names = list(req.memory.file_names) or list(DEFAULT_MEMORY_FILE_NAMES)
    for n in names:
        if not n or "/" in n or "\x00" in n or n in (".", ".."):
            raise InvalidArgument(
                "BAD_MEMORY_FILE_NAME", f"memory file names are plain names: {n!r}"
            )
    paths = list(req.memory.paths) or [
        os.path.join(home, ".claude", "CLAUDE.md"),
        "/etc/claude-code/CLAUDE.md",
        auto_memory_path(home, cwd),
    ]
    out = {core.expand_path(os.path.join(cwd, n), cwd, home) for n in names}
    for p in paths:
        if "\x00" in p or not (os.path.isabs(p) or p == "~" or p.startswith("~/")):
            raise InvalidArgument(
                "BAD_MEMORY_PATH", f"memory paths must be absolute or ~-relative: {p!r}"
            )
        out.add(core.expand_path(p, cwd, home))
    return frozenset(out)


@dataclass
class Registry:
    """Sessions in memory; every change is written through `store` before the RPC returns."""

    config: Config
    started_at_ms: int = 0
    store: Store = field(default_factory=NullStore)

    def __post_init__(self) -> None:
        self.sessions: dict[str, Session] = {}
        self.started_at_ms = self.started_at_ms or now_ms()
        self.evictions_of_closed = 0
        self.expired: OrderedDict[str, int] = OrderedDict()  # session id -> expired at (ms)
        self.resyncs = 0
        self.store.on_failed_write = self.resync

    def load(self) -> None:
        """Re-create the sessions kept by the store (start-up)."""
        for s in self.store.load(self.new_cache):
            self.sessions[s.session_id] = s

    def resync(self, written: set[Written]) -> None:
        """After a failed write: what it wrote becomes in memory what the database holds.

        The call that failed had changed memory first; without this, a later call would see its
        change (a ReadFile retried after a failed one answered "unchanged", a refused skill
        restored at Compact) although the client was told it failed and a restart would not
        have it. `written` holds (session id, agent id) for an agent's state and (session id,
        None) for the session's own. Agents are updated in place, since calls awaiting a read
        hold them; an agent or session that is not stored leaves memory. File contents are
        re-read and verified as at start-up.
        """
        by_session: dict[str, set[str | None]] = {}
        for sid, aid in written:
            by_session.setdefault(sid, set()).add(aid)
        for sid, parts in sorted(by_session.items()):
            self.resyncs += 1
            s = self.sessions.get(sid)
            agents = None if s is None else {p for p in parts if p is not None}
            try:
                fresh = self.store.load_session(sid, self.new_cache, agents)
            except Exception:
                log.exception("re-reading session %s after a failed write failed", sid)
                continue
            if fresh is None:
                self.sessions.pop(sid, None)
            elif s is None:
                self.sessions[sid] = fresh
            else:
                s.tasks, s.last_active_ms = fresh.tasks, fresh.last_active_ms
                for aid in agents or ():
                    stored, a = fresh.agents.get(aid), s.agents.get(aid)
                    if stored is None:
                        s.agents.pop(aid, None)
                    elif a is None:
                        s.agents[aid] = stored
                    else:
                        a.assign(stored)
            log.warning(
                "a write failed: %s re-read from the state database",
                f"session {sid}"
                if fresh is None or agents is None
                else f"session {sid} (agents {sorted(agents)})",
            )

    # --- sessions ---------------------------------------------------------------------------

    def open(self, req: pb.OpenSessionRequest) -> tuple[Session, bool]:
        sid = check_id("session", req.session_id, allow_empty=True) or uuid.uuid4().hex
        cwd = check_abs_path("cwd", req.cwd)
        existing = self.sessions.get(sid)
        if existing is not None:
            if existing.cwd != cwd:
                raise InvalidArgument(
                    "SESSION_CWD_MISMATCH",
                    f"session {sid} exists with cwd {existing.cwd!r}, not {cwd!r}",
                )
            existing.last_active_ms = now_ms()
            self.store.flush_activity((existing,))
            return existing, True
        if len(self.sessions) >= self.config.max_sessions:
            raise ResourceExhausted(
                "TOO_MANY_SESSIONS",
                f"the daemon holds {self.config.max_sessions} sessions (limits.max_sessions); "
                "close some with CloseSession",
                {"limit": "max_sessions"},
            )
        home = check_abs_path("home", req.home) if req.home else os.path.expanduser("~")
        self.check_roots(len(req.roots))
        roots = [check_abs_path("roots[]", os.path.join(cwd, r)) for r in req.roots] or [cwd]
        plans = req.plans_directory or os.path.join(home, ".claude", "plans")
        if "\x00" in plans:
            raise InvalidArgument("PATH_HAS_NUL", "plans_directory contains a NUL byte")
        check_path_length("plans_directory", plans)
        plans = core.expand_path(plans, cwd, home)
        policy = pb.RestorePolicy()
        policy.CopyFrom(req.policy)
        validate_policy(policy)
        profile = req.profile or self.config.profile
        if not profiles.known(profile):
            raise InvalidArgument("BAD_PROFILE", f"unknown profile {profile}")
        t = now_ms()
        s = Session(
            session_id=sid,
            cwd=cwd,
            home=home,
            roots=roots,
            memory_paths=memory_paths(req, cwd, home),
            plans_directory=plans,
            policy=policy,
            profile=profile,
            created_at_ms=t,
            last_active_ms=t,
        )
        s.agents[MAIN_AGENT] = AgentState(MAIN_AGENT, self.new_cache(s))
        answer = pb.OpenSessionResponse(session_id=sid, session=self.session_info(s)).ByteSize()
        check_answer(answer, self.config.max_message_bytes, f"opening session {sid}")
        self.store.check_room(req.ByteSize() + 2 * ROW_BYTES)
        self.store.put_session(s)
        self.sessions[sid] = s
        self.expired.pop(sid, None)
        return s, False

    def adopt(self, s: Session) -> None:
        """Register `s`, built elsewhere (an import), and write all of it in one transaction:
        its row, its agents with their files, skills and catalogues, its tasks."""
        if len(self.sessions) >= self.config.max_sessions:
            raise ResourceExhausted(
                "TOO_MANY_SESSIONS",
                f"the daemon holds {self.config.max_sessions} sessions (limits.max_sessions); "
                "close some with CloseSession",
                {"limit": "max_sessions"},
            )
        if len(s.agents) > self.config.max_agents_per_session:
            raise ResourceExhausted(
                "TOO_MANY_AGENTS",
                f"the transcript has {len(s.agents)} agents, over "
                f"limits.max_agents_per_session ({self.config.max_agents_per_session})",
                {"limit": "max_agents_per_session"},
            )
        rows = sum(len(a.files) + len(a.skills) + 2 for a in s.agents.values()) + len(s.tasks)
        self.store.check_room(ROW_BYTES * (rows + 1))
        written: list[Written] = [(s.session_id, None), *((s.session_id, a) for a in s.agents)]
        self.sessions[s.session_id] = s
        try:
            with self.store.tx(*written):
                self.store.put_session(s)
                for a in s.agents.values():
                    self.store.put_catalog(s, a)
                    self.store.sync_files(s, a)
                    for skill in a.skills.values():
                        self.store.put_skill(s, a, skill)
                for task in s.tasks.values():
                    self.store.put_task(s, task)
        except BaseException:
            if self.sessions.get(s.session_id) is s:
                del self.sessions[s.session_id]
            raise
        self.expired.pop(s.session_id, None)

    def admit(self, size: int, what: str, *, released: int = 0) -> None:
        """RESOURCE_EXHAUSTED `CONTENT_LIMIT` unless `size` more bytes of recorded content (less
        the `released` bytes the call replaces) keep the daemon within limits.max_content_bytes:
        the daemon-wide ceiling on what clients can make it hold (docs/reliability.md)."""
        held, cap = core.held_bytes(), self.config.max_content_bytes
        after = held + size - min(released, held)
        if after > cap:
            raise ResourceExhausted(
                "CONTENT_LIMIT",
                f"{what} would bring the recorded content the daemon holds to {after} bytes, over "
                f"limits.max_content_bytes ({cap}); close the sessions that are done "
                "(CloseSession) or raise the limit",
                {"limit": "max_content_bytes", "held": str(held)},
            )

    def check_roots(self, roots: int) -> None:
        if roots > self.config.max_roots:
            raise ResourceExhausted(
                "TOO_MANY_ROOTS",
                f"{roots} roots, over limits.max_roots ({self.config.max_roots})",
                {"limit": "max_roots"},
            )

    def new_cache(self, s: Session) -> core.FileStateCache:
        entries = self.config.cache_max_entries or s.rules.cache_max_entries
        return s.new_cache(entries, self.config.cache_max_bytes)

    def close(self, session_id: str) -> None:
        s = self.session(session_id)
        self._drop(s)

    def _drop(self, s: Session) -> None:
        self.store.delete_session(s.session_id)
        for a in s.agents.values():
            self.evictions_of_closed += a.files.evictions
        del self.sessions[s.session_id]

    def expire_idle(self, now: int | None = None) -> list[str]:
        """Remove sessions idle longer than limits.session_ttl_s (memory and disk)."""
        ttl_ms = int(self.config.session_ttl_s * 1000)
        if ttl_ms <= 0:
            return []
        now = now_ms() if now is None else now
        gone = [s for s in self.sessions.values() if now - s.last_active_ms > ttl_ms]
        for s in gone:
            self._drop(s)
            self.expired[s.session_id] = now
            while len(self.expired) > REMEMBER_EXPIRED:
                self.expired.popitem(last=False)
        return [s.session_id for s in gone]

    def session(self, session_id: str) -> Session:
        check_id("session", session_id)
        s = self.sessions.get(session_id)
        if s is None and session_id in self.expired:
            raise NotFound(
                "SESSION_EXPIRED",
                f"session {session_id!r} expired after {self.config.session_ttl_s:g}s without "
                "activity (limits.session_ttl_s); open it again with OpenSession",
                {"session_id": session_id, "limit": "session_ttl_s"},
            )
        if s is None:
            raise NotFound(
                "SESSION_NOT_FOUND",
                f"unknown session {session_id!r}; open it with OpenSession first",
                {"session_id": session_id},
            )
        s.last_active_ms = now_ms()
        return s

    def live(self, s: Session, a: AgentState) -> bool:
        """Whether `a` of `s` is still registered (a call that awaited may find it closed)."""
        return self.sessions.get(s.session_id) is s and s.agents.get(a.agent_id) is a

    def agent(self, session_id: str, agent_id: str) -> tuple[Session, AgentState]:
        s = self.session(session_id)
        check_id("agent", agent_id, allow_empty=True)
        a = s.agents.get(agent_id)
        if a is None:
            raise NotFound(
                "AGENT_NOT_FOUND",
                f"unknown agent {agent_id!r} in session {session_id!r}; start it with StartAgent",
                {"session_id": session_id, "agent_id": agent_id},
            )
        return s, a

    # --- agents -----------------------------------------------------------------------------

    def start_agent(self, req: pb.StartAgentRequest) -> AgentState:
        s = self.session(req.session_id)
        check_id("agent", req.agent_id)
        _, parent = self.agent(req.session_id, req.parent_agent_id)
        if req.agent_id in s.agents:
            raise AlreadyExists(
                "AGENT_EXISTS",
                f"agent {req.agent_id!r} already exists in session {s.session_id!r}",
            )
        if len(s.agents) >= self.config.max_agents_per_session:
            raise ResourceExhausted(
                "TOO_MANY_AGENTS",
                f"session {s.session_id!r} holds {self.config.max_agents_per_session} agents "
                "(limits.max_agents_per_session)",
                {"limit": "max_agents_per_session"},
            )
        if req.mode in (pb.AGENT_MODE_UNSPECIFIED, pb.AGENT_MODE_FRESH):
            a = AgentState(req.agent_id, self.new_cache(s), parent_agent_id=parent.agent_id)
        elif req.mode == pb.AGENT_MODE_CLONE_PARENT:
            a = AgentState(req.agent_id, parent.files.clone(), parent_agent_id=parent.agent_id)
            a.read_mtimes = dict(parent.read_mtimes)
            a.unverified = dict(parent.unverified)
        else:
            raise InvalidArgument("BAD_AGENT_MODE", f"unknown agent mode {req.mode}")
        self.store.check_room(ROW_BYTES * (1 + len(a.files)))
        with self.store.tx((s.session_id, a.agent_id)):
            self.store.put_agent(s, a)
            self.store.sync_files(s, a)
        s.agents[req.agent_id] = a
        return a

    def merge(self, req: pb.MergeFileStateRequest) -> tuple[int, int]:
        """Entries of `from` that are missing in `into` or strictly newer replace them."""
        _, src = self.agent(req.session_id, req.from_agent_id)
        s, dst = self.agent(req.session_id, req.into_agent_id)
        if src is dst:
            raise InvalidArgument("MERGE_SAME_AGENT", "from_agent_id and into_agent_id are equal")
        self.store.check_room(ROW_BYTES * len(src.files))
        merged = 0
        # snapshot() is MRU-first; setting oldest-first keeps the source's relative recency.
        for path, st in reversed(src.files.snapshot()):
            cur = dst.files.peek(path)
            if cur is None or st.timestamp > cur.timestamp:
                dst.files.set(path, st)
                merged += 1
                mark = src.read_mtimes.get(path)
                if mark is not None:
                    dst.read_mtimes[path] = mark
                if src.unverified.get(path) is st:
                    dst.unverified[path] = st
        self.store.sync_files(s, dst)
        return merged, len(dst.files) - merged

    # --- reporting --------------------------------------------------------------------------

    def session_info(self, s: Session) -> pb.SessionInfo:
        return pb.SessionInfo(
            session_id=s.session_id,
            cwd=s.cwd,
            roots=s.roots,
            agent_ids=list(s.agents),
            cached_entries=sum(len(a.files) for a in s.agents.values()),
            cached_bytes=sum(a.files.total_size for a in s.agents.values()),
            compactions=sum(a.compactions for a in s.agents.values()),
            created_at_ms=s.created_at_ms,
            last_active_ms=s.last_active_ms,
            profile=s.profile,
        )

    def list_page(self, req: pb.ListSessionsRequest) -> pb.ListSessionsResponse:
        """One page of sessions in id order, at most `page_size` and within the message limit
        (docs/reliability.md): the answer is bounded whatever the daemon holds."""
        if req.page_size < 0:
            raise InvalidArgument(
                "BAD_PAGE_SIZE", f"page_size must be >= 0 (0 = {DEFAULT_PAGE}), got {req.page_size}"
            )
        size = min(req.page_size or DEFAULT_PAGE, MAX_PAGE)
        after = _page_after(req.page_token)
        ids = sorted(self.sessions)
        start = bisect.bisect_right(ids, after) if after is not None else 0
        budget = self.config.max_message_bytes - PAGE_OVERHEAD
        resp = pb.ListSessionsResponse(total_sessions=len(ids))
        used, end = 0, start
        for sid in ids[start : start + size]:
            info = self.session_info(self.sessions[sid])
            cost = info.ByteSize() + 8  # the field's tag and length
            if used + cost > budget:
                if resp.sessions:
                    break
                del info.roots[:], info.agent_ids[:]  # alone it does not fit: the rest of it
                info.partial = True
                cost = info.ByteSize() + 8
            resp.sessions.append(info)
            used, end = used + cost, end + 1
        if end < len(ids):
            resp.next_page_token = _page_token(ids[end - 1]) if end > start else req.page_token
        reserve_answer(resp.ByteSize())
        return resp

    async def stats(self) -> pb.GetStatsResponse:
        """The daemon's totals. Summing every agent is O(agents): the loop is yielded to other
        calls every STATS_SLICE agents, so a daemon with many agents stalls nobody."""
        agents = entries = size = compactions = evictions = 0
        sessions = list(self.sessions.values())
        for s in sessions:
            members = list(s.agents.values())
            for a in members:
                entries += len(a.files)
                size += a.files.total_size
                compactions += a.compactions
                evictions += a.files.evictions
            agents += len(members)
            if agents // STATS_SLICE != (agents - len(members)) // STATS_SLICE:
                await asyncio.sleep(0)
        return pb.GetStatsResponse(
            sessions=len(sessions),
            agents=agents,
            cached_entries=entries,
            cached_bytes=size,
            compactions=compactions,
            evictions=self.evictions_of_closed + evictions,
            uptime_ms=now_ms() - self.started_at_ms,
            content_bytes=core.held_bytes(),
            max_content_bytes=self.config.max_content_bytes,
        )


DEFAULT_PAGE = 100
MAX_PAGE = 1000
PAGE_OVERHEAD = 1024  # the answer's own fields and the status around it
STATS_SLICE = 2000


def _page_token(last_id: str) -> str:
    return base64.urlsafe_b64encode(last_id.encode("utf-8", "surrogatepass")).decode()


def _page_after(token: str) -> str | None:
    """The last session id of the previous page, from `token` ("": None)."""
    if not token:
        return None
    try:
        after = base64.b64decode(token.encode("ascii"), altchars=b"-_", validate=True).decode()
        if _page_token(after) == token:
            return after
    except (ValueError, UnicodeError):
        pass
    raise InvalidArgument("BAD_PAGE_TOKEN", "page_token is not a next_page_token this daemon gave")
