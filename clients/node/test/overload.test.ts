// Overload admission (docs/clients.md, "Overload: retried when the daemon says so") against the
// real daemon, as tests/daemon/server/test_overload.py does for Python: two ReadFiles held in their
// worker fill limits.max_calls_in_flight = 2; the next call is refused OVERLOADED with a RetryInfo
// of 100 ms, which the error exposes (NO_RETRY) and the client retries for any call, Compact
// included, within its policy; a permanent limit (TOO_MANY_SESSIONS) is not retried.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, test } from "node:test";
import { NO_RETRY, PostcompactClient, PostcompactError, waitForHealth, type RetryPolicy, type Session } from "../src/index.js";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const PYTHON = process.env["POSTCOMPACT_PYTHON"] || join(REPO, ".venv", "bin", "python");
const CONFIG = "[limits]\nmax_calls_in_flight = 2\nmax_sessions = 4\n";
const OVERLOADED = '"reason": "OVERLOADED"';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A daemon with the readfile.worker failpoint held at `hold`: a ReadFile reaching its worker
 * appends a line to `${hold}.reached`, then blocks until `hold` exists. */
class HeldDaemon {
  readonly dir = mkdtempSync("/tmp/pcn-ovl-");
  readonly address = `unix://${join(this.dir, "d.sock")}`;
  readonly hold = join(this.dir, "hold");
  readonly root = join(this.dir, "project");
  readonly big = join(this.root, "big.txt"); // over 256 KiB: read in a worker, not inline
  readonly log = join(this.dir, "daemon.log");
  readonly clients: PostcompactClient[] = [];
  private child: ChildProcess | undefined;

