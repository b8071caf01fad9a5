import * as grpc from "@grpc/grpc-js";
import type { MethodDefinition } from "@grpc/proto-loader";
import type { PostcompactServiceDefinition } from "../gen/postcompact/v1/PostcompactService.js";
import { parseAddress, resolveAddress, resolveToken, type Env, type ResolvedAddress } from "./address.js";
import {
  LOCAL_CHANNEL_OPTIONS,
  HEALTH_SERVING,
  Starter,
  describeExit,
  healthCheck,
  spawnDaemon,
  waitForHealth,
  type AutoStartPolicy,
} from "./daemon.js";
import { ClientReason, PostcompactError } from "./errors.js";
import { encodeBytesFields, loadProto } from "./proto.js";
import { isIdempotent, isTransportFailure, notSent, withRetry, type RetryPolicy } from "./retry.js";
import { Session, importTranscriptRequest, type ImportTranscriptOptions, type OpenSessionOptions } from "./session.js";
import type * as T from "./types.js";
import { inspect, type InspectOptions } from "node:util";

// The generated definition extends grpc.ServiceDefinition (a string index signature): keep only
// the named methods.
type Def = { [K in keyof PostcompactServiceDefinition as string extends K ? never : K]: PostcompactServiceDefinition[K] };
/** Every RPC of postcompact.v1.PostcompactService, by its proto name ("ReadFile"). */
export type RpcMethod = keyof Def & string;
/** The request (input) type of an RPC: bytes fields take a string (UTF-8) or a Uint8Array. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type RequestOf<K extends RpcMethod> = Def[K] extends MethodDefinition<infer Req, any, any, any> ? Req : never;
/** The response type of an RPC, as decoded (every scalar present, enums as names, int64 as number). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ResponseOf<K extends RpcMethod> = Def[K] extends MethodDefinition<any, any, any, infer Res> ? Res : never;

/** Per-call options. */
export interface CallOptions {
  /** Deadline in milliseconds from now (default: the client's `timeoutMs`). */
  timeoutMs?: number;
  /** Extra metadata sent with the call. */
  metadata?: grpc.Metadata;
  /**
   * Cancels the call when it fires (before it was sent: it never is). The promise rejects with
   * CANCELLED, reason `ABORTED`, and the call is not retried. Whether the daemon applied a call
   * cancelled in flight is unknown, as for any cancelled RPC.
   */
  signal?: AbortSignal;
}

/** One promise-returning method per RPC, named in camelCase (`client.rpc.readFile(req)`). */
export type RawRpc = {
  [K in RpcMethod as Uncapitalize<K>]: (request: RequestOf<K>, options?: CallOptions) => Promise<ResponseOf<K>>;
};

export interface ClientOptions {
  /** The daemon's address (`unix:///abs/path`, an absolute socket path, or `host:port`). An
   * explicit address turns auto-start off unless `autoStart` is true. */
  address?: string;
  /** Start `postcompact serve --detached` whenever a call finds no daemon, over the client's
   * whole life, within `autoStartPolicy` (default: true, false with `address`). */
  autoStart?: boolean;
  /** How often auto-start may start the daemon (default: at most 3 starts a minute, 1 s after
   * each, doubling after each failed one up to 30 s). See docs/clients.md, "Auto-start". */
  autoStartPolicy?: AutoStartPolicy;
  /** How long to wait for the started daemon to report SERVING (default 10 000 ms). */
  startTimeoutMs?: number;
  /** The executable to start (default: `POSTCOMPACT_BIN`, else `postcompact` on PATH). */
  daemonBin?: string;
  /** Its arguments (default `["serve", "--detached"]`). */
  daemonArgs?: string[];
  /** The TCP token (default: `POSTCOMPACT_TOKEN`, server.json's `token_file`, then `D/token`). */
  token?: string;
  /** Default deadline of every call in ms (default 60 000). */
  timeoutMs?: number;
  /** The environment used for discovery (default `process.env`). */
  env?: Env;
  /** Extra grpc-js channel options. */
  channelOptions?: grpc.ChannelOptions;
  /** Retries of idempotent calls while the daemon restarts, and of any call it refused with a
   * RetryInfo (OVERLOADED) (default: about 10 s of exponential backoff, then DAEMON_UNAVAILABLE,
   * or the daemon's OVERLOADED; `NO_RETRY` turns it off). See docs/clients.md. */
  retry?: RetryPolicy;
}

