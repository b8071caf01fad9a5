// Auto-start: spawn `postcompact serve --detached` and wait for grpc.health.v1.Health/Check;
// how often a client may start it again (docs/clients.md, "Auto-start").
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

/** `postcompact serve` exits with this status when another daemon holds the lock: it lost a race
 * to another starter, whose daemon is coming up (wait for that one). */
export const EXIT_ALREADY_RUNNING = 4;

export interface SpawnResult {
  pid: number | undefined;
  /** The spawn error (e.g. ENOENT), once known. */
  error: () => Error | undefined;
  /** How it exited, once it has (`undefined` while it runs; an exit 4 is never reported). */
  exit: () => { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** What it wrote to stderr while starting, in one line (see `firstErrorLine`). */
  said: () => string;
  /** Stop reading its stderr (the start is over). */
  close: () => void;
}

/**
 * What a daemon that could not start said, in one line: its first `postcompact: ...` line, else
 * its last non-empty one (a traceback's exception).
 */
export function firstErrorLine(text: string): string {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  return lines.find((l) => l.startsWith("postcompact:")) ?? lines[lines.length - 1] ?? "";
}

/** "exited with status 2", or "was killed by SIGKILL". */
export function describeExit(exit: { code: number | null; signal: NodeJS.Signals | null }): string {
  return exit.signal ? `was killed by ${exit.signal}` : `exited with status ${exit.code ?? "?"}`;
}

/**
 * Spawn the daemon detached in its own session: `postcompact serve --detached` (the executable
 * `POSTCOMPACT_BIN`, else `postcompact` on PATH). Its stderr goes to an unlinked temporary file
 * this client reads when it fails to start; once serving, the daemon writes to its log file in
 * the state directory instead.
 */
export function spawnDaemon(opts: { env: Env; bin?: string; args?: string[]; socketPath?: string }): SpawnResult {
  const bin = opts.bin ?? (opts.env["POSTCOMPACT_BIN"] || "postcompact");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.env)) if (v !== undefined) env[k] = v;
  // A client pointed at a non-default Unix socket starts the daemon there.
  if (opts.socketPath) env["POSTCOMPACT_SOCKET"] = opts.socketPath;
  const errPath = join(tmpdir(), `postcompact-start-${process.pid}-${randomBytes(6).toString("hex")}`);
  const errFd = openSync(errPath, "wx+", 0o600);
  unlinkSync(errPath);
  let error: Error | undefined;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let child: ChildProcess;
  try {
    child = spawn(bin, opts.args ?? ["serve", "--detached"], {
      detached: true, // setsid: its own session, it outlives us
      stdio: ["ignore", "ignore", errFd],
      env,
    });
  } catch (e) {
    closeSync(errFd);
    throw e;
  }
  child.on("error", (e) => {
    error = e;
  });
  child.on("exit", (code, signal) => {
    if (code !== EXIT_ALREADY_RUNNING) exit = { code, signal };
  });
  child.unref();
  let open = true;
  const said = (): string => {
    if (!open) return "";
    const buf = Buffer.alloc(64 * 1024);
    const n = readSync(errFd, buf, 0, buf.length, 0);
    return firstErrorLine(buf.subarray(0, n).toString("utf8"));
  };
  return {
    pid: child.pid,
    error: () => error,
    exit: () => exit,
    said,
    close: () => {
      if (open) closeSync(errFd);
      open = false;
    },
  };
}

/**
 * How often a client may start the daemon: at most `maxStarts` starts in any `windowMs`; after
 * a start the next waits `initialBackoffMs`, doubled after each start that failed, at most
 * `maxBackoffMs`. A daemon found serving is not a start.
 */
export interface AutoStartPolicy {
  maxStarts?: number;
  windowMs?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

/** At most 3 starts a minute, 1 s after a start, doubling after each failed one up to 30 s. */
export const DEFAULT_AUTO_START: Required<AutoStartPolicy> = {
  maxStarts: 3,
  windowMs: 60_000,
  initialBackoffMs: 1000,
  maxBackoffMs: 30_000,
};

/** One client's starts: whether one may be made now, and why not. */
export class Starter {
  private readonly policy: Required<AutoStartPolicy>;
  private readonly starts: number[] = [];
  private failures = 0;
  private ended = -Infinity;
  private spawnedNow = false;
  /** Why the last start failed ("" when it did not). */
  lastError = "";

  constructor(policy: AutoStartPolicy | undefined) {
    this.policy = { ...DEFAULT_AUTO_START, ...policy };
  }

  /** Why no start may be made now ("" when one may). */
  whyNot(now = Date.now()): string {
    const p = this.policy;
    while (this.starts.length > 0 && now - this.starts[0]! >= p.windowMs) this.starts.shift();
    if (this.starts.length >= p.maxStarts)
      return `not started again: ${this.starts.length} starts in the last ${p.windowMs / 1000} s, the most its autoStartPolicy allows`;
    const backoff = Math.min(p.maxBackoffMs, p.initialBackoffMs * 2 ** Math.min(Math.max(0, this.failures - 1), 60));
    const wait = this.ended + backoff - now;
    if (wait > 0) {
      const last = this.lastError
        ? `the last start failed (${this.lastError})`
        : `the daemon was started ${((now - this.ended) / 1000).toFixed(1)} s ago`;
      return `not started again yet: ${last}; the next start may come in ${(wait / 1000).toFixed(1)} s`;
    }
    return "";
  }

  /** A start begins (the caller checked `whyNot`). */
  begin(): void {
    this.spawnedNow = false;
  }

  spawned(): void {
    this.starts.push(Date.now());
    this.spawnedNow = true;
  }

  /** The start is over: `error` says why it failed, "" when a daemon serves. */
  end(error = ""): void {
    if (!this.spawnedNow) return;
    this.ended = Date.now();
    this.failures = error ? this.failures + 1 : 0;
    this.lastError = error;
  }
}
