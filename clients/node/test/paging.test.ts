// ListSessions is paged (100 a page by default): `listSessions()` walks every page,
// `listSessionsPage()` returns one, against the real daemon.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { PostcompactClient, waitForHealth } from "../src/index.js";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const PYTHON = process.env["POSTCOMPACT_PYTHON"] || join(REPO, ".venv", "bin", "python");

const dir = mkdtempSync("/tmp/pcn-page-");
let daemon: ChildProcess | undefined;

after(async () => {
  const child = daemon;
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

test("listSessions returns every page in id order; listSessionsPage one page", { timeout: 60_000 }, async () => {
  assert.ok(existsSync(PYTHON), `${PYTHON} not found: run \`make build\` first`);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("POSTCOMPACT_")) env[k] = v;
  Object.assign(env, { XDG_RUNTIME_DIR: join(dir, "run"), XDG_CONFIG_HOME: join(dir, "config"), XDG_STATE_HOME: join(dir, "state"), HOME: dir });
  const sock = join(dir, "d.sock");
  daemon = spawn(PYTHON, ["-m", "postcompact", "serve", "--socket", sock], { env, stdio: "ignore" });
  assert.ok(await waitForHealth(`unix://${sock}`, { timeoutMs: 30_000 }), "the daemon did not start");
  const project = join(dir, "project");
  mkdirSync(project);

  const client = new PostcompactClient({ address: `unix://${sock}`, autoStart: false });
  try {
    const n = 130; // more than the daemon's default page of 100
    const want: string[] = [];
    for (let i = n - 1; i >= 0; i--) {
      // opened out of order: the list sorts them
      const id = `page-${String(i).padStart(3, "0")}`;
      await client.openSession({ cwd: project, sessionId: id });
      want.push(id);
    }
    want.sort();

    assert.deepEqual(
      (await client.listSessions()).map((s) => s.sessionId),
      want,
    );

    const first = await client.listSessionsPage();
    assert.deepEqual(
      first.sessions.map((s) => s.sessionId),
      want.slice(0, 100),
    );
    assert.notEqual(first.nextPageToken, "");
    assert.equal(first.totalSessions, n);

    const sizes: number[] = [];
    const walked: string[] = [];
    let pageToken = "";
    do {
      const page = await client.listSessionsPage({ pageSize: 50, pageToken });
      sizes.push(page.sessions.length);
      walked.push(...page.sessions.map((s) => s.sessionId));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    assert.deepEqual(sizes, [50, 50, 30]);
    assert.deepEqual(walked, want);
  } finally {
    client.close();
  }
});