const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

/**
 * One turn of the event loop, taken before each attempt of a call: what the connection already
 * received is processed first. A daemon that stopped while this process was busy (a blocked
 * event loop: a synchronous `postcompact stop && postcompact start`, long synchronous work) left
 * its GOAWAY and close unread; a call made right then was written on that dead connection (the
 * old daemon never saw it) and failed RESOURCE_EXHAUSTED "Bandwidth exhausted or memory limit
 * exceeded", grpc-js's name for the GOAWAY's code. After the turn the channel knows, and the call
 * goes to the new daemon.
 */
const ioTurn = (): Promise<void> =>
  // Two: the first ends the loop's current iteration (a call made from an I/O callback would
  // otherwise skip the poll phase), the second comes after the next poll phase has read the socket.
  new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

/**
 * A client of the postcompact daemon. Construction does no I/O; the first call connects (and,
 * with auto-start, starts the daemon when none answers). `close()` releases the channel.
 *
 * - `client.rpc.<method>(request)`: every RPC, typed from the proto.
 * - `client.openSession({cwd})`: the common flow through a `Session`.
 */
export class PostcompactClient {
  /** Every RPC as a promise-returning method. */
  readonly rpc: RawRpc;
  readonly autoStart: boolean;
  private readonly opts: ClientOptions;
  private readonly env: Env;
  private resolved: ResolvedAddress;
  private grpcClient: grpc.Client | undefined;
  private token: string | undefined;
  /** The start running, which calls failing meanwhile join. */
  private starting: Promise<void> | undefined;
  /** How often the daemon may be started (docs/clients.md, "Auto-start"). */
  private readonly starter: Starter;
  private closed = false;

  constructor(options: ClientOptions = {}) {
    this.opts = options;
    this.env = options.env ?? process.env;
    this.resolved = resolveAddress(options.address, this.env);
    this.autoStart = options.autoStart ?? !options.address;
    this.token = options.token;
    this.starter = new Starter(options.autoStartPolicy);
    const service = loadProto().proto.postcompact.v1.PostcompactService.service;
    const rpc: Record<string, unknown> = {};
    for (const name of Object.keys(service) as RpcMethod[]) {
      rpc[lowerFirst(name)] = (request: unknown, callOptions?: CallOptions) =>
        this.call(name, request as never, callOptions);
    }
    this.rpc = rpc as RawRpc;
  }

  /** Create a client and make sure a daemon is serving (starting it when allowed). */
  static async connect(options: ClientOptions = {}): Promise<PostcompactClient> {
    const client = new PostcompactClient(options);
    try {
      await client.ensureServing();
    } catch (e) {
      client.close();
      throw e;
    }
    return client;
  }

  /** The address in use and where it came from (explicit, env, server.json, default). */
  get address(): ResolvedAddress {
    return this.resolved;
  }

  /** Resolve when the daemon reports SERVING; start it first when allowed and needed. */
  async ensureServing(): Promise<void> {
    try {
      const status = await healthCheck(this.resolved.target, {
        timeoutMs: 2000,
        metadata: this.authMetadata(),
      });
      if (status === HEALTH_SERVING) return;
    } catch {
      // absent: maybe start it below
    }
    const why = this.autoStart ? (this.starting ? "" : this.starter.whyNot()) : "auto-start is off";
    if (why)
      throw new PostcompactError({
        code: grpc.status.UNAVAILABLE,
        reason: ClientReason.DAEMON_UNAVAILABLE,
        details: `no postcompact daemon at ${this.resolved.address} (${why})`,
        transport: true,
      });
    await this.startDaemon();
  }

  /** Close the channel. Sessions stay on the daemon (see `Session.close`). */
  close(): void {
    this.closed = true;
    this.grpcClient?.close();
    this.grpcClient = undefined;
  }

  // --- the common flow ------------------------------------------------------------------------

  /** Open (or resume, with `sessionId`) a session; `cwd` must be absolute. */
  async openSession(options: OpenSessionOptions): Promise<Session> {
    const res = await this.rpc.openSession(Session.openRequest(options));
    return new Session(this, res.sessionId, "", res.resumed, res.session ?? undefined);
  }

