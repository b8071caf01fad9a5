"""The gRPC servicer and the daemon's assembly: handlers, health, reflection, listeners, lifecycle.

Handlers are built from the proto's service descriptor (not the generated `add_..._to_server`) so
that each one gets a lenient request deserializer (undecodable bytes become INVALID_ARGUMENT, see
errmap) and the one error-mapping wrapper.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from postcompact import API_VERSION, __version__, nativeserver, workers
from postcompact.admission import Admission, reserve_answer, reserved_answer
from postcompact.auth import TokenGate
from postcompact.config import Config, state_location
from postcompact.connections import listener_options, raise_descriptor_limit, watch_descriptors
from postcompact.errmap import UnknownMethods, guard, lenient_deserializer
from postcompact.errors import InvalidArgument
from postcompact.health import Health
from postcompact.lifecycle import (
    InstanceLock,
    LifecycleError,
    RuntimePaths,
    check_socket_path,
    create_token,
    ensure_socket_dir,
    loopback_host,
    remove_quietly,
    remove_socket,
    tcp_bind_address,
    write_server_json,
)
from postcompact.memtune import freeze_startup, tune_malloc
from postcompact.paths import now_ms
from postcompact.persist import open_store
from postcompact.restore.context import CompactContext
from postcompact.restore.hooks import HookSlots
from postcompact.restore.pipeline import run_compact
from postcompact.service.catalog import CatalogService
from postcompact.service.files import FileService
from postcompact.service.locks import AgentLocks
from postcompact.service.sessions import SessionService, session_info
from postcompact.service.tokens import TokenService
from postcompact.service.work import WorkService
from postcompact.settings import Settings
from postcompact.state import ROW_BYTES, Store
from postcompact.state.null import NullStore
from postcompact.state.registry import Registry
from postcompact.state.worker import StoreWorker
from postcompact.tcpfront import TcpFront
from postcompact.transcript import importer, parser_process, request
from postcompact.transcript.importer import import_transcript
from postcompact.v1 import postcompact_pb2 as pb

log = logging.getLogger("postcompact.server")

SERVICE_DESCRIPTOR = pb.DESCRIPTOR.services_by_name["PostcompactService"]
SERVICE_NAME = SERVICE_DESCRIPTOR.full_name
CAPABILITIES = (
    "sessions",
    "agents.fresh",
    "agents.clone_parent",
    "agents.merge",
    "agents.end",
    "files.read",
    "files.record",
    "files.check_write",
    "files.check_stale",
    "skills",
    "plan",
    "mode",
    "tasks",
    "catalog",
    "compact.full",
    "compact.partial",
    "compact.preview",
    "tokens.estimate",
    "tokens.count",
    "tokens.truncate",
    "transcripts.import",
    "profiles.claude_code_2_1_88",
    "placement",
    "health",
    "reflection",
    "error_info",
)

Ctx = grpc.aio.ServicerContext[Any, Any]
# An answer larger than this is serialised on a worker thread.
INLINE_ANSWER_BYTES = 1 << 20


# The kinds a request may name (`EnumTypeWrapper.values()` builds a list per call).
_COMPACT_KINDS = frozenset(pb.CompactKind.values())


class Servicer:
    """One async method per RPC; each only validates, delegates and builds the response."""

    def __init__(self, config: Config, registry: Registry, info: pb.GetServerInfoResponse):
        self.config = config
        self.settings = Settings.of(config)
        self.registry = registry
        self.info = info
        self.sessions = SessionService(registry, config)
        self.files = FileService(registry, config)
        self.work = WorkService(registry, config)
        self.catalog = CatalogService(registry, config)
        self.tokens = TokenService()
        self.locks = AgentLocks()  # Compact never interleaves with another change of its agent
        registry.pinned = self.locks.holds  # a session a call is using never leaves memory
        self.admission = Admission(config.max_calls_in_flight, config.max_answer_bytes_in_flight)
        self.hook_slots = HookSlots(config.max_hooks_running)

    # --- server ----------------------------------------------------------------------------
    async def GetServerInfo(
        self, req: pb.GetServerInfoRequest, ctx: Ctx
    ) -> pb.GetServerInfoResponse:
        return self.info

    async def GetStats(self, req: pb.GetStatsRequest, ctx: Ctx) -> pb.GetStatsResponse:
        stats = await self.sessions.stats()
        stats.calls_in_flight = self.admission.in_flight
        stats.answer_bytes_in_flight = self.admission.answer_bytes
        return stats

    # --- sessions --------------------------------------------------------------------------
    async def OpenSession(self, req: pb.OpenSessionRequest, ctx: Ctx) -> pb.OpenSessionResponse:
        s, resumed = await self.sessions.open(req)
        return pb.OpenSessionResponse(
            session_id=s.session_id, resumed=resumed, session=session_info(s)
        )

    async def CloseSession(self, req: pb.CloseSessionRequest, ctx: Ctx) -> pb.CloseSessionResponse:
        await self.registry.close(req.session_id)
        return pb.CloseSessionResponse()

    async def ListSessions(self, req: pb.ListSessionsRequest, ctx: Ctx) -> pb.ListSessionsResponse:
        return await self.sessions.list_page(req)

    # --- agents ----------------------------------------------------------------------------
    async def StartAgent(self, req: pb.StartAgentRequest, ctx: Ctx) -> pb.StartAgentResponse:
        a = await self.sessions.start_agent(req)
        return pb.StartAgentResponse(agent_id=a.agent_id, cached_entries=len(a.files))

    async def EndAgent(self, req: pb.EndAgentRequest, ctx: Ctx) -> pb.EndAgentResponse:
        return await self.sessions.end_agent(req)

    async def MergeFileState(
        self, req: pb.MergeFileStateRequest, ctx: Ctx
    ) -> pb.MergeFileStateResponse:
        merged, kept = await self.sessions.merge(req)
        return pb.MergeFileStateResponse(merged=merged, kept=kept)

    # --- files -----------------------------------------------------------------------------
    async def ReadFile(self, req: pb.ReadFileRequest, ctx: Ctx) -> bytes | pb.ReadFileResponse:
        return await self.files.read_file(req)

    async def RecordRead(self, req: pb.RecordReadRequest, ctx: Ctx) -> pb.RecordReadResponse:
        return await self.files.record_read(req)

    async def RecordWrite(self, req: pb.RecordWriteRequest, ctx: Ctx) -> pb.RecordWriteResponse:
        return await self.files.record_write(req)

    async def CheckWrite(self, req: pb.CheckWriteRequest, ctx: Ctx) -> pb.CheckWriteResponse:
        return await self.files.check_write(req)

    async def CheckStale(self, req: pb.CheckStaleRequest, ctx: Ctx) -> pb.CheckStaleResponse:
        return await self.files.check_stale(req)

    # --- skills, plan, mode, tasks ---------------------------------------------------------
    async def RecordSkill(self, req: pb.RecordSkillRequest, ctx: Ctx) -> pb.RecordSkillResponse:
        return await self.work.record_skill(req)

    async def SetPlan(self, req: pb.SetPlanRequest, ctx: Ctx) -> pb.SetPlanResponse:
        return await self.work.set_plan(req)

    async def SetMode(self, req: pb.SetModeRequest, ctx: Ctx) -> pb.SetModeResponse:
        return await self.work.set_mode(req)

    async def UpsertTask(self, req: pb.UpsertTaskRequest, ctx: Ctx) -> pb.UpsertTaskResponse:
        return await self.work.upsert_task(req)

    # --- catalogue and compaction (the restoration pipeline) ---------------------------------
    async def SetCatalog(self, req: pb.SetCatalogRequest, ctx: Ctx) -> pb.SetCatalogResponse:
        return await self.catalog.set_catalog(req)

    async def _compact(self, req: pb.CompactRequest, preview: bool) -> bytes:
        """The serialised answer of a Compact (or, the fields being the same, of a preview)."""
        s, a = await self.registry.agent(req.session_id, req.agent_id)
        if req.kind not in _COMPACT_KINDS:
            raise InvalidArgument("BAD_COMPACT_KIND", f"unknown compaction kind {req.kind}")
        policy = self.settings.resolve(s.profile, s.policy, req.policy)
        room = None if preview else ROW_BYTES * (len(a.files) + 1)
        async with self.registry.mutate(s, a, room=room) as change:
            ctx = CompactContext.of(
                s,
                req,
                policy=policy,
                hooks=self.settings.hooks,
                deny_globs=self.settings.deny_globs,
                hook_slots=self.hook_slots,
                carry_limit=a.files.max_entries,
                max_answer=self.config.max_message_bytes,
                hash_contents=self.registry.keeps_digests,
                preview=preview,
            )
            result = await run_compact(ctx, s, a, req)
            # The answer's bytes are held until the client has read them: reserved here, before
            # anything is applied, so that an answer refused OVERLOADED leaves nothing changed.
            reserve_answer(len(result.wire))
            # The pipeline awaited: apply only to what is still registered (a concurrent
            # CloseSession or expiry removed the session from memory and disk).
            if not preview and self.registry.live(s, a):
                result.apply(a, change)
        return result.wire

    async def Compact(self, req: pb.CompactRequest, ctx: Ctx) -> bytes:
        return await self._compact(req, preview=False)

    async def PreviewCompact(self, req: pb.PreviewCompactRequest, ctx: Ctx) -> bytes:
        # The two request/response pairs share field numbers and types (include_content and the
        # reserved rendered_text too): convert on the wire (the answer is a
        # PreviewCompactResponse as it stands).
        creq = pb.CompactRequest.FromString(req.SerializeToString())
        return await self._compact(creq, preview=True)

    # --- transcripts -----------------------------------------------------------------------
    async def ImportTranscript(
        self, req: request.TranscriptRequest, ctx: Ctx
    ) -> pb.ImportTranscriptResponse:
        return await import_transcript(
            self.registry,
            req.req,
            req.transcript,
            config_policy=self.settings.policy,
            deny_globs=self.settings.deny_globs,
            time_remaining=ctx.time_remaining(),
        )

    # --- tokens ----------------------------------------------------------------------------
    async def EstimateTokens(
        self, req: pb.EstimateTokensRequest, ctx: Ctx
    ) -> pb.EstimateTokensResponse:
        return await self.tokens.estimate(req)

    async def EstimateTokensBatch(
        self, req: pb.EstimateTokensBatchRequest, ctx: Ctx
    ) -> pb.EstimateTokensBatchResponse:
        return await self.tokens.estimate_batch(req)

    async def CountTokens(self, req: pb.CountTokensRequest, ctx: Ctx) -> pb.CountTokensResponse:
        return await self.tokens.count(req)

    async def CountTokensBatch(
        self, req: pb.CountTokensBatchRequest, ctx: Ctx
    ) -> pb.CountTokensBatchResponse:
        return await self.tokens.count_batch(req)

    async def TruncateTokens(
        self, req: pb.TruncateTokensRequest, ctx: Ctx
    ) -> pb.TruncateTokensResponse:
        return await self.tokens.truncate(req)

    async def TruncateTokensBatch(
        self, req: pb.TruncateTokensBatchRequest, ctx: Ctx
    ) -> pb.TruncateTokensBatchResponse:
        return await self.tokens.truncate_batch(req)


def _serialized(fn: Callable[[Any, Ctx], Awaitable[Any]]) -> Callable[[Any, Ctx], Awaitable[bytes]]:
    """The handler answering its response already serialised: the message itself is freed
    when the handler returns, rather than held by gRPC until the client has read the answer
    (one copy fewer per answer in flight; admission.py)."""

    async def handler(request: Any, context: Ctx) -> bytes:
        resp = await fn(request, context)
        if isinstance(resp, bytes):  # answered serialised already (Compact, ReadFile)
            return resp
        size = reserved_answer()  # the handlers of large answers measured theirs already
        if size is None:
            size = resp.ByteSize()
        if size > INLINE_ANSWER_BYTES:  # a large copy: between other calls' work
            data: bytes = await asyncio.to_thread(resp.SerializeToString)
        else:
            data = resp.SerializeToString()
        return data

    return handler


def generic_handler(servicer: Servicer) -> grpc.GenericRpcHandler:
    return grpc.method_handlers_generic_handler(SERVICE_NAME, method_handlers(servicer))


def method_handlers(servicer: Servicer) -> dict[str, grpc.RpcMethodHandler[Any, Any]]:
    """The service's handler of each method, from the proto's service descriptor."""
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for m in SERVICE_DESCRIPTOR.methods:
        req_cls = getattr(pb, m.input_type.name)
        fn: Callable[[Any, Ctx], Awaitable[Any]] = servicer.admission.wrap(
            m.name, servicer.locks.wrap(m.name, getattr(servicer, m.name))
        )
        limit = servicer.config.max_message_bytes
        deserialize = (
            _transcript_deserializer(limit)
            if m.name == "ImportTranscript"
            else lenient_deserializer(req_cls, limit)
        )
        handlers[m.name] = grpc.unary_unary_rpc_method_handler(
            guard(m.name, _serialized(fn)),
            request_deserializer=deserialize,
            response_serializer=None,  # the handler answers bytes
        )
    return handlers


def _transcript_deserializer(max_bytes: int) -> Callable[[bytes], Any]:
    """ImportTranscript's request with its transcript left in the bytes gRPC received
    (transcript/request.py: no copy of up to 32 MiB made while the GIL is held)."""
    plain = lenient_deserializer(pb.ImportTranscriptRequest, max_bytes)

    def deserialize(raw: bytes) -> Any:
        parts = request.split(raw) if len(raw) <= max_bytes else None
        if parts is None:
            return plain(raw)  # over the limit, or not well-formed: answered as any request
        rest, start, end = parts
        req = plain(rest)
        if not isinstance(req, pb.ImportTranscriptRequest):
            return req  # Undecodable
        return request.TranscriptRequest(req, memoryview(raw)[start:end])

    return deserialize


def server_options(config: Config) -> list[tuple[str, Any]]:
    # The transport accepts up to twice the limit (at least 4 MiB more) so that a request over
    # `max_message_bytes` gets postcompact's error naming the limit (errmap.Oversize); beyond that
    # gRPC itself refuses it, also with RESOURCE_EXHAUSTED.
    limit = config.max_message_bytes
    hard_cap = min(2**31 - 1, max(2 * limit, limit + 4 * 1024 * 1024))
    return [
        ("grpc.so_reuseport", 0),
        # Calls that arrived but were not handed to the server yet: past these gRPC cancels
        # them without a reason (defaults 1,000 and 3,000); admission answers the excess instead.
        ("grpc.server.max_pending_requests", 10_000),
        ("grpc.server.max_pending_requests_hard_limit", 20_000),
        ("grpc.max_receive_message_length", hard_cap),
        ("grpc.max_send_message_length", config.max_message_bytes),
    ]


class HandlerList:
    """Stands in for a server while the services register (the generated `add_..._to_server`
    calls): their handlers in order, for a listener to serve as they are or behind its token
    gate. A service's registered-method handlers become one more generic handler, so that none
    is looked up before the gate (grpc.aio looks registered methods up first)."""

    def __init__(self) -> None:
        self.handlers: list[grpc.GenericRpcHandler] = []

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        self.handlers.extend(handlers)

    def add_registered_method_handlers(
        self, service: str, handlers: Mapping[str, grpc.RpcMethodHandler[Any, Any]]
    ) -> None:
        self.handlers.append(grpc.method_handlers_generic_handler(service, dict(handlers)))


class Daemon:
    def __init__(
        self,
        config: Config,
        *,
        gc_frozen: int = 0,
        on_serving: Callable[[], object] | None = None,
    ):
        self.config = config
        # Called once the listeners and server.json are ready, just before health says SERVING
        # (cli.py `serve --detached`: stderr goes to the log file from then on).
        self.on_serving = on_serving
        self.gc_frozen = gc_frozen  # objects `serve` froze at start (memtune.freeze_startup)
        self.paths = RuntimePaths.for_socket(config.socket)
        self._created: list[Path] = []  # files of the runtime directory this run wrote
        self.stopping = asyncio.Event()
        self.health = Health()
        self.servers: list[grpc.aio.Server] = []
        self.tcp_port = 0
        self.front: TcpFront | None = None
        self.store: Store = NullStore()

    def _new_server(self, servicer: Servicer, token: str | None) -> grpc.aio.Server:
        """A server of every service: as they are on the Unix socket, behind the token gate for
        the TCP front (`token` given), which bounds its connections (tcpfront.py)."""
        tcp = token is not None
        options = server_options(self.config) + listener_options(tcp=tcp)
        if self.config.server_implementation == "native":
            return self._new_native_server(servicer, token, options)
        server = grpc.aio.server(options=options)
        services = HandlerList()
        services.add_generic_rpc_handlers((generic_handler(servicer),))
        health_pb2_grpc.add_HealthServicer_to_server(self.health, services)
        names = (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME)
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
            reflection.aio.ReflectionServicer(names), services
        )
        services.add_generic_rpc_handlers((UnknownMethods(),))  # last: what nothing else serves
        if token is None:
            server.add_generic_rpc_handlers(services.handlers)
        else:
            server.add_generic_rpc_handlers((TokenGate(token, services.handlers),))
        return server

    def _new_native_server(
        self, servicer: Servicer, token: str | None, options: list[tuple[str, Any]]
    ) -> grpc.aio.Server:
        """`_new_server` on pygrpc-native (nativeserver.py): the service and health registered
        method by method, served natively; reflection and unknown methods by its fallback."""
        reg = nativeserver.Registrations()
        reg.add_registered_method_handlers(SERVICE_NAME, method_handlers(servicer))
        health_pb2_grpc.add_HealthServicer_to_server(self.health, reg)
        names = (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME)
        fallback = HandlerList()
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
            reflection.aio.ReflectionServicer(names), fallback
        )
        fallback.add_generic_rpc_handlers((UnknownMethods(),))
        log.info(
            "native gRPC server",
            extra={"native_methods": len(nativeserver.native_paths(reg)), "tcp": token is not None},
        )
        return nativeserver.new_server(options, reg, fallback.handlers, token)

    async def run(self) -> int:
        workers.install(asyncio.get_running_loop())
        check_socket_path(self.paths.socket)
        ensure_socket_dir(self.paths.socket)
        lock = InstanceLock(self.paths.lock)
        lock.acquire()
        try:
            return await self._run_locked()
        finally:
            parser_process.close()  # ImportTranscript's parser processes, if any
            importer.shutdown()
            for path in self._created:  # only what this run wrote (a user's file stays)
                remove_quietly(path)
            with contextlib.suppress(LifecycleError):  # not a socket: it was never ours
                remove_socket(self.paths.socket)
            lock.release()

    async def _run_locked(self) -> int:
        cfg = self.config
        # We hold the lock, so a leftover socket is from a daemon that died: replace it (and
        # nothing else: remove_socket refuses a path that is not a socket).
        remove_socket(self.paths.socket)
        started = now_ms()
        self.store = open_store(
            persist=cfg.persist,
            socket=self.paths.socket,
            location=state_location(cfg),
            max_bytes=cfg.max_state_bytes,
            deny_globs=Settings.of(cfg).deny_globs,
        )
        try:
            stores = self.store.pool(cfg.state_pool_size)
        except BaseException:
            self.store.close()
            raise
        worker = StoreWorker(stores, inline=self.store.where is None)
        try:
            return await self._run_with_store(started, worker)
        finally:
            await asyncio.to_thread(worker.close)

    async def _sweep(self, registry: Registry) -> None:
        """Expire idle sessions (limits.session_ttl_s) and store read-only activity times."""
        while True:
            try:
                expired = await registry.expire_idle()
                if expired:
                    log.info("expired idle sessions", extra={"sessions": expired})
                await registry.maintain()
            except Exception:
                log.exception("session sweep failed")
            await asyncio.sleep(self.config.sweep_interval_s)

    async def _run_with_store(self, started: int, worker: StoreWorker) -> int:
        cfg = self.config
        descriptors, _hard = raise_descriptor_limit()
        # Nothing of the sessions is read here: each is read when a call first names it.
        registry = Registry(cfg, started_at_ms=started, store=self.store, worker=worker)
        if self.store.where is not None:
            log.info(
                "state database opened",
                extra={"state_db": self.store.where, "connections": worker.connections},
            )
        info = pb.GetServerInfoResponse(
            version=__version__,
            api_version=API_VERSION,
            capabilities=CAPABILITIES,
            pid=os.getpid(),
            socket_path=str(self.paths.socket),
            started_at_ms=started,
        )
        servicer = Servicer(cfg, registry, info)
        uds = self._new_server(servicer, None)
        old_umask = os.umask(0o177)
        try:
            uds.add_insecure_port(f"unix://{self.paths.socket}")
        finally:
            os.umask(old_umask)
        self.servers.append(uds)
        token_file: str | None = None
        token: str | None = None
        if cfg.tcp_port is not None:
            token = create_token(self.paths.token)
            self._created.append(self.paths.token)
            token_file = str(self.paths.token)
            # The gated server listens on a private Unix socket; the TCP port is the front's.
            check_socket_path(self.paths.tcp_socket)
            remove_socket(self.paths.tcp_socket)
            tcp = self._new_server(servicer, token)
            old_umask = os.umask(0o177)
            try:
                tcp.add_insecure_port(f"unix://{self.paths.tcp_socket}")
            finally:
                os.umask(old_umask)
            self._created.append(self.paths.tcp_socket)
            self.servers.append(tcp)
        for srv in self.servers:
            await srv.start()
        os.chmod(self.paths.socket, 0o600)
        if token is not None and cfg.tcp_port is not None:
            os.chmod(self.paths.tcp_socket, 0o600)
            self.front = TcpFront(token, self.paths.tcp_socket, cfg.max_tcp_connections)
            host = loopback_host(cfg.tcp_host)  # loopback only, or refused
            try:
                self.tcp_port = await self.front.start(host, cfg.tcp_port)
            except OSError as exc:
                await asyncio.gather(*(srv.stop(None) for srv in self.servers))
                bind = tcp_bind_address(host, cfg.tcp_port)
                raise LifecycleError(f"cannot listen on {bind} (in use?): {exc}") from None
            info.tcp_port = self.tcp_port
            info.tcp_address = tcp_bind_address(host, self.tcp_port)

        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stopping.set)
        self._created.append(self.paths.server_json)
        write_server_json(
            self.paths.server_json,
            {
                "pid": os.getpid(),
                "version": __version__,
                "api_version": API_VERSION,
                "socket": str(self.paths.socket),
                "address": f"unix://{self.paths.socket}",
                "tcp_port": self.tcp_port,
                "tcp_address": info.tcp_address or None,
                "token_file": token_file,
                "started_at_ms": started,
            },
        )
        if self.on_serving is not None:
            self.on_serving()
        await self.health.set("", health_pb2.HealthCheckResponse.SERVING)
        await self.health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
        log.info(
            "serving",
            extra={
                "socket": str(self.paths.socket),
                "tcp_port": self.tcp_port or None,
                "pid": os.getpid(),
                "version": __version__,
                "descriptors": descriptors,
                "gc_frozen": self.gc_frozen,
            },
        )
        sweeper = asyncio.create_task(self._sweep(registry))
        watcher = asyncio.create_task(watch_descriptors(descriptors))
        await self.stopping.wait()
        watcher.cancel()
        log.info("shutting down", extra={"grace_s": cfg.shutdown_grace_s})
        await self.health.enter_graceful_shutdown()
        if self.front is not None:
            self.front.stop_listening()  # open connections drain with the servers' grace
        await asyncio.gather(*(srv.stop(cfg.shutdown_grace_s) for srv in self.servers))
        if self.front is not None:
            self.front.close()
        sweeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeper
        try:
            await registry.flush_activity()
        except Exception:
            log.exception("storing the sessions' activity times at shutdown failed")
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(sig)
        log.info("stopped")
        return 0


def serve(config: Config, on_serving: Callable[[], object] | None = None) -> int:
    tune_malloc()  # large response buffers reused, not mmapped per call (memtune.py)
    frozen = freeze_startup()  # what imports made, out of the collector's full passes
    return asyncio.run(Daemon(config, gc_frozen=frozen, on_serving=on_serving).run())
