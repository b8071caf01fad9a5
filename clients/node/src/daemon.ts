// Auto-start: spawn `postcompact serve` detached and wait for grpc.health.v1.Health/Check.
import { spawn } from "node:child_process";
import * as grpc from "@grpc/grpc-js";
import type { Env } from "./address.js";
import { decodeHealthStatus, encodeHealthRequest } from "./wire.js";

export const HEALTH_SERVING = 1;
const HEALTH_CHECK = "/grpc.health.v1.Health/Check";

/** Fast reconnects: the daemon is local, so waiting seconds between attempts only adds latency. */
export const LOCAL_CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.initial_reconnect_backoff_ms": 50,
  "grpc.min_reconnect_backoff_ms": 50,
  "grpc.max_reconnect_backoff_ms": 1000,
};

/** One Health/Check call; resolves to the serving status (1 = SERVING) or rejects. */
export function healthCheck(
  target: string,
  opts: { service?: string; timeoutMs?: number; metadata?: grpc.Metadata; waitForReady?: boolean } = {},
): Promise<number> {
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), LOCAL_CHANNEL_OPTIONS);
  const metadata = opts.metadata?.clone() ?? new grpc.Metadata();
  // Without waitForReady an absent daemon fails at once (UNAVAILABLE) instead of at the deadline.
  if (opts.waitForReady) metadata.setOptions({ waitForReady: true });
  return new Promise<number>((resolve, reject) => {
    client.makeUnaryRequest<Buffer, number>(
      HEALTH_CHECK,
      (b) => b,
      decodeHealthStatus,
      encodeHealthRequest(opts.service ?? ""),
      metadata,
      { deadline: Date.now() + (opts.timeoutMs ?? 1000) },
      (err, value) => (err ? reject(err) : resolve(value ?? 0)),
    );
  }).finally(() => client.close());
}

/** Poll Health/Check until SERVING or `timeoutMs` passes. Resolves true when serving. */
export async function waitForHealth(
  target: string,
  opts: { timeoutMs?: number; metadata?: grpc.Metadata; abort?: () => Error | undefined } = {},
): Promise<boolean> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  for (;;) {
    const failure = opts.abort?.();
    if (failure) throw failure;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    try {
      const status = await healthCheck(target, {
        timeoutMs: Math.min(left, 500),
        metadata: opts.metadata,
      });
      if (status === HEALTH_SERVING) return true;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface SpawnResult {
  pid: number | undefined;
  /** The spawn error (e.g. ENOENT), once known. */
  error: () => Error | undefined;
}

/**
 * Spawn the daemon detached in its own session with output to /dev/null. The executable is
 * `POSTCOMPACT_BIN`, else `postcompact` on PATH.
 */
export function spawnDaemon(opts: { env: Env; bin?: string; args?: string[]; socketPath?: string }): SpawnResult {
  const bin = opts.bin ?? (opts.env["POSTCOMPACT_BIN"] || "postcompact");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.env)) if (v !== undefined) env[k] = v;
  // A client pointed at a non-default Unix socket starts the daemon there.
  if (opts.socketPath) env["POSTCOMPACT_SOCKET"] = opts.socketPath;
  let error: Error | undefined;
  const child = spawn(bin, opts.args ?? ["serve"], {
    detached: true, // setsid: its own session, it outlives us
    stdio: "ignore",
    env,
  });
  child.on("error", (e) => {
    error = e;
  });
  child.unref();
  return { pid: child.pid, error: () => error };
}
