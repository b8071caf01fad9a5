"""The registry: the sessions and agents in memory, behind which the `Store` keeps them
(docs/architecture.md §2, §5).

Everything here is synchronous and runs on the daemon's one event loop, so no locking is needed.
A change of state is one unit of work (`mutate`): the room check, the change in memory, one
transaction naming what changed, and after a failed write the re-read of exactly that
(`resync`), at once or, when the database was busy, before the session is next served
(`stale`). The services change state only that way; they never see the store.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from postcompact import core
from postcompact.config import Config
from postcompact.errors import (
    Aborted,
    InvalidArgument,
    NotFound,
    ResourceExhausted,
    Unavailable,
)
from postcompact.paths import now_ms
from postcompact.state.model import MAX_ID_LEN, AgentState, Session
from postcompact.state.null import NullStore
from postcompact.state.store import ROW_BYTES, SessionQuarantined, Store, Written
from postcompact.state.unit import Unit

REMEMBER_EXPIRED = 1024  # expired (quarantined) ids remembered for a clearer NOT_FOUND message

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
        # Session id -> why its calls answer NOT_FOUND `SESSION_QUARANTINED` (see `_reread`).
        self.quarantined: OrderedDict[str, str] = OrderedDict()
        # Session id -> the agents (None: all) a failed write left in memory that could not be
        # re-read then (the database busy or failing): re-read before the session is served.
        self.stale: dict[str, set[str] | None] = {}
        self.resyncs = 0
        self.store.on_failed_write = self.resync

    def load(self) -> None:
        """Re-create the sessions kept by the store (start-up)."""
        for s in self.store.load(self.new_cache):
            s.daemon_templates = self.config.templates_spec
            self.sessions[s.session_id] = s

    # --- the unit of work -------------------------------------------------------------------

    def mutate(
        self, s: Session, a: AgentState | None = None, *, room: int | None = ROW_BYTES
    ) -> Unit:
        """One unit of work on `s` (and its agent `a`): see `Unit`."""
        return Unit(self.store, s, a, room)

    @property
    def keeps_digests(self) -> bool:
        """Whether what a call reads should be hashed with the read (the store keeps digests)."""
        return self.store.keeps_digests

    def flush_activity(self, sessions: Iterable[Session] | None = None) -> None:
        """Store the activity time of sessions read-only calls touched (all: None)."""
        self.store.flush_activity(list(self.sessions.values()) if sessions is None else sessions)

    def maintain(self) -> None:
        """The periodic sweep's store work: activity times, the disk reserve."""
        self.flush_activity()
        self.store.restore_reserve()

    def resync(self, written: set[Written], busy: bool = False) -> None:
        """After a failed write: what it wrote becomes in memory what the database holds.

        The call that failed had changed memory first; without this, a later call would see its
        change (a ReadFile retried after a failed one answered "unchanged", a refused skill
        restored at Compact) although the client was told it failed and a restart would not
        have it. `written` holds (session id, agent id) for an agent's state and (session id,
        None) for the session's own. Agents are updated in place, since calls awaiting a read
        hold them; an agent or session that is not stored leaves memory. File contents are
        re-read and verified as at start-up.

        `busy`: the write failed because a lock held elsewhere was not granted in time; a read
        now would wait as long again, so the session is marked `stale`, as when the re-read
        fails: the next call naming it re-reads first (and answers the store's error, STATE_BUSY,
        while it cannot), so no call is served from what the database refused.
        """
        by_session: dict[str, set[str | None]] = {}
        for sid, aid in written:
            by_session.setdefault(sid, set()).add(aid)
        for sid, parts in sorted(by_session.items()):
            self.resyncs += 1
            s = self.sessions.get(sid)
            agents = None if s is None else {p for p in parts if p is not None}
            if busy:
                if s is not None:  # (one not in memory is read when named, if stored)
                    self._mark_stale(sid, agents)
                log.warning("the state database was busy: session %s re-read when next used", sid)
                continue
            try:
                fresh = self._reread(sid, agents)
            except Exception:
                log.exception("re-reading session %s after a failed write failed", sid)
                if self.sessions.get(sid) is not None:  # read again when next named
                    self._mark_stale(sid, agents)
                continue
            log.warning(
                "a write failed: %s re-read from the state database",
                f"session {sid}"
                if fresh is None or agents is None
                else f"session {sid} (agents {sorted(agents)})",
            )

    def _mark_stale(self, sid: str, agents: set[str] | None) -> None:
        if sid in self.stale:
            had = self.stale[sid]
            agents = None if had is None or agents is None else had | agents
        self.stale[sid] = agents

    def _reread(self, sid: str, agents: set[str] | None) -> Session | None:
        """The session as stored becomes what memory holds: only `agents` of it (None: all,
        and the session's own), updated in place; None when it is not stored (then it leaves),
        or when its row could not be used (quarantined by the store: its calls then answer
        NOT_FOUND `SESSION_QUARANTINED`, as for an expired one). The store's error (STATE_BUSY,
        STATE_READ_FAILED) when it cannot be read now; memory is left as it was then."""
        s = self.sessions.get(sid)
        try:
            fresh = self.store.load_session(sid, self.new_cache, agents)
        except SessionQuarantined as exc:
            log.warning("session %s left memory: its stored row was quarantined", sid)
            self.quarantined[sid] = exc.message  # (the error's frames are not kept)
            while len(self.quarantined) > REMEMBER_EXPIRED:
                self.quarantined.popitem(last=False)
            fresh = None
        if agents is None or fresh is None:
            self.stale.pop(sid, None)  # all of it read
        if fresh is None:
            self.sessions.pop(sid, None)
        elif s is None:
            fresh.daemon_templates = self.config.templates_spec
            self.sessions[sid] = fresh
        else:
            s.tasks, s.last_active_ms = fresh.tasks, fresh.last_active_ms
            for aid in set(s.agents) | set(fresh.agents) if agents is None else agents:
                stored, a = fresh.agents.get(aid), s.agents.get(aid)
                if stored is None:
                    s.agents.pop(aid, None)
                elif a is None:
                    s.agents[aid] = stored
                else:
                    a.assign(stored)
        return fresh

    def refresh(self, session_id: str) -> None:
        """Before a session is opened: with a shared store, one another daemon changed since
        this one read it, or that only the database holds, is read from the database (whole);
        one closed there leaves memory (docs/fleet.md, "Resuming elsewhere"). A `stale` one is
        re-read (what a failed write left)."""
        if not self.store.shared or not self.store.changed_elsewhere(session_id):
            if session_id in self.stale and session_id in self.sessions:
                self._reread(session_id, self.stale[session_id])
                self.stale.pop(session_id, None)
            return
        if session_id not in self.sessions:
            self.check_capacity()
        if self._reread(session_id, None) is not None:
            self.expired.pop(session_id, None)
            log.info("session %s re-read: another daemon changed it", session_id)

    # --- sessions ---------------------------------------------------------------------------

    def check_capacity(self) -> None:
        """TOO_MANY_SESSIONS when the daemon holds limits.max_sessions already."""
        if len(self.sessions) >= self.config.max_sessions:
            raise _too_many_sessions(self.config.max_sessions)

    def add(self, s: Session, *, room: int) -> None:
        """Register the new session `s`, its row written first (`room`: the bytes it takes)."""
        self.check_capacity()
        s.daemon_templates = self.config.templates_spec
        with self.mutate(s, room=room) as change:
            change.session = True
        self.sessions[s.session_id] = s
        self.expired.pop(s.session_id, None)
        self.quarantined.pop(s.session_id, None)

    def resume(self, s: Session) -> None:
        """`s` is in use again (an OpenSession of an open session): its activity time stored."""
        s.last_active_ms = now_ms()
        self.store.flush_activity((s,))

    def adopt(self, s: Session) -> None:
        """Register `s`, built elsewhere (an import), and write all of it in one transaction:
        its row, its agents with their files, skills and catalogues, its tasks."""
        self.check_capacity()
        if len(s.agents) > self.config.max_agents_per_session:
            raise ResourceExhausted(
                "TOO_MANY_AGENTS",
                f"the transcript has {len(s.agents)} agents, over "
                f"limits.max_agents_per_session ({self.config.max_agents_per_session})",
                {"limit": "max_agents_per_session"},
            )
        s.daemon_templates = self.config.templates_spec
        rows = sum(len(a.files) + len(a.skills) + 2 for a in s.agents.values()) + len(s.tasks)
        self.store.check_room(ROW_BYTES * (rows + 1))
        self.sessions[s.session_id] = s
        try:
            self.store.write_session(s)
        except BaseException:
            if self.sessions.get(s.session_id) is s:
                del self.sessions[s.session_id]
                self.stale.pop(s.session_id, None)
            raise
        self.expired.pop(s.session_id, None)
        self.quarantined.pop(s.session_id, None)

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

    def end_agent(self, s: Session, a: AgentState) -> None:
        """Forget the sub-agent `a` of `s`: its rows first, then memory."""
        self.store.delete_agent(s, a.agent_id)
        self.evictions_of_closed += a.files.evictions
        if s.agents.get(a.agent_id) is a:
            del s.agents[a.agent_id]

    def _drop(self, s: Session) -> None:
        self.store.delete_session(s.session_id)
        for a in s.agents.values():
            self.evictions_of_closed += a.files.evictions
        del self.sessions[s.session_id]
        self.stale.pop(s.session_id, None)

    def expire_idle(self, now: int | None = None) -> list[str]:
        """Remove sessions idle longer than limits.session_ttl_s (memory and disk)."""
        ttl_ms = int(self.config.session_ttl_s * 1000)
        if ttl_ms <= 0:
            return []
        now = now_ms() if now is None else now
        idle = [s for s in self.sessions.values() if now - s.last_active_ms > ttl_ms]
        gone: list[str] = []
        for s in idle:
            try:
                self._drop(s)
            except Aborted:  # used through another daemon meanwhile (a shared store): re-read
                continue
            except Unavailable:  # the database busy or failing: the next sweep tries again
                continue
            gone.append(s.session_id)
            self.expired[s.session_id] = now
            while len(self.expired) > REMEMBER_EXPIRED:
                self.expired.popitem(last=False)
        return gone

    def session(self, session_id: str) -> Session:
        s = self.sessions.get(session_id)
        if s is not None and session_id in self.stale:  # a failed write's state re-read first
            self.refresh(session_id)
            s = self.sessions.get(session_id)
        if s is None:  # a registered id was checked when it was opened
            check_id("session", session_id)
        if s is None and self.store.shared:  # made, or resumed, through another daemon
            self.refresh(session_id)
            s = self.sessions.get(session_id)
        if s is None and session_id in self.quarantined:
            raise NotFound(
                "SESSION_QUARANTINED",
                self.quarantined[session_id],
                {"session_id": session_id},
            )
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
        a = s.agents.get(agent_id)
        if a is None:
            check_id("agent", agent_id, allow_empty=True)  # a registered id was checked
            raise NotFound(
                "AGENT_NOT_FOUND",
                f"unknown agent {agent_id!r} in session {session_id!r}; start it with StartAgent",
                {"session_id": session_id, "agent_id": agent_id},
            )
        return s, a


def _too_many_sessions(limit: int) -> ResourceExhausted:
    return ResourceExhausted(
        "TOO_MANY_SESSIONS",
        f"the daemon holds {limit} sessions (limits.max_sessions); close some with CloseSession",
        {"limit": "max_sessions"},
    )
