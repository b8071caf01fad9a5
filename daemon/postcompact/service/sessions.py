"""The session requests: OpenSession (ids, paths, memory files, defaults), StartAgent,
MergeFileState, ListSessions (paged) and GetStats, over the registry (state/registry.py).

Everything here runs on the daemon's one event loop; what it awaits is the store, off the loop.
ListSessions and GetStats report what is stored (every session of the database, in memory or
not); with nothing stored (`--no-persist`) they report memory.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import os
import re
import uuid

from postcompact import core, profiles
from postcompact.admission import reserve_answer
from postcompact.config import Config
from postcompact.errors import AlreadyExists, InvalidArgument, ResourceExhausted, check_answer
from postcompact.paths import now_ms
from postcompact.render import TemplateError
from postcompact.restore.policy import validate_policy
from postcompact.state import MAIN_AGENT, ROW_BYTES, AgentState, Session
from postcompact.state.model import MAX_PATH_BYTES
from postcompact.state.registry import Registry, check_id
from postcompact.v1 import postcompact_pb2 as pb

# Memory file names and memory paths of one session, each.
MAX_MEMORY_ENTRIES = 64
DEFAULT_MEMORY_FILE_NAMES = ("CLAUDE.md", "CLAUDE.local.md")


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


def session_info(s: Session) -> pb.SessionInfo:
    """What ListSessions, OpenSession and ImportTranscript report of `s`."""
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


def _templates_spec(req: pb.OpenSessionRequest, profile: int, daemon: bytes) -> bytes:
    """The session's own wording, serialised (b"" when the request sets none), checked as it
    will be used over the daemon's and the profile's: INVALID_ARGUMENT `BAD_TEMPLATES`."""
    if not req.HasField("templates"):
        return b""
    raw = req.templates.SerializeToString()
    try:
        profiles.templates_for(pb.Profile.ValueType(profile), daemon, raw)
    except TemplateError as exc:
        raise InvalidArgument(
            "BAD_TEMPLATES", f"templates: {exc}", {"field": "templates"}
        ) from None
    return raw


def _restated_differently(s: Session, req: pb.OpenSessionRequest, cwd: str) -> dict[str, str]:
    """The settings `req` states (non-empty) that differ from those of the session `s` it
    resumes: field -> what differs. A setting left out is the session's."""
    out: dict[str, str] = {}
    if req.roots:
        roots = [check_abs_path("roots[]", os.path.join(cwd, r)) for r in req.roots]
        if set(roots) != set(s.roots):
            out["roots"] = f"roots {sorted(s.roots)}, not {sorted(set(roots))}"
    home = s.home
    if req.home:
        home = check_abs_path("home", req.home)
        if home != s.home:
            out["home"] = f"home {s.home!r}, not {home!r}"
    if req.plans_directory:
        if "\x00" in req.plans_directory:
            raise InvalidArgument("PATH_HAS_NUL", "plans_directory contains a NUL byte")
        check_path_length("plans_directory", req.plans_directory)
        plans = core.expand_path(req.plans_directory, cwd, home)
        if plans != s.plans_directory:
            out["plans_directory"] = f"plans_directory {s.plans_directory!r}, not {plans!r}"
    stated = req.memory.file_names or req.memory.paths
    if stated and memory_paths(req, cwd, home) != s.memory_paths:
        out["memory"] = "other memory files"
    if req.HasField("policy") and req.policy.ByteSize():
        validate_policy(req.policy)
        if req.policy != s.policy:
            out["policy"] = "another policy"
    if req.HasField("templates") and req.templates.SerializeToString() != s.templates_spec:
        _templates_spec(req, s.profile, s.daemon_templates)  # a bad one is INVALID_ARGUMENT
        out["templates"] = "other templates"
    if req.profile and req.profile != s.profile:
        out["profile"] = (
            f"profile {profiles.name_of(s.profile)}, not {profiles.name_of(req.profile)}"
        )
    return out