  /**
   * Join the existing session `sessionId` as it is, without restating its settings (its cwd,
   * roots, policy... are the session's); NOT_FOUND `SESSION_NOT_FOUND` when there is none.
   * `openSession` with the id and settings that differ is refused instead
   * (`SESSION_SETTINGS_MISMATCH`): settings are never silently dropped.
   */
  async attachSession(sessionId: string, options?: CallOptions): Promise<Session> {
    const res = await this.rpc.openSession({ sessionId }, options);
    return new Session(this, res.sessionId, "", res.resumed, res.session ?? undefined);
  }

  /**
   * Build a new session on the daemon from a Claude Code transcript (its JSONL bytes; a string is
   * sent as UTF-8): its reads, edits, writes, skills, plan, mode, tasks and catalogue, each
   * compaction replayed. `cwd` is where the transcript's working directory is here; `pathMap`
   * maps further transcript prefixes to local directories. The session is `sessionId` (default:
   * the transcript's own); an existing one fails ALREADY_EXISTS unless `replace`. Not idempotent:
   * retried only when it was never sent. `client.session(res.sessionId)` is a handle on it.
   */
  async importTranscript(
    transcript: T.Bytes,
    opts: ImportTranscriptOptions,
    options?: CallOptions,
  ): Promise<T.ImportTranscriptResponse> {
    return this.rpc.importTranscript(importTranscriptRequest(transcript, opts), options);
  }

  /** A handle on an existing session without a call. */
  session(sessionId: string, agentId = ""): Session {
    return new Session(this, sessionId, agentId, true, undefined);
  }

  async getServerInfo(options?: CallOptions): Promise<T.GetServerInfoResponse> {
    return this.rpc.getServerInfo({}, options);
  }

  async getStats(options?: CallOptions): Promise<T.GetStatsResponse> {
    return this.rpc.getStats({}, options);
  }

