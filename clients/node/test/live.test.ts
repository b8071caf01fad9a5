// Discovery against the real daemon (not a fake): auto-start through POSTCOMPACT_BIN into an
// isolated runtime directory, then loopback TCP with the token found through server.json.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, test } from "node:test";
import { ClientReason, PostcompactClient, PostcompactError, readServerJson } from "../src/index.js";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const PYTHON = process.env["POSTCOMPACT_PYTHON"] || join(REPO, ".venv", "bin", "python");

const dir = mkdtempSync("/tmp/pcn-live-");
const xdg = join(dir, "run");
let daemonPid: number | undefined;
after(() => {
  if (daemonPid) {
    try {
      process.kill(daemonPid, "SIGTERM");
    } catch {
      // gone already
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

test("auto-start of the real daemon, then TCP with the token from server.json", async () => {
  assert.ok(existsSync(PYTHON), `${PYTHON} not found: run \`make build\` first`);
  const bin = join(dir, "postcompact");
  writeFileSync(bin, `#!/bin/sh\nexec "${PYTHON}" -m postcompact "$@"\n`);
  chmodSync(bin, 0o755);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("POSTCOMPACT_")) env[k] = v;
  Object.assign(env, { XDG_RUNTIME_DIR: xdg, XDG_CONFIG_HOME: join(dir, "config"), HOME: dir, POSTCOMPACT_BIN: bin, POSTCOMPACT_TCP_PORT: "0" });

  const unix = new PostcompactClient({ env });
  try {
    const info = await unix.getServerInfo();
    daemonPid = Number(info.pid);
    assert.equal(info.apiVersion, "postcompact.v1");
    assert.equal(info.socketPath, join(xdg, "postcompact", "daemon.sock"));
    assert.ok(info.tcpPort > 0, "POSTCOMPACT_TCP_PORT=0 reached the started daemon");
    const sj = readServerJson(join(xdg, "postcompact"));
    assert.equal(sj?.pid, daemonPid);

    const tcp = new PostcompactClient({ address: `127.0.0.1:${info.tcpPort}`, env });
    try {
      assert.equal((await tcp.getServerInfo()).pid, daemonPid); // token: server.json token_file
    } finally {
      tcp.close();
    }
    const wrong = new PostcompactClient({ address: `127.0.0.1:${info.tcpPort}`, env, token: "wrong" });
    try {
      await assert.rejects(wrong.getServerInfo(), (e: unknown) => e instanceof PostcompactError && e.codeName === "UNAUTHENTICATED");
    } finally {
      wrong.close();
    }

    // An AbortSignal cancels a call: before it is sent (it never is) and right after.
    const isAborted = (e: unknown) => e instanceof PostcompactError && e.codeName === "CANCELLED" && e.reason === "ABORTED";
    const before = new AbortController();
    before.abort();
    await assert.rejects(unix.getStats({ signal: before.signal }), isAborted);
    const during = new AbortController();
    const call = unix.getStats({ signal: during.signal });
    during.abort();
    await assert.rejects(call, isAborted);
    const untouched = new AbortController();
    assert.ok((await unix.getStats({ signal: untouched.signal })).sessions >= 0); // not fired: answered
  } finally {
    unix.close();
  }
});

test("an auto-started real daemon that cannot start: its first error line, at once", async () => {
  const bin = join(dir, "postcompact-broken");
  writeFileSync(bin, `#!/bin/sh\nexec "${PYTHON}" -m postcompact "$@"\n`);
  chmodSync(bin, 0o755);
  const base = join(dir, "broken");
  mkdirSync(join(base, "config", "postcompact"), { recursive: true });
  writeFileSync(join(base, "config", "postcompact", "config.toml"), "[policy]\nfoo = 1\n");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("POSTCOMPACT_")) env[k] = v;
  Object.assign(env, { XDG_RUNTIME_DIR: join(base, "run"), XDG_CONFIG_HOME: join(base, "config"), XDG_STATE_HOME: join(base, "state"), HOME: base, POSTCOMPACT_BIN: bin });
  const client = new PostcompactClient({ env, startTimeoutMs: 120_000 });
  try {
    await assert.rejects(client.getServerInfo(), (e: unknown) => {
      assert.ok(e instanceof PostcompactError);
      assert.equal(e.reason, ClientReason.DAEMON_START_FAILED);
      assert.match(e.details, /exited with status 2 before serving: postcompact: configuration error: .*unknown key policy\.foo/);
      return true;
    });
  } finally {
    client.close();
  }
  // The daemon said so in its log, in the state directory.
  const log = readFileSync(join(base, "state", "postcompact", "daemon.log"), "utf8");
  assert.match(log, /unknown key policy\.foo/);
});