class SessionService:
    """OpenSession, StartAgent, MergeFileState, ListSessions, GetStats: the requests that open
    and list sessions and agents, checked and turned into changes of the registry."""

    def __init__(self, registry: Registry, config: Config):
        self.registry = registry
        self.config = config

    async def open(self, req: pb.OpenSessionRequest) -> tuple[Session, bool]:
        """A new session, or the existing one of that id (resumed). Resuming, a setting the
        request states must be the session's (else SESSION_CWD_MISMATCH or
        SESSION_SETTINGS_MISMATCH, naming what differs): settings are never silently dropped.
        With its id and no cwd the request joins the session as it is (attach). With a shared
        store, a session changed through another daemon is read again first (docs/fleet.md)."""
        if req.session_id:
            await self.registry.refresh(check_id("session", req.session_id))
        if req.session_id and not req.cwd:
            s = await self.registry.session(check_id("session", req.session_id))  # or NOT_FOUND
            await self.registry.resume(s)
            return s, True
        sid = check_id("session", req.session_id, allow_empty=True) or uuid.uuid4().hex
        cwd = check_abs_path("cwd", req.cwd)
        existing = await self.registry.find(sid) if req.session_id else None
        if existing is not None:
            if existing.cwd != cwd:
                raise InvalidArgument(
                    "SESSION_CWD_MISMATCH",
                    f"session {sid} exists with cwd {existing.cwd!r}, not {cwd!r}; join it by "
                    "its id alone (an empty cwd) to take it as it is",
                    {"session_id": sid, "fields": "cwd"},
                )
            differ = _restated_differently(existing, req, cwd)
            if differ:
                raise InvalidArgument(
                    "SESSION_SETTINGS_MISMATCH",
                    f"session {sid} exists with other settings ({'; '.join(differ.values())}); "
                    "open it with the same ones, leave them out, or join it by its id alone (an "
                    "empty cwd) to take it as it is",
                    {"session_id": sid, "fields": ",".join(differ)},
                )
            await self.registry.resume(existing)
            return existing, True
        await self.registry.make_room()
        s = self._new_session(req, sid, cwd)
        await self.registry.add(s, room=req.ByteSize() + 2 * ROW_BYTES)
        return s, False

    def _new_session(self, req: pb.OpenSessionRequest, sid: str, cwd: str) -> Session:
        """The session `req` opens, checked (INVALID_ARGUMENT naming what is wrong)."""
        home = check_abs_path("home", req.home) if req.home else os.path.expanduser("~")
        self.registry.check_roots(len(req.roots))
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
        spec = _templates_spec(req, profile, self.config.templates_spec)
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
            templates_spec=spec,
        )
        s.agents[MAIN_AGENT] = AgentState(MAIN_AGENT, self.registry.new_cache(s))
        answer = pb.OpenSessionResponse(session_id=sid, session=session_info(s)).ByteSize()
        check_answer(answer, self.config.max_message_bytes, f"opening session {sid}")
        return s

    # --- agents -----------------------------------------------------------------------------

    async def start_agent(self, req: pb.StartAgentRequest) -> AgentState:
        s = await self.registry.session(req.session_id)
        check_id("agent", req.agent_id)
        _, parent = await self.registry.agent(req.session_id, req.parent_agent_id)
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
            a = AgentState(
                req.agent_id, self.registry.new_cache(s), parent_agent_id=parent.agent_id
            )
        elif req.mode == pb.AGENT_MODE_CLONE_PARENT:
            a = AgentState(req.agent_id, parent.files.clone(), parent_agent_id=parent.agent_id)
            a.read_mtimes = dict(parent.read_mtimes)
            a.unverified = dict(parent.unverified)
            a.seen = dict(parent.seen)
            a.harness_unaware = dict(parent.harness_unaware)
        else:
            raise InvalidArgument("BAD_AGENT_MODE", f"unknown agent mode {req.mode}")
        async with self.registry.mutate(s, a, room=ROW_BYTES * (1 + len(a.files))) as change:
            change.agent = change.files = True
        s.agents[req.agent_id] = a
        return a

    async def end_agent(self, req: pb.EndAgentRequest) -> pb.EndAgentResponse:
        s, a = await self.registry.agent(req.session_id, req.agent_id)
        if a.agent_id == MAIN_AGENT:
            raise InvalidArgument(
                "MAIN_AGENT",
                'the main thread (agent_id "") ends with its session: use CloseSession',
                {"session_id": s.session_id},
            )
        held = len(a.files)
        await self.registry.end_agent(s, a)
        return pb.EndAgentResponse(cached_entries=held, agents=len(s.agents))

    async def merge(self, req: pb.MergeFileStateRequest) -> tuple[int, int]:
        """Entries of `from` that are missing in `into` or strictly newer replace them."""
        _, src = await self.registry.agent(req.session_id, req.from_agent_id)
        s, dst = await self.registry.agent(req.session_id, req.into_agent_id)
        if src is dst:
            raise InvalidArgument("MERGE_SAME_AGENT", "from_agent_id and into_agent_id are equal")
        async with self.registry.mutate(s, dst, room=ROW_BYTES * len(src.files)) as change:
            merged = self._merge_into(src, dst)
            change.files = True
        return merged, len(dst.files) - merged

    @staticmethod
    def _merge_into(src: AgentState, dst: AgentState) -> int:
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
                if path in src.seen:
                    dst.seen[path] = src.seen[path]
        return merged

    # --- reporting --------------------------------------------------------------------------

    async def list_page(self, req: pb.ListSessionsRequest) -> pb.ListSessionsResponse:
        """One page of sessions in id order, at most `page_size` and within the message limit
        (docs/reliability.md): the answer is bounded whatever is stored. The sessions are the
        store's (paged by its key), each as memory holds it when it is there."""
        if req.page_size < 0:
            raise InvalidArgument(
                "BAD_PAGE_SIZE", f"page_size must be >= 0 (0 = {DEFAULT_PAGE}), got {req.page_size}"
            )
        size = min(req.page_size or DEFAULT_PAGE, MAX_PAGE)
        after = _page_after(req.page_token)
        if self.registry.keeps_sessions:
            page = await self.registry.stored_page(after, size + 1)
            total = await self.registry.stored_count()
            infos = [self._current(info) for info in page]
        else:
            ids = sorted(self.registry.sessions)
            start = bisect.bisect_right(ids, after) if after is not None else 0
            infos = [
                session_info(self.registry.sessions[sid]) for sid in ids[start : start + size + 1]
            ]
            total = len(ids)
        more = len(infos) > size
        budget = self.config.max_message_bytes - PAGE_OVERHEAD
        resp = pb.ListSessionsResponse(total_sessions=total)
        used = 0
        for info in infos[:size]:
            cost = info.ByteSize() + 8  # the field's tag and length
            if used + cost > budget:
                if resp.sessions:
                    more = True
                    break
                del info.roots[:], info.agent_ids[:]  # alone it does not fit: the rest of it
                info.partial = True
                cost = info.ByteSize() + 8
            resp.sessions.append(info)
            used += cost
        if more:
            resp.next_page_token = (
                _page_token(resp.sessions[-1].session_id) if resp.sessions else req.page_token
            )
        reserve_answer(resp.ByteSize())
        return resp

    def _current(self, stored: pb.SessionInfo) -> pb.SessionInfo:
        """A stored session as memory holds it now, when it is there (its activity time may be
        newer than the stored one)."""
        s = self.registry.sessions.get(stored.session_id)
        return stored if s is None else session_info(s)

    async def stats(self) -> pb.GetStatsResponse:
        """The daemon's totals: what is stored (every session of the database), or with nothing
        stored what memory holds. Summing memory is O(agents): the loop is yielded to other
        calls every STATS_SLICE agents, so a daemon with many agents stalls nobody."""
        registry = self.registry
        if registry.keeps_sessions:
            sessions, agents, entries, size, compactions = await registry.stored_totals()
            evictions = registry.evictions_of_closed + sum(
                a.files.evictions
                for s in list(registry.sessions.values())
                for a in s.agents.values()
            )
        else:
            sessions, agents, entries, size, compactions, evictions = await self._memory_totals()
        return pb.GetStatsResponse(
            sessions=sessions,
            agents=agents,
            cached_entries=entries,
            cached_bytes=size,
            compactions=compactions,
            evictions=evictions,
            uptime_ms=now_ms() - registry.started_at_ms,
            content_bytes=core.held_bytes(),
            max_content_bytes=self.config.max_content_bytes,
            sessions_in_memory=len(registry.sessions),
            sessions_read=registry.loaded,
            sessions_evicted=registry.evicted,
        )

    async def _memory_totals(self) -> tuple[int, int, int, int, int, int]:
        agents = entries = size = compactions = evictions = 0
        sessions = list(self.registry.sessions.values())
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
        evictions += self.registry.evictions_of_closed
        return len(sessions), agents, entries, size, compactions, evictions


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