  /** Every session, in session-id order: all the pages of ListSessions (`listSessionsPage` gets one). */
  async listSessions(options?: CallOptions): Promise<T.SessionInfo[]> {
    const out: T.SessionInfo[] = [];
    let pageToken = "";
    do {
      const page = await this.listSessionsPage({ pageToken }, options);
      out.push(...page.sessions);
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    return out;
  }

  /**
   * One page of ListSessions: at most `pageSize` sessions (0 or unset: the daemon's default, 100;
   * at most 1,000) from `pageToken` ("" or unset for the first page, else the previous page's
   * `nextPageToken`, which is "" on the last page); `totalSessions` counts them all.
   */
  async listSessionsPage(
    page: { pageSize?: number; pageToken?: string } = {},
    options?: CallOptions,
  ): Promise<T.ListSessionsResponse> {
    return this.rpc.listSessions({ pageSize: page.pageSize ?? 0, pageToken: page.pageToken ?? "" }, options);
  }

  async closeSession(sessionId: string, options?: CallOptions): Promise<void> {
    await this.rpc.closeSession({ sessionId }, options);
  }

  /** Claude Code's rough estimate (chars/4; chars/2 for ext json, jsonl, jsonc). */
  async estimateTokens(text: string | Uint8Array, ext = "", options?: CallOptions): Promise<number> {
    return (await this.rpc.estimateTokens({ text, ext }, options)).tokens;
  }

  /** The exact BPE count ("o200k_base" by default, or "cl100k_base"). */
  async countTokens(text: string | Uint8Array, encoding = "", options?: CallOptions): Promise<number> {
    return (await this.rpc.countTokens({ text, encoding }, options)).tokens;
  }

  /** Cut `text` to `maxTokens`, appending `marker` when it was cut. */
  async truncateTokens(
    text: string | Uint8Array,
    maxTokens: number,
    opts: { marker?: string; counter?: T.TokenCounterName; encoding?: string } = {},
    options?: CallOptions,
  ): Promise<{ text: string; truncated: boolean; tokens: number }> {
    const res = await this.rpc.truncateTokens(
      {
        text,
        maxTokens,
        marker: opts.marker ?? "",
        counter: opts.counter ? enumName("TOKEN_COUNTER_", opts.counter) as T.TokenCounter : undefined,
        encoding: opts.encoding ?? "",
      },
      options,
    );
    return { text: res.text.toString("utf8"), truncated: res.truncated, tokens: res.tokens };
  }

  // --- printing -------------------------------------------------------------------------------

  /** What printing shows (`console.log`, `util.inspect`, `JSON.stringify`): the address, where it
   * came from and whether the client starts the daemon. Never the environment, the token or the
   * options that may hold them (docs/clients.md, "Printing a client"). */
  toJSON(): { address: string; source: string; autoStart: boolean } {
    return { address: this.resolved.address, source: this.resolved.source, autoStart: this.autoStart };
  }

  [inspect.custom](_depth: number, options: InspectOptions): string {
    return `PostcompactClient ${inspect(this.toJSON(), options)}`;
  }

  // --- transport ------------------------------------------------------------------------------

  private channel(): grpc.Client {
    if (this.closed) throw new Error("PostcompactClient is closed");
    if (!this.grpcClient) {
      this.grpcClient = new grpc.Client(this.resolved.target, grpc.credentials.createInsecure(), {
        ...LOCAL_CHANNEL_OPTIONS,
        "grpc.max_receive_message_length": 64 * 1024 * 1024,
        "grpc.max_send_message_length": 64 * 1024 * 1024,
        ...this.opts.channelOptions,
      });
    }
    return this.grpcClient;
  }

  private authMetadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.resolved.transport === "tcp") {
      this.token ??= resolveToken(this.env, this.resolved.runtimeDir);
      if (this.token) md.set("authorization", `Bearer ${this.token}`);
    }
    return md;
  }

  private invoke<K extends RpcMethod>(
    method: K,
    request: RequestOf<K>,
    options: CallOptions | undefined,
  ): Promise<ResponseOf<K>> {
    const def = loadProto().proto.postcompact.v1.PostcompactService.service[method] as unknown as MethodDefinition<
      unknown,
      unknown,
      unknown,
      ResponseOf<K>
    >;
    const typeName = `postcompact.v1.${(def.requestType.type as { name: string }).name}`;
    const arg = encodeBytesFields(typeName, request ?? {});
    const metadata = this.authMetadata();
    if (options?.metadata) metadata.merge(options.metadata);
    const timeoutMs = options?.timeoutMs ?? this.opts.timeoutMs ?? 60_000;
    const signal = options?.signal;
    const aborted = () =>
      new PostcompactError({
        code: grpc.status.CANCELLED,
        reason: ClientReason.ABORTED,
        details: "cancelled by the caller's AbortSignal",
        method,
        cause: signal?.reason,
      });
    if (signal?.aborted) throw aborted();
    return new Promise<ResponseOf<K>>((resolve, reject) => {
      const onAbort = () => call.cancel();
      const call = this.channel().makeUnaryRequest<unknown, ResponseOf<K>>(
        def.path,
        def.requestSerialize,
        def.responseDeserialize,
        arg,
        metadata,
        { deadline: Date.now() + timeoutMs },
        (err, value) => {
          signal?.removeEventListener("abort", onAbort);
          if (err) reject(signal?.aborted ? aborted() : PostcompactError.fromServiceError(err, method));
          else resolve(value as ResponseOf<K>);
        },
      );
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private async call<K extends RpcMethod>(
    method: K,
    request: RequestOf<K>,
    options: CallOptions | undefined,
  ): Promise<ResponseOf<K>> {
    // A transport failure is retried within the policy when that is safe (retry.ts).
    const note = (): string => (this.autoStart ? this.starter.whyNot() : "");
    return withRetry(
      this.opts.retry,
      this.resolved.address,
      method,
      request,
      async () => {
        await ioTurn();
        try {
          return await this.invoke(method, request, options);
        } catch (e) {
          // No daemon (a transport UNAVAILABLE, with no reason from a daemon): start it, within
          // the auto-start policy; calls failing while a start runs join it.
          if (this.autoStart && isTransportFailure(e) && e.code === grpc.status.UNAVAILABLE && (await this.autoStartNow())) {
            // Re-send at once only what cannot be applied twice: an idempotent call, or one that
            // never reached a daemon. Any other may have been applied before the connection broke:
            // withRetry reports it as not retried, as without auto-start.
            if (isIdempotent(method, request) || notSent(e)) return await this.invoke(method, request, options);
          }
          throw e;
        }
      },
      note,
    );
  }

  /** Start the daemon if the policy allows it now, or join the start running: true when a
   * daemon serves after it; false when none was started (the retries go on and ask again). */
  private async autoStartNow(): Promise<boolean> {
    if (!this.starting && this.starter.whyNot()) return false;
    await this.startDaemon();
    return true;
  }

  /** Spawn the daemon unless one answers health, and wait for SERVING (concurrent callers share
   * one start). */
  private startDaemon(): Promise<void> {
    if (!this.starting) {
      this.starter.begin();
      this.starting = this.doStart().then(
        () => {
          this.starter.end();
          this.starting = undefined;
        },
        (e: unknown) => {
          this.starter.end(e instanceof PostcompactError ? e.details : String(e));
          this.starting = undefined;
          throw e;
        },
      );
    }
    return this.starting;
  }

  private async doStart(): Promise<void> {
    // A daemon may be serving already (the connection broke, or another client started it).
    const serving = await healthCheck(this.resolved.target, { timeoutMs: 500, metadata: this.authMetadata() }).then(
      (status) => status === HEALTH_SERVING,
      () => false,
    );
    if (!serving) await this.spawnAndWait();
    // A fresh channel: the old one may sit in reconnect backoff or point at a stale address.
    this.grpcClient?.close();
    this.grpcClient = undefined;
    this.token = this.opts.token;
  }

  private async spawnAndWait(): Promise<void> {
    const { source } = this.resolved;
    const pinned = source === "explicit" || source === "env";
    const socketPath =
      pinned && this.resolved.transport === "unix" ? this.resolved.target.slice("unix://".length) : undefined;
    const startFailed = (details: string, cause?: unknown): PostcompactError =>
      new PostcompactError({
        code: grpc.status.UNAVAILABLE,
        reason: ClientReason.DAEMON_START_FAILED,
        details,
        transport: true,
        cause,
      });
    let spawned;
    try {
      spawned = spawnDaemon({ env: this.env, bin: this.opts.daemonBin, args: this.opts.daemonArgs, socketPath });
    } catch (e) {
      throw startFailed(`cannot start the postcompact daemon: ${e instanceof Error ? e.message : String(e)}`, e);
    }
    this.starter.spawned();
    try {
      const timeoutMs = this.opts.startTimeoutMs ?? 10_000;
      const deadline = Date.now() + timeoutMs;
      // Why to stop waiting: it could not be spawned, or it exited before serving (said at once,
      // with what it wrote on stderr; an exit 4, another daemon winning the race, is waited for).
      const stop = (): PostcompactError | undefined => {
        const spawnError = spawned.error();
        if (spawnError) return startFailed(`cannot start the postcompact daemon: ${spawnError.message}`, spawnError);
        const exit = spawned.exit();
        if (exit) {
          const said = spawned.said();
          return startFailed(
            `the postcompact daemon (pid ${spawned.pid ?? "?"}) ${describeExit(exit)} before serving${said ? `: ${said}` : ""}`,
          );
        }
        return undefined;
      };
      let healthy = false;
      while (!healthy && Date.now() < deadline) {
        const failure = stop();
        if (failure) throw failure;
        // Not pinned: the started daemon announces itself in server.json (its socket may differ).
        if (!pinned) this.resolved = resolveAddress(undefined, this.env);
        const target = this.resolved.target;
        try {
          healthy = await waitForHealth(target, {
            timeoutMs: Math.min(250, Math.max(1, deadline - Date.now())),
            metadata: this.authMetadata(),
            abort: stop,
          });
        } catch {
          continue; // stopped: reported at the top of the loop
        }
        // server.json may have appeared meanwhile, naming another address: check that one too.
        if (healthy && !pinned) {
          this.resolved = resolveAddress(undefined, this.env);
          healthy = this.resolved.target === target;
        }
      }
      if (!healthy) {
        const said = spawned.said();
        throw startFailed(
          `started the postcompact daemon (pid ${spawned.pid ?? "?"}) but it did not report SERVING at ${this.resolved.address} within ${timeoutMs} ms${said ? ` (it said: ${said})` : ""}`,
        );
      }
    } finally {
      spawned.close();
    }
  }
}

/** "PLAN", "plan" or "PERMISSION_MODE_PLAN" -> "PERMISSION_MODE_PLAN". */
export function enumName(prefix: string, value: string): string {
  const v = value.toUpperCase();
  return v.startsWith(prefix) ? v : prefix + v;
}

export { parseAddress };
