// Recovering across a daemon restart or an overload (docs/clients.md, "Retries"). An error with a
// google.rpc.RetryInfo (`retryAfterMs`, the daemon's OVERLOADED) is retried for any call, after at
// least the delay it names: the daemon refused it before applying anything. No other daemon
// answer is retried. Besides those, only a transport failure is (`isTransportFailure`: no daemon
// reason; every answer of a live daemon carries one, e.g. STATE_WRITE_FAILED). An idempotent call
// (`isIdempotent`) is retried whatever happened to the connection; any other call only when the
// request was never written or never processed (`notSent`), so the daemon cannot have acted on it.
import { status as Status } from "@grpc/grpc-js";
import { ClientReason, PostcompactError, isGrpcStatus } from "./errors.js";

/** Bounded retries with exponential backoff and jitter (for an answer with a RetryInfo, each
 * wait is at least its delay). */
export interface RetryPolicy {
  /** Stop retrying this long after the first attempt (default 10 000 ms). */
  maxElapsedMs?: number;
  /** At most this many attempts in all (default 40; 1 = no retry). */
  maxAttempts?: number;
  /** The first wait (default 50 ms); each next one `multiplier` (2) times longer ... */
  initialBackoffMs?: number;
  /** ... at most this (default 1000 ms) ... */
  maxBackoffMs?: number;
  multiplier?: number;
  /** ... each scaled by a random factor in [1 - jitter, 1 + jitter] (default 0.2). */
  jitter?: number;
}

export const DEFAULT_RETRY: Required<RetryPolicy> = {
  maxElapsedMs: 10_000,
  maxAttempts: 40,
  initialBackoffMs: 50,
  maxBackoffMs: 1000,
  multiplier: 2,
  jitter: 0.2,
};

/** One attempt per call (an OVERLOADED answer is thrown as is, too). */
export const NO_RETRY: RetryPolicy = { maxAttempts: 1, maxElapsedMs: 0 };

/** The wait before retry number `n` (1-based). */
export function backoffMs(policy: RetryPolicy, n: number): number {
  const p = { ...DEFAULT_RETRY, ...policy };
  const base = Math.min(p.maxBackoffMs, p.initialBackoffMs * p.multiplier ** (n - 1));
  return Math.max(0, base * (1 + p.jitter * (2 * Math.random() - 1)));
}

const ALWAYS = new Set([
  "GetServerInfo",
  "GetStats",
  "ListSessions",
  "CheckWrite",
  "CheckStale",
  "PreviewCompact",
  "SetPlan",
  "SetMode",
  "UpsertTask",
  "EstimateTokens",
  "EstimateTokensBatch",
  "CountTokens",
  "CountTokensBatch",
  "TruncateTokens",
  "TruncateTokensBatch",
]);

const nonzero = (v: unknown): boolean => v !== undefined && v !== null && Number(v) !== 0;

/** True when repeating `request` after the daemon may already have applied it is harmless. */
export function isIdempotent(method: string, request: unknown): boolean {
  if (ALWAYS.has(method)) return true;
  const r = (request ?? {}) as Record<string, unknown>;
  switch (method) {
    case "OpenSession": // resumes the named session; an empty id would make a second one
      return typeof r["sessionId"] === "string" && r["sessionId"] !== "";
    case "RecordWrite": // conditional: a repeat of one that was recorded finds its own entry
      if (r["ifEntryTimestampMs"] !== undefined && r["ifEntryTimestampMs"] !== null) return false;
      return nonzero(r["timestampMs"]);
    case "RecordRead": // timestamp 0 = "now": a retry would store another
      return nonzero(r["timestampMs"]);
    case "RecordSkill":
      return nonzero(r["invokedAtMs"]);
    case "ImportTranscript": // creates the session: a repeat of one that succeeded fails ALREADY_EXISTS
      return false;
    default:
      // ReadFile (a repeat answers the "unchanged" stub), Compact, SetCatalog (the delta is
      // announced once), StartAgent, EndAgent, MergeFileState, CloseSession: only when not sent.
      return false;
  }
}

