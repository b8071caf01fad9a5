import { Metadata, status as Status, type ServiceError } from "@grpc/grpc-js";
import { decodeRpcStatus, type ErrorInfo } from "./wire.js";

/** The trailing metadata key in which the daemon sends an error's machine-readable reason. */
export const REASON_METADATA_KEY = "postcompact-error-reason";
/** The domain of the daemon's google.rpc.ErrorInfo details. */
export const ERROR_DOMAIN = "postcompact";

/**
 * Reasons produced by the client itself, for failures no daemon answered (the daemon's reasons
 * are UPPER_SNAKE_CASE too); the same names in every client (docs/clients.md, "Errors").
 */
export const ClientReason = {
  /** No daemon answered within the retry policy (auto-start off, deferred, or not possible). */
  DAEMON_UNAVAILABLE: "DAEMON_UNAVAILABLE",
  /** Auto-start could not bring a daemon up: `postcompact serve` could not be spawned, exited
   * before serving (the message carries its first error line) or did not report SERVING. */
  DAEMON_START_FAILED: "DAEMON_START_FAILED",
  /** The connection broke during a call that is not retried: the daemon may have applied it. */
  CONNECTION_LOST: "CONNECTION_LOST",
  /** The call's deadline (`timeoutMs`) passed without an answer. */
  DEADLINE_EXCEEDED: "DEADLINE_EXCEEDED",
  /** Any other status gRPC produced itself, without a daemon reason (e.g. a message over the
   * transport's hard size cap). */
  TRANSPORT_ERROR: "TRANSPORT_ERROR",
  /** The caller's AbortSignal fired (CallOptions.signal): the call was cancelled, not retried. */
  ABORTED: "ABORTED",
  /** @deprecated No longer produced: a failure without a daemon reason is named by one of the
   * reasons above (`PostcompactError.transport` tells it from a daemon's answer). */
  UNKNOWN: "UNKNOWN",
} as const;

/** The errors made from a status gRPC produced itself, as received (not the client's own
 * reports such as DAEMON_START_FAILED): what the retry rule looks at (retry.ts). */
const fromGrpc = new WeakSet<PostcompactError>();

/** True when `e` is a status gRPC produced itself, as received (no daemon reason). */
export function isGrpcStatus(e: unknown): e is PostcompactError {
  return e instanceof PostcompactError && fromGrpc.has(e);
}

/** The client's reason for a status gRPC produced itself (no daemon reason). */
export function transportReason(code: Status): string {
  switch (code) {
    case Status.DEADLINE_EXCEEDED:
      return ClientReason.DEADLINE_EXCEEDED;
    case Status.UNAVAILABLE:
    case Status.CANCELLED:
      return ClientReason.CONNECTION_LOST;
    default:
      return ClientReason.TRANSPORT_ERROR;
  }
}

const CODE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(Status)
    .filter(([, v]) => typeof v === "number")
    .map(([k, v]) => [v as number, k]),
);

/** The gRPC status code's name ("INVALID_ARGUMENT") for a numeric code. */
export function statusCodeName(code: number): string {
  return CODE_NAMES[code] ?? `CODE_${code}`;
}

/** The numeric gRPC status code for a name ("INVALID_ARGUMENT"). */
export function statusCodeFromName(name: string): number {
  const code = (Status as unknown as Record<string, number>)[name];
  if (typeof code !== "number") throw new Error(`unknown gRPC status code name: ${name}`);
  return code;
}

/**
 * Every failure of a call: the gRPC status `code` (numeric, `codeName` for its name), the
 * daemon's machine-readable `reason` (trailing metadata `postcompact-error-reason`, else the
 * google.rpc.ErrorInfo detail), the human-readable `details`, and the ErrorInfo when sent.
 */
export class PostcompactError extends Error {
  override readonly name = "PostcompactError";
  readonly code: Status;
  readonly reason: string;
  readonly details: string;
  readonly metadata: Metadata;
  readonly errorInfo: ErrorInfo | undefined;
  /** The RPC that failed, e.g. "ReadFile" (empty for client-side failures). */
  readonly method: string;
  /**
   * The delay of the daemon's google.rpc.RetryInfo detail in ms; undefined when it sent none. A
   * RetryInfo (the daemon's OVERLOADED) means the call was refused before anything was applied:
   * the client retries it within its `retry` policy, so a caller sees one only when the policy
   * was spent (or is `NO_RETRY`).
   */
  readonly retryAfterMs: number | undefined;
  /**
   * True when gRPC (or the kernel) produced this status, not the daemon: it carried no daemon
   * reason, and `reason` is the client's name for it (CONNECTION_LOST, DEADLINE_EXCEEDED,
   * TRANSPORT_ERROR). The retry rule reads it (retry.ts).
   */
  readonly transport: boolean;

  constructor(init: {
    code: Status;
    reason: string;
    details: string;
    metadata?: Metadata;
    errorInfo?: ErrorInfo;
    method?: string;
    retryAfterMs?: number;
    transport?: boolean;
    cause?: unknown;
  }) {
    const prefix = init.method ? `${init.method}: ` : "";
    super(`${prefix}${statusCodeName(init.code)} [${init.reason}] ${init.details}`, {
      cause: init.cause,
    });
    this.code = init.code;
    this.reason = init.reason;
    this.details = init.details;
    this.metadata = init.metadata ?? new Metadata();
    this.errorInfo = init.errorInfo;
    this.method = init.method ?? "";
    this.retryAfterMs = init.retryAfterMs;
    this.transport = init.transport ?? false;
  }

  /** The status code's name, e.g. "INVALID_ARGUMENT". */
  get codeName(): string {
    return statusCodeName(this.code);
  }

  /** The ErrorInfo metadata map (e.g. the offending path), empty when none was sent. */
  get info(): Record<string, string> {
    return this.errorInfo?.metadata ?? {};
  }

  /** Map a grpc-js ServiceError (status + trailing metadata) to a PostcompactError. */
  static fromServiceError(err: ServiceError, method = ""): PostcompactError {
    const metadata = err.metadata ?? new Metadata();
    let errorInfo: ErrorInfo | undefined;
    let retryAfterMs: number | undefined;
    const raw = metadata.get("grpc-status-details-bin")[0];
    if (raw !== undefined) {
      try {
        const status = decodeRpcStatus(Buffer.isBuffer(raw) ? raw : Buffer.from(raw, "base64"));
        errorInfo = status.errorInfo;
        retryAfterMs = status.retryDelayMs;
      } catch {
        errorInfo = undefined; // undecodable details: the plain key still carries the reason
      }
    }
    const plain = metadata.get(REASON_METADATA_KEY)[0];
    const code = err.code ?? Status.UNKNOWN;
    const daemonReason =
      (typeof plain === "string" && plain !== "" ? plain : undefined) ?? (errorInfo?.reason || undefined);
    const e = new PostcompactError({
      code,
      reason: daemonReason ?? transportReason(code),
      transport: daemonReason === undefined,
      details: err.details ?? err.message,
      metadata,
      errorInfo,
      method,
      retryAfterMs,
      cause: err,
    });
    if (daemonReason === undefined) fromGrpc.add(e);
    return e;
  }
}

export function isPostcompactError(e: unknown): e is PostcompactError {
  return e instanceof PostcompactError;
}
