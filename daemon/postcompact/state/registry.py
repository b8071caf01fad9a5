"""The registry: the sessions and agents in memory, behind which the `Store` keeps them
(docs/architecture.md §2, §5).

Memory changes on the daemon's one event loop, so it needs no locking; the store is called only
through the `StoreWorker`, off the loop, so a slow or locked database delays the calls that need
its rows and nothing else. A change of state is one unit of work (`mutate`): the room check, the
change in memory, one transaction naming what changed, and after a failed write the re-read of
exactly that (`resync`), at once or, when the database was busy, before the session is next
served (`stale`). The services change state only that way; they never see the store.

Sessions load on first use. Start-up reads nothing of them; a call naming a session that is not
in memory reads it from the store (its agents, files, skills, tasks; bad rows quarantined then).
Memory holds at most limits.max_sessions of them and limits.max_content_bytes of recorded
content: past either, the least recently used session no call is using leaves memory (evicted,
not deleted: the next call naming it reads it back). Without a store (`--no-persist`) nothing can
be read back, so nothing is evicted and the limits refuse instead. Expiry, ListSessions and
GetStats work from the store (docs/persistence.md).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable
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
from postcompact.state.store import ROW_BYTES, Change, SessionQuarantined, Store, Written
from postcompact.state.unit import Unit
from postcompact.state.worker import Failures, StoreWorker, T
from postcompact.v1 import postcompact_pb2 as pb

REMEMBER_EXPIRED = 1024  # expired (quarantined) ids remembered for a clearer NOT_FOUND message
EXPIRE_BATCH = 500  # sessions one sweep expires at most (the next sweep goes on)

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
    # The worker the store's calls run on; None: they run inline (tools, tests, benches).
    worker: StoreWorker | None = None

    def __post_init__(self) -> None:
        # Sessions in memory, the least recently used first.
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.started_at_ms = self.started_at_ms or now_ms()
        self.evictions_of_closed = 0
        self.evicted = 0  # sessions that left memory for room (and stayed stored)
        self.loaded = 0  # sessions read from the store
        self.expired: OrderedDict[str, int] = OrderedDict()  # session id -> expired at (ms)
        # Session id -> why its calls answer NOT_FOUND `SESSION_QUARANTINED` (see `_reread`).
        self.quarantined: OrderedDict[str, str] = OrderedDict()
        # Session id -> the agents (None: all) a failed write left in memory that could not be
        # re-read then (the database busy or failing): re-read before the session is served.
        self.stale: dict[str, set[str] | None] = {}
        self.resyncs = 0
        # Whether a call is using the session now (the servicer's agent locks): never evicted.
        self.pinned: Callable[[str], bool] = lambda sid: False
        self._loading: dict[str, asyncio.Event] = {}  # sessions being read from the store
        if self.worker is None:
            self.worker = StoreWorker([self.store], inline=True)
        self.worker.on_failures = self._on_failures

    @property
    def keeps_sessions(self) -> bool:
        """Whether sessions are stored, so that one can leave memory and be read back."""
        return self.store.where is not None

    @property
    def keeps_digests(self) -> bool:
        """Whether what a call reads should be hashed with the read (the store keeps digests)."""
        return self.store.keeps_digests

    async def call(self, sid: str | None, fn: Callable[[Store], T]) -> T:
        """`fn(store)` off the event loop, in order with the other calls of session `sid`."""
        assert self.worker is not None
        return await self.worker.call(sid, fn)

    # --- the unit of work -------------------------------------------------------------------

    def mutate(
        self, s: Session, a: AgentState | None = None, *, room: int | None = ROW_BYTES
    ) -> Unit:
        """One unit of work on `s` (and its agent `a`): see `Unit`."""
        return Unit(self, s, a, room)

    async def check_room(self, s: Session, extra: int) -> None:
        """RESOURCE_EXHAUSTED when the store has no room for about `extra` more bytes."""
        if not self.store.room_known(extra):
            await self.call(s.session_id, lambda st: st.check_room(extra))

    async def write(self, s: Session, a: AgentState | None, change: Change) -> None:
        """The unit's write: on the event loop where it cannot wait (`StoreWorker.call`)."""
        assert self.worker is not None
        await self.worker.call(
            s.session_id,
            lambda st: st.write(s, a, change),
            on_loop=lambda st: st.write_inline(s, a, change),
        )

    async def flush_activity(self, sessions: Iterable[Session] | None = None) -> None:
        """Store the activity time of sessions read-only calls touched (all: None)."""
        batch = list(self.sessions.values()) if sessions is None else list(sessions)
        if batch:
            await self.call(None, lambda st: st.flush_activity(batch))

    async def maintain(self) -> None:
        """The periodic sweep's store work: activity times, the disk reserve."""
        await self.flush_activity()
        await self.call(None, lambda st: st.restore_reserve())

    async def _on_failures(self, failures: Failures) -> None:
        for written, busy in failures:
            await self.resync(written, busy)

    async def resync(self, written: set[Written], busy: bool = False) -> None:
        """After a failed write: what it wrote becomes in memory what the database holds.

        The call that failed had changed memory first; without this, a later call would see its
        change (a ReadFile retried after a failed one answered "unchanged", a refused skill
        restored at Compact) although the client was told it failed and a restart would not
        have it. `written` holds (session id, agent id) for an agent's state and (session id,
        None) for the session's own. Agents are updated in place, since calls awaiting a read
        hold them; an agent or session that is not stored leaves memory. File contents are
        re-read and verified as at a first read.

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
            if s is not None:  # marked at once: no call is served from it until re-read
                self._mark_stale(sid, agents)
            if busy:
                log.warning("the state database was busy: session %s re-read when next used", sid)
                continue
            try:
                fresh = await self._reread(sid, agents)
            except Exception:
                log.exception("re-reading session %s after a failed write failed", sid)
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

    async def _reread(self, sid: str, agents: set[str] | None) -> Session | None:
        """The session as stored becomes what memory holds: only `agents` of it (None: all,
        and the session's own), updated in place; None when it is not stored (then it leaves),
        or when its row could not be used (quarantined by the store: its calls then answer
        NOT_FOUND `SESSION_QUARANTINED`, as for an expired one). The store's error (STATE_BUSY,
        STATE_READ_FAILED) when it cannot be read now; memory is left as it was then."""
        new_cache = self.new_cache
        try:
            fresh = await self.call(sid, lambda st: st.load_session(sid, new_cache, agents))
        except SessionQuarantined as exc:
            log.warning("session %s left memory: its stored row was quarantined", sid)
            self.quarantined[sid] = exc.message  # (the error's frames are not kept)
            while len(self.quarantined) > REMEMBER_EXPIRED:
                self.quarantined.popitem(last=False)
            fresh = None
        s = self.sessions.get(sid)  # (read again: the load awaited)
        if agents is None or fresh is None:
            self.stale.pop(sid, None)  # all of it read
        elif sid in self.stale and self.stale[sid] is not None:
            left = self.stale[sid] - agents  # type: ignore[operator]
            if left:
                self.stale[sid] = left
            else:
                del self.stale[sid]
        if fresh is None:
            self.sessions.pop(sid, None)
        elif s is None:
            fresh.daemon_templates = self.config.templates_spec
            self.sessions[sid] = fresh
            self.loaded += 1
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

    async def refresh(self, session_id: str) -> None:
        """Before a session is opened: with a shared store, one another daemon changed since
        this one read it is read from the database (whole); one closed there leaves memory
        (docs/fleet.md, "Resuming elsewhere"). A `stale` one is re-read (what a failed write
        left)."""
        if session_id in self.sessions and self.store.shared:
            changed = await self.call(session_id, lambda st: st.changed_elsewhere(session_id))
            if changed:
                if await self._reread(session_id, None) is not None:
                    self.expired.pop(session_id, None)
                    log.info("session %s re-read: another daemon changed it", session_id)
                return
        if session_id in self.stale and session_id in self.sessions:
            await self._reread(session_id, self.stale[session_id])

    # --- memory: loading and evicting ---------------------------------------------------------

    async def _load(self, sid: str) -> Session | None:
        """The session `sid` read from the store into memory (None: it is not stored). A call
        naming it while it is being read waits for that read, then reads it itself if the read
        left nothing (it failed, or the session left memory again)."""
        pending = self._loading.get(sid)
        while pending is not None:
            await pending.wait()
            held = self.sessions.get(sid)
            if held is not None:
                return held
            pending = self._loading.get(sid)
        if not self.keeps_sessions:
            return None
        done = self._loading[sid] = asyncio.Event()
        try:
            await self.make_room(keep=sid)
            fresh = await self._reread(sid, None)
            if fresh is not None and await self._expired_at_load(fresh):
                return None
            if fresh is not None:
                self.expired.pop(sid, None)
                log.debug(
                    "session read from the state database",
                    extra={"session_id": sid, "in_memory": len(self.sessions)},
                )
            return fresh
        finally:
            del self._loading[sid]
            done.set()

    async def _expired_at_load(self, s: Session) -> bool:
        """Whether `s`, just read, was idle past limits.session_ttl_s (the daemon was down, or
        the sweep had not reached it yet): then it expires now, as the sweep would have done."""
        ttl_ms = int(self.config.session_ttl_s * 1000)
        now = now_ms()
        if ttl_ms <= 0 or s.last_active_ms >= now - ttl_ms:
            return False
        sid, before = s.session_id, now - ttl_ms
        if not await self.call(sid, lambda st: st.expire_session(sid, before)):
            return False
        if self.sessions.get(sid) is s:
            del self.sessions[sid]
        self.expired[sid] = now
        while len(self.expired) > REMEMBER_EXPIRED:
            self.expired.popitem(last=False)
        return True

    async def make_room(self, keep: str | None = None) -> None:
        """Room for one more session in memory under limits.max_sessions: the least recently
        used sessions no call is using leave it (evicted, still stored). TOO_MANY_SESSIONS when
        none can (nothing stored: `--no-persist`, or every one in use)."""
        limit = self.config.max_sessions
        if len(self.sessions) < limit:
            return
        if self.keeps_sessions:
            for sid in list(self.sessions):
                if len(self.sessions) < limit:
                    break
                if sid != keep and not self.pinned(sid):
                    await self.evict(sid)
        if len(self.sessions) >= limit:
            raise _too_many_sessions(limit)

    async def evict(self, sid: str) -> None:
        """`sid` leaves memory, its activity time stored first; its rows stay."""
        s = self.sessions.pop(sid, None)
        if s is None:
            return
        self.stale.pop(sid, None)
        self.evicted += 1
        log.debug("session left memory (still stored)", extra={"session_id": sid})
        for a in s.agents.values():
            self.evictions_of_closed += a.files.evictions

        def leave(st: Store) -> None:
            st.flush_activity((s,))
            st.forget(sid)

        await self.call(sid, leave)

    # --- sessions ---------------------------------------------------------------------------

    async def add(self, s: Session, *, room: int) -> None:
        """Register the new session `s`, its row written first (`room`: the bytes it takes)."""
        await self.make_room()
        s.daemon_templates = self.config.templates_spec
        async with self.mutate(s, room=room) as change:
            change.session = True
        self.sessions[s.session_id] = s
        self.expired.pop(s.session_id, None)
        self.quarantined.pop(s.session_id, None)

    async def resume(self, s: Session) -> None:
        """`s` is in use again (an OpenSession of an open session): its activity time stored."""
        s.last_active_ms = now_ms()
        await self.call(s.session_id, lambda st: st.flush_activity((s,)))

    async def adopt(self, s: Session) -> None:
        """Register `s`, built elsewhere (an import), and write all of it in one transaction:
        its row, its agents with their files, skills and catalogues, its tasks."""
        if len(s.agents) > self.config.max_agents_per_session:
            raise ResourceExhausted(
                "TOO_MANY_AGENTS",
                f"the transcript has {len(s.agents)} agents, over "
                f"limits.max_agents_per_session ({self.config.max_agents_per_session})",
                {"limit": "max_agents_per_session"},
            )
        await self.make_room()
        s.daemon_templates = self.config.templates_spec
        rows = sum(len(a.files) + len(a.skills) + 2 for a in s.agents.values()) + len(s.tasks)
        await self.check_room(s, ROW_BYTES * (rows + 1))
        await self.call(s.session_id, lambda st: st.write_session(s))
        self.sessions[s.session_id] = s
        self.stale.pop(s.session_id, None)
        self.expired.pop(s.session_id, None)
        self.quarantined.pop(s.session_id, None)

    async def admit(
        self, size: int, what: str, *, released: int = 0, keep: Session | None = None
    ) -> None:
        """RESOURCE_EXHAUSTED `CONTENT_LIMIT` unless `size` more bytes of recorded content (less
        the `released` bytes the call replaces) keep the daemon within limits.max_content_bytes:
        the daemon-wide ceiling on what clients can make it hold (docs/reliability.md). Sessions
        no call is using leave memory first, the least recently used first (`keep` stays)."""
        cap = self.config.max_content_bytes

        def after() -> tuple[int, int]:
            held = core.held_bytes()
            return held, held + size - min(released, held)

        held, total = after()
        if total > cap and self.keeps_sessions:
            for sid in list(self.sessions):
                if total <= cap:
                    break
                if (keep is None or sid != keep.session_id) and not self.pinned(sid):
                    await self.evict(sid)
                    held, total = after()
        if total > cap:
            raise ResourceExhausted(
                "CONTENT_LIMIT",
                f"{what} would bring the recorded content the daemon holds to {total} bytes, over "
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

    async def close(self, session_id: str) -> None:
        s = await self.session(session_id)
        await self._drop(s)

    async def end_agent(self, s: Session, a: AgentState) -> None:
        """Forget the sub-agent `a` of `s`: its rows first, then memory."""
        aid = a.agent_id
        await self.call(s.session_id, lambda st: st.delete_agent(s, aid))
        self.evictions_of_closed += a.files.evictions
        if s.agents.get(aid) is a:
            del s.agents[aid]

    async def _drop(self, s: Session) -> None:
        sid = s.session_id
        await self.call(sid, lambda st: st.delete_session(sid))
        for a in s.agents.values():
            self.evictions_of_closed += a.files.evictions
        if self.sessions.get(sid) is s:
            del self.sessions[sid]
        self.stale.pop(sid, None)

    async def expire_idle(self, now: int | None = None) -> list[str]:
        """Remove sessions idle longer than limits.session_ttl_s, from the store (by its
        activity index; at most EXPIRE_BATCH a sweep) and from memory. A session some call is
        using, or that another daemon sharing the database used since, stays."""
        ttl_ms = int(self.config.session_ttl_s * 1000)
        if ttl_ms <= 0:
            return []
        now = now_ms() if now is None else now
        before = now - ttl_ms
        if not self.keeps_sessions:
            idle = [s for s in self.sessions.values() if s.last_active_ms < before]
            for s in idle:
                await self._drop(s)
            gone = [s.session_id for s in idle]
        else:
            await self.flush_activity()  # memory's activity times are the stored ones first
            gone = []
            ids = await self.call(None, lambda st: st.idle_sessions(before, EXPIRE_BATCH))
            for sid in ids:
                held = self.sessions.get(sid)
                if self.pinned(sid) or (held is not None and held.last_active_ms >= before):
                    continue
                try:
                    done = await self.call(sid, functools.partial(_expire, sid=sid, before=before))
                except (Aborted, Unavailable):  # the database busy or failing: the next sweep
                    continue
                if not done:
                    continue
                if held is not None and self.sessions.get(sid) is held:
                    del self.sessions[sid]
                    for a in held.agents.values():
                        self.evictions_of_closed += a.files.evictions
                self.stale.pop(sid, None)
                gone.append(sid)
        for sid in gone:
            self.expired[sid] = now
            while len(self.expired) > REMEMBER_EXPIRED:
                self.expired.popitem(last=False)
        return gone

    async def find(self, session_id: str) -> Session | None:
        """The session `session_id`, from memory or read from the store (None: not stored);
        a `stale` one re-read first."""
        s = self.sessions.get(session_id)
        if s is not None and session_id in self.stale:  # a failed write's state re-read first
            await self.refresh(session_id)
            s = self.sessions.get(session_id)
        if s is None:
            s = await self._load(session_id)
        if s is not None and self.sessions.get(session_id) is s:
            self.sessions.move_to_end(session_id)
        return s

    async def session(self, session_id: str) -> Session:
        s = self.sessions.get(session_id)
        if s is None:
            check_id("session", session_id)  # a registered id was checked when it was opened
        s = await self.find(session_id)
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

    async def agent(self, session_id: str, agent_id: str) -> tuple[Session, AgentState]:
        s = await self.session(session_id)
        a = s.agents.get(agent_id)
        if a is None:
            check_id("agent", agent_id, allow_empty=True)  # a registered id was checked
            raise NotFound(
                "AGENT_NOT_FOUND",
                f"unknown agent {agent_id!r} in session {session_id!r}; start it with StartAgent",
                {"session_id": session_id, "agent_id": agent_id},
            )
        return s, a

    # --- what is stored ----------------------------------------------------------------------

    async def stored_page(self, after: str | None, limit: int) -> list[pb.SessionInfo]:
        """Up to `limit` stored sessions in id order after `after` (ListSessions)."""
        return await self.call(None, lambda st: st.session_page(after, limit))

    async def stored_count(self) -> int:
        return await self.call(None, lambda st: st.count_sessions())

    async def stored_totals(self) -> tuple[int, int, int, int, int]:
        """(sessions, agents, file entries, their bytes, compactions) stored (GetStats)."""
        return await self.call(None, lambda st: st.totals())

    async def close_store(self) -> None:
        """At shutdown: activity times stored, then the connections closed."""
        await self.flush_activity()
        assert self.worker is not None
        await asyncio.to_thread(self.worker.close)


def _expire(store: Store, *, sid: str, before: int) -> bool:
    return store.expire_session(sid, before)


def _too_many_sessions(limit: int) -> ResourceExhausted:
    return ResourceExhausted(
        "TOO_MANY_SESSIONS",
        f"the daemon holds {limit} sessions (limits.max_sessions); close some with CloseSession",
        {"limit": "max_sessions"},
    )