  async start(): Promise<this> {
    assert.ok(existsSync(PYTHON), `${PYTHON} not found: run \`make build\` first`);
    mkdirSync(this.root);
    writeFileSync(this.big, Array.from({ length: 100_000 }, (_, i) => `line ${i}\n`).join(""));
    mkdirSync(join(this.dir, "config", "postcompact"), { recursive: true });
    writeFileSync(join(this.dir, "config", "postcompact", "config.toml"), CONFIG);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("POSTCOMPACT_")) env[k] = v;
    Object.assign(env, {
      XDG_RUNTIME_DIR: join(this.dir, "run"),
      XDG_CONFIG_HOME: join(this.dir, "config"),
      XDG_STATE_HOME: join(this.dir, "state"),
      HOME: this.dir,
      POSTCOMPACT_FAILPOINTS: `readfile.worker=hold:${this.hold}`,
    });
    const out = openSync(this.log, "a");
    // Memory only: with state stored, max_sessions bounds memory and evicts an idle session
    // instead of refusing (docs/persistence.md, "Sessions in memory").
    this.child = spawn(PYTHON, ["-m", "postcompact", "serve", "--socket", join(this.dir, "d.sock"), "--no-persist"], {
      env,
      stdio: ["ignore", out, out],
    });
    closeSync(out);
    if (!(await waitForHealth(this.address, { timeoutMs: 30_000 }))) throw new Error(`the daemon did not start:\n${this.output()}`);
    return this;
  }

  client(retry?: RetryPolicy): PostcompactClient {
    const c = new PostcompactClient({ address: this.address, autoStart: false, timeoutMs: 60_000, retry });
    this.clients.push(c);
    return c;
  }

  output(): string {
    return existsSync(this.log) ? readFileSync(this.log, "utf8") : "";
  }

  count(s: string): number {
    return this.output().split(s).length - 1;
  }

  async waitLog(s: string, n: number): Promise<void> {
    for (const deadline = Date.now() + 30_000; this.count(s) < n; await sleep(20))
      assert.ok(Date.now() < deadline, `the daemon's output holds ${s} ${this.count(s)} time(s), not ${n}:\n${this.output()}`);
  }

  release(): void {
    writeFileSync(this.hold, "");
  }

  /** Two ReadFiles held in the worker, from two agents of one session (one agent's calls wait
   * for each other): the daemon is at its limit of 2 calls in flight. */
  async fill(): Promise<{ session: Session; reads: Promise<unknown>[] }> {
    const session = await this.client().openSession({ cwd: this.root, sessionId: "ovl-node" });
    const second = await session.startAgent("second");
    const reads = [session, second].map((s) => s.readFile(this.big, { offset: 2, limit: 3 }));
    const reached = `${this.hold}.reached`;
    const lines = (): number => (existsSync(reached) ? readFileSync(reached, "utf8").split("\n").length - 1 : 0);
    for (const deadline = Date.now() + 30_000; lines() < 2; await sleep(10))
      assert.ok(Date.now() < deadline, `2 workers did not reach the failpoint:\n${this.output()}`);
    return { session, reads };
  }

  async stop(): Promise<void> {
    this.release(); // no worker may still be held at SIGTERM
    for (const c of this.clients) c.close();
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

let current: HeldDaemon | undefined;
afterEach(async () => {
  await current?.stop();
  current = undefined;
});

async function held(): Promise<HeldDaemon> {
  current = new HeldDaemon();
  return current.start();
}

function assertOverloaded(e: unknown): true {
  assert.ok(e instanceof PostcompactError, String(e));
  assert.equal(e.codeName, "RESOURCE_EXHAUSTED");
  assert.equal(e.reason, "OVERLOADED");
  assert.equal(e.retryAfterMs, 100);
  return true;
}

test("over the limit a call is refused OVERLOADED with retryAfterMs; a spent policy ends with it", { timeout: 90_000 }, async () => {
  const d = await held();
  const { reads } = await d.fill();

  // Retries off: the daemon's refusal itself, asked once.
  let before = d.count(OVERLOADED);
  await assert.rejects(d.client(NO_RETRY).rpc.estimateTokensBatch({ texts: ["a", "b"] }), (e: unknown) => {
    assertOverloaded(e);
    assert.match((e as PostcompactError).details, /limits\.max_calls_in_flight \(2\)/);
    return true;
  });
  await d.waitLog(OVERLOADED, before + 1);

  // A policy spent on refusals ends with the daemon's OVERLOADED, not DAEMON_UNAVAILABLE, after
  // exactly its attempts, each at least the daemon's 100 ms after the last.
  before = d.count(OVERLOADED);
  const begin = Date.now();
  await assert.rejects(d.client({ maxAttempts: 3 }).rpc.estimateTokensBatch({ texts: ["a"] }), assertOverloaded);
  const took = Date.now() - begin;
  assert.ok(took >= 195, `3 attempts took ${took} ms: the retries did not wait the RetryInfo's 100 ms`);
  await d.waitLog(OVERLOADED, before + 3);
  await sleep(300);
  assert.equal(d.count(OVERLOADED) - before, 3);

  d.release();
  await Promise.all(reads);
});

test("an OVERLOADED Compact is retried and applied once", { timeout: 90_000 }, async () => {
  const d = await held();
  const { session, reads } = await d.fill();
  // Compact is not idempotent, yet an OVERLOADED Compact is retried: it was not applied.
  const compacted = session.compact();
  compacted.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
  await d.waitLog(OVERLOADED, 2); // refused, then refused again on its retry
  d.release();
  await Promise.all(reads);
  assert.equal((await compacted).compaction, 1);
});

test("a permanent limit (TOO_MANY_SESSIONS) is not retried", { timeout: 60_000 }, async () => {
  const d = await held();
  const c = d.client();
  for (let i = 0; i < 4; i++) await c.openSession({ cwd: d.root, sessionId: `full-${i}` });
  const refused = '"reason": "TOO_MANY_SESSIONS"';
  const before = d.count(refused);
  await assert.rejects(c.openSession({ cwd: d.root, sessionId: "full-4" }), (e: unknown) => {
    assert.ok(e instanceof PostcompactError);
    assert.equal(e.reason, "TOO_MANY_SESSIONS");
    assert.equal(e.retryAfterMs, undefined);
    return true;
  });
  await sleep(300); // a retry would have come within the first backoff
  assert.equal(d.count(refused), before + 1); // asked once
});
