/**
 * The plugin's link to the daemon: which executable starts it, a connection made once and made
 * again after the daemon went away, and a bound on how long a compaction waits for any of it.
 *
 * The Node client starts the daemon at most once per client object and rides a restart out with
 * about 10 s of retries: right for a harness that waits, wrong for a model request that must not
 * stall. So the plugin connects in the background (`DaemonLink.connect`, started when OpenCode
 * loads the plugin), drops a client whose daemon stopped answering (`lost`), and makes a new one
 * (which may start the daemon again) the next time it is needed.
 */
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { GrpcStatus, PostcompactClient, isPostcompactError, type RetryPolicy } from "@postcompact/client";

export type Env = Record<string, string | undefined>;

/** Where the executable that starts the daemon was found, and every place looked at. */
export interface DaemonBin {
  /** The executable, undefined when none was found. */
  bin?: string;
  /** How it was found: "option", "POSTCOMPACT_BIN", "PATH", "checkout", "~/.local/bin". */
  source?: string;
  /** The places looked at, in order (for the message when none was found). */
  tried: string[];
}

/** This package's directory (clients/opencode in a checkout): the nearest one above this module
 * with a package.json (dist/daemon.js is in dist/). */
export const PLUGIN_DIR = ((): string => {
  const here = dirname(fileURLToPath(import.meta.url));
  for (let dir = here, i = 0; i < 4; i++, dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json"))) return dir;
  }
  return resolve(here, "..");
})();

function executable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The `postcompact` executable that starts the daemon, first found of:
 *
 * 1. the plugin option `daemonBin`;
 * 2. `POSTCOMPACT_BIN`;
 * 3. `postcompact` on `PATH`;
 * 4. `.venv/bin/postcompact` of the checkout the plugin is installed from (`make build` puts it
 *    there; the plugin is `<checkout>/clients/opencode`);
 * 5. `~/.local/bin/postcompact` (where `pip install --user` and pipx put it).
 *
 * An explicit one (1, 2) is the answer even when it is not there: the start then fails and says
 * so, rather than quietly starting another.
 */
export function findDaemonBin(opts: { option?: string; env: Env; pluginDir?: string; home?: string }): DaemonBin {
  const tried: string[] = [];
  const pick = (bin: string, source: string): DaemonBin => ({ bin, source, tried: [...tried, bin] });
  if (opts.option) return pick(opts.option, "option");
  const fromEnv = opts.env["POSTCOMPACT_BIN"];
  if (fromEnv) return pick(fromEnv, "POSTCOMPACT_BIN");
  const path = opts.env["PATH"] ?? "";
  for (const dir of path.split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const candidate = join(dir, "postcompact");
    if (executable(candidate)) return pick(candidate, "PATH");
  }
  tried.push("postcompact on PATH");
  const checkout = resolve(opts.pluginDir ?? PLUGIN_DIR, "..", "..");
  const venv = join(checkout, ".venv", "bin", "postcompact");
  if (executable(venv)) return pick(venv, "checkout");
  tried.push(venv);
  const home = opts.home ?? opts.env["HOME"] ?? homedir();
  const local = join(home, ".local", "bin", "postcompact");
  if (executable(local)) return pick(local, "~/.local/bin");
  tried.push(local);
  return { tried };
}

/**
 * True when `e` says the daemon could not be reached (rather than answered): a transport failure
 * (UNAVAILABLE, CANCELLED, DEADLINE_EXCEEDED without a daemon's answer, the client's
 * DAEMON_UNAVAILABLE / DAEMON_START_FAILED).
 */
export function isUnreachable(e: unknown): boolean {
  if (!isPostcompactError(e)) return false;
  if (e.reason === "DAEMON_UNAVAILABLE" || e.reason === "DAEMON_START_FAILED") return true;
  const transport = e.code === GrpcStatus.UNAVAILABLE || e.code === GrpcStatus.CANCELLED || e.code === GrpcStatus.DEADLINE_EXCEEDED;
  // Every answer of a live daemon carries a reason: none (UNKNOWN) means gRPC itself failed.
  return transport && e.reason === "UNKNOWN";
}

/** `promise`'s value, or `late` when it has not settled within `ms` (the promise goes on). */
export function within<T, L>(promise: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<L>((done) => {
    timer = setTimeout(() => done(late), Math.max(0, ms));
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export interface LinkOptions {
  /** The daemon's address (else the clients' discovery). */
  address?: string;
  /** Start the daemon when none answers. */
  autoStart: boolean;
  /** The executable, when one was found. */
  bin?: string;
  /** The environment used for discovery and handed to the daemon started. */
  env: Env;
  /** The deadline of each call, ms. */
  timeoutMs: number;
  /** The client's retries across a daemon restart. */
  retry?: RetryPolicy;
}

/** When and why the daemon was last found unreachable. */
export interface Failure {
  error: unknown;
  at: number;
  /** The address tried. */
  address: string;
  /** An attempt to connect failed (rather than a call on a connection). */
  attempt: boolean;
}

/**
 * One connection to the daemon at a time. `connect()` answers the connected client, or makes one:
 * a health check of the address discovery finds (POSTCOMPACT_ADDRESS, server.json, the default
 * socket), and when nothing answers and starting is allowed, the daemon started from `bin` and
 * waited for. Concurrent callers share one attempt. A failed attempt answers undefined (and is
 * `lastFailure`); the next `connect()` tries again.
 */
export class DaemonLink {
  private client: PostcompactClient | undefined;
  private connecting: Promise<PostcompactClient | undefined> | undefined;
  private closed = false;
  lastFailure: Failure | undefined;

  constructor(
    private readonly opts: LinkOptions,
    private readonly events: { up?: (client: PostcompactClient) => void } = {},
  ) {}

  /** The client when connected now (no attempt made). */
  get current(): PostcompactClient | undefined {
    return this.client;
  }

  /** True while an attempt runs. */
  get busy(): boolean {
    return this.connecting !== undefined;
  }

  connect(): Promise<PostcompactClient | undefined> {
    if (this.client) return Promise.resolve(this.client);
    if (this.closed) return Promise.resolve(undefined);
    this.connecting ??= this.attempt().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async attempt(): Promise<PostcompactClient | undefined> {
    let client: PostcompactClient | undefined;
    try {
      client = new PostcompactClient({
        ...(this.opts.address ? { address: this.opts.address } : {}),
        autoStart: this.opts.autoStart && this.opts.bin !== undefined,
        ...(this.opts.bin ? { daemonBin: this.opts.bin } : {}),
        env: this.opts.env,
        timeoutMs: this.opts.timeoutMs,
        ...(this.opts.retry ? { retry: this.opts.retry } : {}),
      });
      await client.ensureServing();
    } catch (error) {
      client?.close();
      this.lastFailure = { error, at: Date.now(), address: client?.address.address ?? this.opts.address ?? "", attempt: true };
      return undefined;
    }
    if (this.closed) {
      client.close();
      return undefined;
    }
    this.client = client;
    this.lastFailure = undefined;
    this.events.up?.(client);
    return client;
  }

  /** `client`'s daemon stopped answering: the next `connect()` makes a new connection. */
  lost(client: PostcompactClient, error: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.close();
    this.lastFailure = { error, at: Date.now(), address: client.address.address, attempt: false };
  }

  close(): void {
    this.closed = true;
    this.client?.close();
    this.client = undefined;
  }
}