/** grpc-js's failure to establish a connection ("No connection established", ECONNREFUSED,
 * ENOENT for a missing socket), or an HTTP/2 stream the server refused before processing it
 * (REFUSED_STREAM, "Stream refused by server"): nothing was applied. */
export function notSent(e: PostcompactError): boolean {
  return /No connection established|ECONNREFUSED|ENOENT|Stream refused by server/.test(e.details);
}

/**
 * grpc-js's status for an HTTP/2 stream that ended without a gRPC status: reset by the peer, or
 * closed with its connection's GOAWAY code ("Bandwidth exhausted or memory limit exceeded" is
 * how grpc-js names code 11, ENHANCE_YOUR_CALM, which a gRPC server's final GOAWAY carries when
 * it stops; "Received RST_STREAM with code N" the others). The connection failed, not the call.
 */
export function streamReset(e: PostcompactError): boolean {
  return (
    (e.code === Status.RESOURCE_EXHAUSTED && e.details === "Bandwidth exhausted or memory limit exceeded") ||
    (e.code === Status.INTERNAL && e.details.startsWith("Received RST_STREAM with code"))
  );
}

/** A failure of the connection, not an answer of a daemon (it carried no daemon reason):
 * UNAVAILABLE, CANCELLED that the caller did not ask for (a daemon stopping), or a stream the
 * HTTP/2 layer reset (`streamReset`). */
export function isTransportFailure(e: unknown): e is PostcompactError {
  return isGrpcStatus(e) && (e.code === Status.UNAVAILABLE || e.code === Status.CANCELLED || streamReset(e));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Run `attempt` until it succeeds or the policy says stop; returns its result or throws.
 * `note` says why auto-start did not start the daemon, for DAEMON_UNAVAILABLE ("" if nothing). */
export async function withRetry<R>(
  policy: RetryPolicy | undefined,
  address: string,
  method: string,
  request: unknown,
  attempt: () => Promise<R>,
  note?: () => string,
): Promise<R> {
  const p = { ...DEFAULT_RETRY, ...policy };
  const begin = Date.now();
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      if (e instanceof PostcompactError && e.retryAfterMs !== undefined) {
        // Refused before anything was applied: safe for any call, after the daemon's delay. Once
        // the policy is spent the daemon's own error is the answer.
        const remaining = p.maxElapsedMs - (Date.now() - begin);
        if (n >= p.maxAttempts || remaining <= 0) throw e;
        await sleep(Math.min(Math.max(e.retryAfterMs, backoffMs(p, n)), remaining));
        continue;
      }
      if (!isTransportFailure(e)) throw e;
      if (!isIdempotent(method, request) && !notSent(e))
        throw new PostcompactError({
          code: e.code,
          reason: ClientReason.CONNECTION_LOST,
          details: `the connection to the postcompact daemon at ${address} failed during ${method}, which is not retried: the daemon may have applied it (error: ${e.details})`,
          metadata: e.metadata,
          errorInfo: { reason: ClientReason.CONNECTION_LOST, domain: "postcompact", metadata: { address } },
          method,
          transport: true,
          cause: e,
        });
      const elapsed = Date.now() - begin;
      const remaining = p.maxElapsedMs - elapsed;
      if (n >= p.maxAttempts || remaining <= 0) {
        const info = { address, attempts: String(n), elapsed_ms: String(elapsed) };
        const why = note?.() ?? "";
        throw new PostcompactError({
          code: Status.UNAVAILABLE,
          reason: ClientReason.DAEMON_UNAVAILABLE,
          details: `no postcompact daemon answered at ${address}: ${method} failed ${n} time(s) over ${(elapsed / 1000).toFixed(1)}s (last error: ${e.details})${why ? `; auto-start: ${why}` : ""}`,
          errorInfo: { reason: ClientReason.DAEMON_UNAVAILABLE, domain: "postcompact", metadata: info },
          method,
          transport: true,
          cause: e,
        });
      }
      await sleep(Math.min(backoffMs(p, n), remaining));
    }
  }
}
