// Recovery across a daemon restart (docs/clients.md, "Retries") against the real daemon:
// idempotent calls made while it is restarted (SIGTERM or kill -9, then a new daemon on the same
// socket and state) succeed with the state intact; a Compact that was never sent is retried; a
// daemon gone for good is DAEMON_UNAVAILABLE within the retry bound.
import assert from "node:assert/strict";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { ClientReason, PostcompactClient, PostcompactError, backoffMs, isIdempotent, waitForHealth } from "../src/index.js";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const PYTHON = process.env["POSTCOMPACT_PYTHON"] || join(REPO, ".venv", "bin", "python");

const dir = mkdtempSync("/tmp/pcn-rec-");
const sock = join(dir, "d.sock");
const address = `unix://${sock}`;
let daemon: ChildProcess | undefined;

const env: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("POSTCOMPACT_")) env[k] = v;
Object.assign(env, { XDG_RUNTIME_DIR: join(dir, "run"), XDG_CONFIG_HOME: join(dir, "config"), XDG_STATE_HOME: join(dir, "state"), HOME: dir });

async function start(): Promise<void> {
  const child = spawn(PYTHON, ["-m", "postcompact", "serve", "--socket", sock], { env, stdio: "ignore" });
  daemon = child;
  if (!(await waitForHealth(address, { timeoutMs: 30_000 }))) throw new Error("the daemon did not start");
}

async function stop(signal: NodeJS.Signals): Promise<void> {
  const child = daemon;
  daemon = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill(signal);
  await exited;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

after(async () => {
  await stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

test("the idempotence table and the backoff", () => {
  for (const m of ["GetStats", "CheckWrite", "SetPlan", "UpsertTask", "TruncateTokens"]) assert.ok(isIdempotent(m, {}), m);
  for (const m of ["ReadFile", "Compact", "SetCatalog", "StartAgent", "CloseSession", "MergeFileState", "ImportTranscript"]) assert.ok(!isIdempotent(m, {}), m);
  assert.ok(!isIdempotent("ImportTranscript", { sessionId: "s", cwd: "/" })); // a repeat answers ALREADY_EXISTS
  assert.ok(isIdempotent("OpenSession", { sessionId: "s", cwd: "/" }));
  assert.ok(!isIdempotent("OpenSession", { cwd: "/" }));
  assert.ok(isIdempotent("RecordRead", { timestampMs: 5 }));
  assert.ok(!isIdempotent("RecordRead", { timestampMs: 0 }));
  assert.ok(isIdempotent("RecordSkill", { invokedAtMs: 5 }));
  assert.ok(!isIdempotent("RecordSkill", {}));
  assert.deepEqual([1, 2, 5, 6, 7].map((n) => backoffMs({ jitter: 0 }, n)), [50, 100, 800, 1000, 1000]);
});

test("idempotent calls go on across SIGTERM and kill -9 restarts; the state stays", { timeout: 60_000 }, async () => {
  assert.ok(existsSync(PYTHON), `${PYTHON} not found: run \`make build\` first`);
  const project = join(dir, "project");
  mkdirSync(project);
  const a = join(project, "a.ts");
  writeFileSync(a, "export const a = 1;\n");
  await start();
  const client = new PostcompactClient({ address, timeoutMs: 10_000 });
  try {
    const s = await client.openSession({ cwd: project, sessionId: "recover-node" });
    await s.recordRead(a, "export const a = 1;\n", { timestampMs: Date.now() });
    const TS = 1_700_000_000_000;
    await s.recordSkill({ name: "review", path: "/skills/review.md", content: "look", invokedAtMs: TS });

    for (const signal of ["SIGTERM", "SIGKILL"] as const) {
      let calls = 0;
      let running = true;
      const loop = (async () => {
        for (let n = 1; running; n++) {
          assert.equal((await s.checkWrite(a)).result, "WRITE_CHECK_ALLOWED");
          await s.recordSkill({ name: `k${n % 5}`, content: "x", invokedAtMs: TS + n });
          await client.listSessions();
          calls += 3;
        }
      })();
      await sleep(300);
      const before = calls;
      await stop(signal);
      await sleep(1000);
      await start();
      const atRestart = calls;
      for (let i = 0; i < 200 && calls < atRestart + 6; i++) await sleep(50);
      running = false;
      await loop; // rejects when a call failed
      assert.ok(before > 0 && calls >= atRestart + 6, `${signal}: ${before} ${atRestart} ${calls}`);
    }
    assert.equal(await s.recordSkill({ name: "review", path: "/skills/review.md", content: "look", invokedAtMs: TS }), 6);
    assert.ok((await client.openSession({ cwd: project, sessionId: "recover-node" })).resumed);

    // Not idempotent, but never sent: a Compact while the daemon is down waits for it.
    await s.readFile(a);
    await stop("SIGTERM");
    const restarted = sleep(1000).then(start);
    const res = await s.compact();
    await restarted;
    assert.ok(res.decisions.length > 0);
  } finally {
    client.close();
  }

  // Gone for good: DAEMON_UNAVAILABLE naming the address, within the bound.
  await stop("SIGTERM");
  const gone = new PostcompactClient({ address, retry: { maxElapsedMs: 2000 } });
  await assert.rejects(gone.session("recover-node").checkWrite(a), (e: unknown) => {
    assert.ok(e instanceof PostcompactError);
    assert.equal(e.reason, ClientReason.DAEMON_UNAVAILABLE);
    assert.equal(e.codeName, "UNAVAILABLE");
    assert.ok(e.message.includes(address) && e.message.includes("CheckWrite"), e.message);
    assert.equal(e.info["address"], address);
    // It retried before giving up (the bound is 2 s of backoff, far below the attempt cap).
    assert.ok(Number(e.info["attempts"]) > 3, `attempts ${e.info["attempts"]}`);
    return true;
  });
  gone.close();
});

test("a Compact right after a restart the client's event loop did not see is sent to the new daemon", { timeout: 120_000 }, async () => {
  // `postcompact stop` and `start` run synchronously: the event loop is blocked while the daemon
  // says GOAWAY (waiting its shutdown grace for the client's answer, then GOAWAY code 11) and
  // goes, so the client's channel still looks ready when the Compact is made. It was written on
  // the dead connection and failed RESOURCE_EXHAUSTED "Bandwidth exhausted or memory limit
  // exceeded" (grpc-js's name for that code), not retried, though the old daemon never saw it.
  const base = mkdtempSync("/tmp/pcn-goaway-");
  const socket = join(base, "d.sock");
  const benv: Record<string, string> = { ...env, XDG_RUNTIME_DIR: join(base, "run"), XDG_CONFIG_HOME: join(base, "config"), XDG_STATE_HOME: join(base, "state"), HOME: base };
  const cli = (...args: string[]): void => {
    execFileSync(PYTHON, ["-m", "postcompact", ...args, "--socket", socket], { env: benv, stdio: "ignore", timeout: 60_000 });
  };
  const project = join(base, "project");
  mkdirSync(project);
  const a = join(project, "a.ts");
  writeFileSync(a, "export const a = 1;\n");
  cli("start");
  const client = new PostcompactClient({ address: `unix://${socket}`, timeoutMs: 10_000 });
  try {
    const s = await client.openSession({ cwd: project, sessionId: "goaway-node" });
    await s.readFile(a);
    cli("stop");
    cli("start");
    const res = await s.compact();
    assert.ok(res.decisions.length > 0);
  } finally {
    client.close();
    try {
      cli("stop");
    } catch {
      // not running
    }
    rmSync(base, { recursive: true, force: true });
  }
});
