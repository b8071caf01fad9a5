"""The asyncio client (grpc.aio), and the source of the synchronous one.

`_client.py` is generated from this file by scripts/unasync.py (`make unasync`; CI fails when it
is stale): edit here. Write plain `await` expressions (no `(await x).y`: bind a name first).

Every method returns the typed values of `postcompact_client.types` (converted from the answer
with `X.from_pb`), except `call()`, which answers the raw protobuf message.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from postcompact_client import _requests as rq
from postcompact_client import types
from postcompact_client._autostart import (
    DEFAULT_AUTO_START,
    AutoStartPolicy,
    Spawned,
    Starter,
    spawn_daemon,
)
from postcompact_client._channel import CHANNEL_OPTIONS
from postcompact_client._discovery import Target, resolve
from postcompact_client._errors import DaemonStartFailed, DaemonUnavailable, PostcompactError
from postcompact_client._retry import (
    DEFAULT_RETRY,
    Attempts,
    RetryPolicy,
    is_idempotent,
    not_sent,
)
from postcompact_client.v1 import postcompact_pb2 as pb
from postcompact_client.v1 import postcompact_pb2_grpc as pb_grpc


class AsyncClient:
    """A connection to the daemon, for asyncio code: create it inside a running event loop.

    `address`: `unix:///path`, a socket path or `127.0.0.1:PORT`; default: discovery
    (POSTCOMPACT_ADDRESS, server.json, the default socket). `auto_start` (default: on unless the
    address was given explicitly) spawns `postcompact serve --detached` whenever a call finds no
    daemon, over the client's whole life, within `auto_start_policy` (default: at most 3 starts
    a minute, a back-off of 1 s after each, doubling after each failed one up to 30 s); a daemon
    that cannot start fails the call at once with DaemonStartFailed and its first error line.
    `retry` bounds how idempotent calls are retried while the daemon restarts (default: about
    10 s of exponential backoff, then DaemonUnavailable; `RetryPolicy.none()` turns it off).
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        token: str | None = None,
        auto_start: bool | None = None,
        timeout: float | None = 30.0,
        start_timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        auto_start_policy: AutoStartPolicy | None = None,
    ):
        self.target: Target = resolve(address, token)
        self.retry = DEFAULT_RETRY if retry is None else retry
        self.auto_start = (not self.target.explicit) if auto_start is None else auto_start
        self.timeout = timeout
        self.start_timeout = start_timeout
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {self.target.token}"),) if self.target.token else ()
        )
        self._channel = grpc.aio.insecure_channel(self.target.address, options=CHANNEL_OPTIONS)
        self.stub = pb_grpc.PostcompactServiceStub(self._channel)
        self._health = health_pb2_grpc.HealthStub(self._channel)
        self._starter = Starter(auto_start_policy or DEFAULT_AUTO_START)

    # --- plumbing ---------------------------------------------------------------------------
    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        # The address and how it starts the daemon: never the token (target.token, the call
        # metadata) nor anything of the environment (docs/clients.md, "Printing a client").
        return f"AsyncClient(address={self.target.address!r}, auto_start={self.auto_start!r})"

    async def call(self, method: str, request: Any, *, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        """Call any RPC by name (e.g. "ReadFile") with its protobuf request; answers the raw
        protobuf response (`types.ReadFileResponse.from_pb(resp)` types it, as the named
        methods do). Errors become PostcompactError. A transport failure is retried within
        `self.retry` when that is safe (`_retry.is_idempotent`)."""
        fn = getattr(self.stub, method)
        t = self.timeout if timeout is None else timeout
        attempts = Attempts(self.retry, self.target.address, method, request, self._start_note)
        while True:
            try:
                return await fn(request, timeout=t, metadata=self._metadata)
            except grpc.aio.AioRpcError as err:
                failure = PostcompactError.from_rpc_error(err)
            # No daemon (UNAVAILABLE without a daemon's reason): start it, within the policy.
            if (
                failure.code == grpc.StatusCode.UNAVAILABLE
                and not failure.reason
                and self.auto_start
                and await self._auto_start()
                # Re-send at once only what cannot be applied twice: an idempotent call, or one
                # that never reached a daemon. Any other may have been applied before the
                # connection broke: after_failure reports it as not retried, as without auto-start.
                and (is_idempotent(method, request) or not_sent(failure.message))
            ):
                continue
            await asyncio.sleep(attempts.after_failure(failure))

    def _start_note(self) -> str:
        """Why auto-start has not started the daemon ("" when off, or when it would now)."""
        return self._starter.why_not() if self.auto_start else ""

    async def _auto_start(self) -> bool:
        """Start the daemon if the auto-start policy allows it now, or wait for the start
        another call is making. True when a daemon serves after it; False when no start was
        made (the caller's retry policy goes on, and asks again at its next failure)."""
        decision = self._starter.begin()
        if decision == Starter.DEFER:
            return False
        if decision == Starter.JOIN:
            try:
                await self.wait_for_health(self.start_timeout)
            except DaemonUnavailable:
                return False
            return True
        try:
            await self.start_daemon()
        except DaemonUnavailable as exc:
            self._starter.end(exc.message)
            raise
        except BaseException:
            self._starter.end("interrupted")
            raise
        self._starter.end()
        return True

    async def health(self, service: str = "", timeout: float = 1.0) -> bool:  # noqa: ASYNC109
        """True when the daemon answers SERVING."""
        try:
            resp = await self._health.Check(
                health_pb2.HealthCheckRequest(service=service),
                timeout=timeout,
                metadata=self._metadata,
            )
        except grpc.aio.AioRpcError:
            return False
        return bool(resp.status == health_pb2.HealthCheckResponse.SERVING)

    async def wait_for_health(self, timeout: float = 10.0) -> None:  # noqa: ASYNC109
        deadline = time.monotonic() + timeout
        delay = 0.05
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DaemonUnavailable(
                    f"the postcompact daemon at {self.target.address} "
                    f"is not SERVING after {timeout:g}s"
                )
            try:
                resp = await self._health.Check(
                    health_pb2.HealthCheckRequest(),
                    timeout=min(1.0, remaining),
                    wait_for_ready=True,
                    metadata=self._metadata,
                )
                if resp.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            delay = min(delay * 2, 0.5)

    async def start_daemon(self) -> None:
        """Spawn the daemon (on this client's socket) unless one answers health, and wait until
        it is SERVING: DaemonStartFailed, with its exit status and first error line, as soon as
        it exits before serving (another daemon winning the race is waited for), or when it has
        not reported SERVING within `start_timeout`."""
        if self.target.is_tcp:
            raise DaemonUnavailable(f"no daemon at {self.target.address} (TCP: not auto-started)")
        if await self.health(timeout=0.5):
            return
        child = spawn_daemon(self.target.socket_path)
        self._starter.spawned()
        try:
            await self._wait_started(child)
        finally:
            child.close()

    async def _wait_started(self, child: Spawned) -> None:
        deadline = time.monotonic() + self.start_timeout
        delay = 0.02
        while True:
            remaining = deadline - time.monotonic()
            try:
                resp = await self._health.Check(
                    health_pb2.HealthCheckRequest(),
                    timeout=max(0.05, min(0.25, remaining)),
                    wait_for_ready=True,
                    metadata=self._metadata,
                )
                if resp.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            status = child.exited()
            if status is not None:
                raise DaemonStartFailed(child.describe_exit(status))
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                said = child.said()
                raise DaemonStartFailed(
                    f"started the postcompact daemon (pid {child.proc.pid}) but it did not "
                    f"report SERVING at {self.target.address} within {self.start_timeout:g}s"
                    + (f" (it said: {said})" if said else "")
                )
            await asyncio.sleep(min(delay, remaining))
            delay = min(delay * 2, 0.1)

    # --- server -----------------------------------------------------------------------------
    async def server_info(self) -> types.GetServerInfoResponse:
        r: pb.GetServerInfoResponse = await self.call("GetServerInfo", pb.GetServerInfoRequest())
        return types.GetServerInfoResponse.from_pb(r)

    async def stats(self) -> types.GetStatsResponse:
        r: pb.GetStatsResponse = await self.call("GetStats", pb.GetStatsRequest())
        return types.GetStatsResponse.from_pb(r)

    # --- sessions ---------------------------------------------------------------------------
    async def open_session(
        self,
        cwd: str,
        *,
        session_id: str = "",
        roots: Sequence[str] = (),
        memory_file_names: Sequence[str] = (),
        memory_paths: Sequence[str] = (),
        plans_directory: str = "",
        policy: rq.PolicyArg = None,
        profile: types.Profile | str | int | None = None,
        home: str = "",
        templates: rq.TemplatesArg | None = None,
    ) -> AsyncSession:
        """Open (or resume) a session. `templates`: its wording, over the daemon's
        `[templates]`: `{"preset": "neutral"}` and/or templates by name (`read_tool_name`,
        `read_path_key`, `read_call`...; docs/profiles.md), or a `types.TemplateSpec`."""
        req = rq.open_session(
            cwd,
            session_id=session_id,
            roots=roots,
            memory_file_names=memory_file_names,
            memory_paths=memory_paths,
            plans_directory=plans_directory,
            policy_=policy,
            profile_=profile,
            home=home,
            templates=templates,
        )
        resp: pb.OpenSessionResponse = await self.call("OpenSession", req)
        return AsyncSession._opened(self, resp)

    async def attach_session(self, session_id: str) -> AsyncSession:
        """Join the existing session `session_id` as it is, without restating its settings (its
        cwd, roots, policy... are the session's); NOT_FOUND `SESSION_NOT_FOUND` when there is
        none. `open_session` with the id and settings that differ is refused instead
        (`SESSION_SETTINGS_MISMATCH`): settings are never silently dropped."""
        req = pb.OpenSessionRequest(session_id=session_id)
        resp: pb.OpenSessionResponse = await self.call("OpenSession", req)
        return AsyncSession._opened(self, resp)

    def session(self, session_id: str, agent_id: str = "") -> AsyncSession:
        """A handle on an existing session (no RPC)."""
        return AsyncSession(self, session_id, agent_id)

    async def list_sessions(self) -> list[types.SessionInfo]:
        """Every session, in id order (all pages of ListSessions)."""
        out: list[types.SessionInfo] = []
        token = ""
        while True:
            page = await self.list_sessions_page(page_token=token)
            out.extend(page.sessions)
            token = page.next_page_token
            if not token:
                return out

    async def list_sessions_page(
        self, *, page_size: int = 0, page_token: str = ""
    ) -> types.ListSessionsResponse:
        """One page of sessions (`page_size` 0: the daemon's default, 100)."""
        req = pb.ListSessionsRequest(page_size=page_size, page_token=page_token)
        resp: pb.ListSessionsResponse = await self.call("ListSessions", req)
        return types.ListSessionsResponse.from_pb(resp)

    # --- transcripts ------------------------------------------------------------------------
    async def import_transcript(
        self,
        transcript: rq.Text,
        *,
        cwd: str,
        session_id: str = "",
        path_map: Mapping[str, str] | None = None,
        profile: types.Profile | str | int | None = None,
        policy: rq.PolicyArg = None,
        home: str = "",
        replace: bool = False,
        file_mtimes: bool = False,
    ) -> types.ImportTranscriptResponse:
        """Build a session on the daemon from a Claude Code transcript (the JSONL bytes): its
        reads, edits, skills, plan, tasks and catalogue, each compaction replayed. `cwd` is
        where the transcript's working directory is here; `path_map` maps further transcript
        prefixes to local directories. The session is `session_id` (default: the
        transcript's own); `replace` imports over an existing one. `file_mtimes` stamps reads
        and writes with the files' mtimes here (as a running Claude Code does), not the
        records' times."""
        req = rq.import_transcript(
            transcript,
            cwd=cwd,
            session_id=session_id,
            path_map=path_map,
            profile_=profile,
            policy_=policy,
            home=home,
            replace=replace,
            file_mtimes=file_mtimes,
        )
        resp: pb.ImportTranscriptResponse = await self.call("ImportTranscript", req)
        return types.ImportTranscriptResponse.from_pb(resp)

    # --- tokens -----------------------------------------------------------------------------
    async def estimate_tokens(self, text: rq.Text, ext: str = "") -> int:
        resp = await self.call(
            "EstimateTokens", pb.EstimateTokensRequest(text=rq.as_bytes(text), ext=ext)
        )
        return int(resp.tokens)

    async def estimate_tokens_batch(self, texts: Iterable[rq.Text], ext: str = "") -> list[int]:
        req = pb.EstimateTokensBatchRequest(texts=[rq.as_bytes(t) for t in texts], ext=ext)
        resp = await self.call("EstimateTokensBatch", req)
        return list(resp.tokens)

    async def count_tokens(self, text: rq.Text, encoding: str = "") -> int:
        resp = await self.call(
            "CountTokens", pb.CountTokensRequest(text=rq.as_bytes(text), encoding=encoding)
        )
        return int(resp.tokens)

    async def count_tokens_batch(self, texts: Iterable[rq.Text], encoding: str = "") -> list[int]:
        req = pb.CountTokensBatchRequest(texts=[rq.as_bytes(t) for t in texts], encoding=encoding)
        resp = await self.call("CountTokensBatch", req)
        return list(resp.tokens)

    async def truncate_tokens(
        self,
        text: rq.Text,
        max_tokens: int,
        marker: str = "",
        *,
        counter: types.TokenCounter | str | int | None = None,
        encoding: str = "",
    ) -> types.TruncateTokensResponse:
        req = pb.TruncateTokensRequest(
            text=rq.as_bytes(text),
            max_tokens=max_tokens,
            marker=marker,
            counter=rq._enum(pb.TokenCounter, "TOKEN_COUNTER_", counter),
            encoding=encoding,
        )
        r: pb.TruncateTokensResponse = await self.call("TruncateTokens", req)
        return types.TruncateTokensResponse.from_pb(r)

    async def truncate_tokens_batch(
        self,
        texts: Iterable[rq.Text],
        max_tokens: int,
        marker: str = "",
        *,
        counter: types.TokenCounter | str | int | None = None,
        encoding: str = "",
    ) -> list[types.TruncateTokensResponse]:
        req = pb.TruncateTokensBatchRequest(
            texts=[rq.as_bytes(t) for t in texts],
            max_tokens=max_tokens,
            marker=marker,
            counter=rq._enum(pb.TokenCounter, "TOKEN_COUNTER_", counter),
            encoding=encoding,
        )
        resp: pb.TruncateTokensBatchResponse = await self.call("TruncateTokensBatch", req)
        return [types.TruncateTokensResponse.from_pb(r) for r in resp.results]


class AsyncSession:
    """A session (and one agent in it: "" is the main thread) bound to its client."""

    def __init__(
        self,
        client: AsyncClient,
        session_id: str,
        agent_id: str = "",
        *,
        resumed: bool = False,
        info: types.SessionInfo | None = None,
    ):
        self.client = client
        self.session_id = session_id
        self.agent_id = agent_id
        self.resumed = resumed
        self.info = info  # the session as opened (OpenSession's answer); None for a bare handle

    @classmethod
    def _opened(cls, client: AsyncClient, resp: pb.OpenSessionResponse) -> AsyncSession:
        info = types.SessionInfo.from_pb(resp.session) if resp.HasField("session") else None
        return cls(client, resp.session_id, "", resumed=resp.resumed, info=info)

    def __repr__(self) -> str:
        return f"AsyncSession({self.session_id!r}, agent={self.agent_id!r})"

    def _ids(self) -> rq.Ids:
        return {"session_id": self.session_id, "agent_id": self.agent_id}

    def agent(self, agent_id: str) -> AsyncSession:
        """The same session seen as another (already started) agent."""
        return AsyncSession(self.client, self.session_id, agent_id)

    async def close(self) -> None:
        """Close what this handle stands for: the whole session for the main thread, only this
        agent (`end_agent`) for a sub-agent."""
        if self.agent_id:
            await self.end_agent()
            return
        await self.client.call("CloseSession", pb.CloseSessionRequest(session_id=self.session_id))

    async def end_agent(self) -> types.EndAgentResponse:
        """End this sub-agent: its file state, skills and catalogue are forgotten and its slot
        in the session (limits.max_agents_per_session) is free. The main thread cannot end
        (INVALID_ARGUMENT `MAIN_AGENT`): close the session."""
        r: pb.EndAgentResponse = await self.client.call(
            "EndAgent", pb.EndAgentRequest(**self._ids())
        )
        return types.EndAgentResponse.from_pb(r)

    async def start_agent(
        self, agent_id: str, mode: types.AgentMode | str | int | None = "fresh"
    ) -> AsyncSession:
        """Start a sub-agent of this agent: mode "fresh" (empty cache) or "clone_parent"."""
        await self.client.call(
            "StartAgent",
            pb.StartAgentRequest(
                session_id=self.session_id,
                agent_id=agent_id,
                parent_agent_id=self.agent_id,
                mode=rq.agent_mode(mode),
            ),
        )
        return self.agent(agent_id)

    async def merge_file_state(self, from_agent_id: str) -> types.MergeFileStateResponse:
        """Merge `from_agent_id`'s file state into this agent (strictly newer entries win)."""
        r: pb.MergeFileStateResponse = await self.client.call(
            "MergeFileState",
            pb.MergeFileStateRequest(
                session_id=self.session_id, from_agent_id=from_agent_id, into_agent_id=self.agent_id
            ),
        )
        return types.MergeFileStateResponse.from_pb(r)

    async def read_file(
        self, path: str, *, offset: int | None = None, limit: int | None = None
    ) -> types.ReadFileResponse:
        req = pb.ReadFileRequest(**self._ids(), path=path)
        if offset is not None:
            req.offset = offset
        if limit is not None:
            req.limit = limit
        r: pb.ReadFileResponse = await self.client.call("ReadFile", req)
        return types.ReadFileResponse.from_pb(r)

    async def record_read(
        self,
        path: str,
        content: rq.Text,
        *,
        timestamp_ms: int = 0,
        offset: int | None = None,
        limit: int | None = None,
        partial_view: bool = False,
        nested_memory: bool = False,
    ) -> str:
        req = pb.RecordReadRequest(
            **self._ids(),
            path=path,
            content=rq.as_bytes(content),
            timestamp_ms=timestamp_ms,
            partial_view=partial_view,
            nested_memory=nested_memory,
        )
        if offset is not None:
            req.offset = offset
        if limit is not None:
            req.limit = limit
        resp = await self.client.call("RecordRead", req)
        return str(resp.path)

    async def record_write(
        self,
        path: str,
        content: rq.Text,
        *,
        timestamp_ms: int = 0,
        if_entry_timestamp_ms: int | None = None,
        changed_lines: rq.ChangedLinesArg | None = None,
    ) -> str:
        """Record a write. `if_entry_timestamp_ms` (the `entry_timestamp_ms` of the CheckWrite
        that allowed it) records it only if no other read or write of the path was recorded
        since: FAILED_PRECONDITION `WRITE_CONFLICT` otherwise, and nothing changes.
        `changed_lines`: the lines of `content` the write added or changed, as (first, last)
        pairs (an Edit's hunks; empty: it only deleted lines); None: the daemon diffs `content`
        against what the agent held."""
        req = pb.RecordWriteRequest(
            **self._ids(), path=path, content=rq.as_bytes(content), timestamp_ms=timestamp_ms
        )
        if if_entry_timestamp_ms is not None:
            req.if_entry_timestamp_ms = if_entry_timestamp_ms
        if changed_lines is not None:
            req.changed_lines.CopyFrom(rq.changed_lines(changed_lines))
        resp = await self.client.call("RecordWrite", req)
        return str(resp.path)

    async def check_write(self, path: str) -> types.CheckWriteResponse:
        """Whether an Edit/Write of `path` may go ahead: `result` (a `types.WriteCheck`:
        ALLOWED, NOT_READ, MODIFIED), Claude Code's message and error code when not."""
        r: pb.CheckWriteResponse = await self.client.call(
            "CheckWrite", pb.CheckWriteRequest(**self._ids(), path=path)
        )
        return types.CheckWriteResponse.from_pb(r)

    async def check_stale(
        self, command: str = "", started_at_ms: int = 0
    ) -> types.CheckStaleResponse:
        r: pb.CheckStaleResponse = await self.client.call(
            "CheckStale",
            pb.CheckStaleRequest(**self._ids(), command=command, started_at_ms=started_at_ms),
        )
        return types.CheckStaleResponse.from_pb(r)

    async def record_skill(
        self, name: str, *, path: str = "", content: rq.Text = b"", invoked_at_ms: int = 0
    ) -> int:
        req = pb.RecordSkillRequest(
            **self._ids(),
            name=name,
            path=path,
            content=rq.as_bytes(content),
            invoked_at_ms=invoked_at_ms,
        )
        resp = await self.client.call("RecordSkill", req)
        return int(resp.skills)

    async def set_plan(self, plan_file_path: str) -> str:
        req = pb.SetPlanRequest(**self._ids(), plan_file_path=plan_file_path)
        resp = await self.client.call("SetPlan", req)
        return str(resp.plan_file_path)

    async def set_mode(self, mode: types.PermissionMode | str | int) -> None:
        await self.client.call(
            "SetMode", pb.SetModeRequest(**self._ids(), mode=rq.permission_mode(mode))
        )

    async def upsert_task(self, task: rq.TaskArg) -> None:
        """Add or replace a background task (by `task_id`): a `types.Task`, a `pb.Task`, or a
        mapping of its fields (`status` by member, int or name such as "running")."""
        await self.client.call(
            "UpsertTask", pb.UpsertTaskRequest(session_id=self.session_id, task=rq.task(task))
        )

    async def set_catalog(
        self,
        *,
        deferred_tools: Iterable[str] | None = None,
        agent_types: Iterable[rq.AgentTypeArg] | None = None,
        show_concurrency_note: bool = False,
        mcp_servers: rq.McpServersArg | None = None,
        skill_listing: Iterable[rq.SkillEntryArg] | None = None,
    ) -> list[types.Attachment]:
        """Set the parts of the catalogue given (a part left out is unchanged): the delta
        attachments to announce now, in Claude Code's order (`join` lays them out)."""
        req = rq.catalog(
            self.session_id,
            self.agent_id,
            deferred_tools=deferred_tools,
            agent_types=agent_types,
            show_concurrency_note=show_concurrency_note,
            mcp_servers=mcp_servers,
            skill_listing=skill_listing,
        )
        resp: pb.SetCatalogResponse = await self.client.call("SetCatalog", req)
        return [types.Attachment.from_pb(a) for a in resp.attachments]

    async def compact(
        self,
        *,
        kind: types.CompactKind | str | int | None = None,
        preserved_messages: Sequence[rq.MessageArg] = (),
        policy: rq.PolicyArg = None,
        additional_context: Sequence[str] = (),
        skip_hooks: bool = False,
        include_content: bool = False,
    ) -> types.CompactResponse:
        """Compact this agent: the attachments to inject (in order) and every decision.

        The text to inject is in the attachments' `blocks`, each placed (`placement`):
        `postcompact_client.join(response)` gives the user blocks and the system text as Claude
        Code lays them out. `include_content=True` also fills the raw copies
        (FileAttachment.content, PlanFileReference.plan_content, InvokedSkill.content), which
        are otherwise left empty: the same text is already inside the blocks.
        `preserved_messages` (PARTIAL): `types.ConversationMessage`s (which may hold the typed
        attachments of an earlier answer) or `pb.ConversationMessage`s.
        """
        req = rq.compact(
            self.session_id,
            self.agent_id,
            kind=kind,
            preserved_messages=preserved_messages,
            policy_=policy,
            additional_context=additional_context,
            skip_hooks=skip_hooks,
            include_content=include_content,
        )
        r: pb.CompactResponse = await self.client.call("Compact", req)
        return types.CompactResponse.from_pb(r)

    async def preview_compact(
        self,
        *,
        kind: types.CompactKind | str | int | None = None,
        preserved_messages: Sequence[rq.MessageArg] = (),
        policy: rq.PolicyArg = None,
        additional_context: Sequence[str] = (),
        skip_hooks: bool = False,
        include_content: bool = False,
    ) -> types.PreviewCompactResponse:
        """What Compact would return, changing nothing."""
        req = rq.compact(
            self.session_id,
            self.agent_id,
            kind=kind,
            preserved_messages=preserved_messages,
            policy_=policy,
            additional_context=additional_context,
            skip_hooks=skip_hooks,
            include_content=include_content,
        )
        r: pb.PreviewCompactResponse = await self.client.call("PreviewCompact", rq.preview(req))
        return types.PreviewCompactResponse.from_pb(r)
