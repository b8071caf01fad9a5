// Auto-start and calls the daemon may already have applied (docs/clients.md, "Retries across a
// daemon restart"): after an auto-start only an idempotent call, or one that was never sent, is
// sent again; a daemon that answers health is not spawned again; starts are bounded by the policy.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { ClientReason, NO_RETRY, PostcompactClient, PostcompactError, type AutoStartPolicy } from "../../src/index.js";
import { startFakeServer, type FakeServer } from "../fixtures/fake-server.js";

const tmp = mkdtempSync("/tmp/pc-node-resend-");
after(() => rmSync(tmp, { recursive: true, force: true }));

/** A Unix-socket proxy in front of the fake daemon; `cut()` drops every connection through it. */
async function startProxy(listen: string, upstream: string): Promise<{ cut: () => void; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket): void => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => undefined);
  };
  const server = net.createServer((client) => {
    const up = net.connect(upstream);
    track(client);
    track(up);
    client.pipe(up);
    up.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(listen, resolve));
  return {
    cut: () => {
      for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("auto-start after a call the daemon may have applied", () => {
  let fake: FakeServer;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let armed = false;
  // Applied, then the connection is dropped before the answer: the daemon "went away" after it
  // acted. The fake stays up, so auto-start's health check finds it serving.
  const applyThenCut = (answer: unknown) => () => {
    if (armed) {
      armed = false;
      proxy.cut();
    }
    return answer;
  };
  const count = (method: string): number => fake.calls.filter((c) => c.method === method).length;
  const env = { XDG_RUNTIME_DIR: join(tmp, "run") };
  // A spawn would fail: nothing may be spawned while a daemon answers health.
  const options = { address: `unix://${join(tmp, "proxy.sock")}`, autoStart: true, daemonBin: "/nonexistent/postcompact", env };

  before(async () => {
    const upstream = join(tmp, "fake.sock");
    fake = await startFakeServer(`unix://${upstream}`, {
      Compact: applyThenCut({ attachments: [], decisions: [], compaction: 1 }),
      PreviewCompact: applyThenCut({ attachments: [], decisions: [], compaction: 1 }),
      ImportTranscript: applyThenCut({ sessionId: "imported", records: 1 }),
    });
    proxy = await startProxy(join(tmp, "proxy.sock"), upstream);
  });
  after(async () => {
    await proxy.close();
    await fake.stop();
  });

  test("a non-idempotent call is not sent again", async () => {
    const client = new PostcompactClient(options);
    try {
      await client.rpc.previewCompact({ sessionId: "s" }); // connected
      armed = true;
      await assert.rejects(client.rpc.compact({ sessionId: "s" }), (e: unknown) => {
        assert.ok(e instanceof PostcompactError);
        assert.equal(e.code, grpc.status.UNAVAILABLE);
        assert.ok(e.details.includes("which is not retried: the daemon may have applied it"), e.details);
        return true;
      });
      assert.equal(count("Compact"), 1);
    } finally {
      client.close();
    }
  });

  test("ImportTranscript is not sent again, even with a session id (a repeat answers ALREADY_EXISTS)", async () => {
    const client = new PostcompactClient(options);
    try {
      await client.rpc.previewCompact({ sessionId: "s" }); // connected
      armed = true;
      await assert.rejects(client.importTranscript("{}\n", { cwd: "/p", sessionId: "imported" }), (e: unknown) => {
        assert.ok(e instanceof PostcompactError);
        assert.equal(e.code, grpc.status.UNAVAILABLE);
        assert.ok(e.details.includes("failed during ImportTranscript, which is not retried"), e.details);
        return true;
      });
      assert.equal(count("ImportTranscript"), 1);
    } finally {
      client.close();
    }
  });

  test("an idempotent call is sent again", async () => {
    const client = new PostcompactClient(options);
    try {
      await client.rpc.previewCompact({ sessionId: "s" });
      const before = count("PreviewCompact");
      armed = true;
      assert.equal((await client.rpc.previewCompact({ sessionId: "s" })).compaction, 1);
      assert.equal(count("PreviewCompact") - before, 2);
    } finally {
      client.close();
    }
  });
});

describe("how often auto-start starts the daemon", () => {
  // A "daemon" that records its start, says why it will not serve, and exits.
  const spawns = join(tmp, "spawns");
  const bin = join(tmp, "record-spawn");
  writeFileSync(bin, `#!/bin/sh\necho x >> "${spawns}"\necho "postcompact: not today" >&2\n`);
  chmodSync(bin, 0o755);
  const client = (policy: AutoStartPolicy): PostcompactClient =>
    new PostcompactClient({
      address: `unix://${join(tmp, "none.sock")}`,
      autoStart: true,
      autoStartPolicy: policy,
      daemonBin: bin,
      startTimeoutMs: 60_000, // it exits: the start must not wait this out
      retry: NO_RETRY,
      env: { XDG_RUNTIME_DIR: join(tmp, "run2") },
    });
  const startFailed = (e: unknown): boolean => {
    assert.ok(e instanceof PostcompactError, String(e));
    assert.equal(e.reason, ClientReason.DAEMON_START_FAILED);
    assert.match(e.details, /exited with status 0 before serving: postcompact: not today/);
    return true;
  };

  test("at most maxStarts in a window", async () => {
    rmSync(spawns, { force: true });
    const c = client({ maxStarts: 2, windowMs: 3_600_000, initialBackoffMs: 0, maxBackoffMs: 0 });
    try {
      await assert.rejects(c.getServerInfo(), startFailed);
      await assert.rejects(c.getServerInfo(), startFailed);
      await assert.rejects(c.getServerInfo(), (e: unknown) => {
        assert.ok(e instanceof PostcompactError);
        assert.equal(e.reason, ClientReason.DAEMON_UNAVAILABLE);
        assert.match(e.details, /auto-start: not started again: 2 starts in the last 3600 s/);
        return true;
      });
      assert.equal(readFileSync(spawns, "utf8"), "x\nx\n");
    } finally {
      c.close();
    }
  });

  test("the next start waits out the back-off", async () => {
    rmSync(spawns, { force: true });
    const c = client({ initialBackoffMs: 3_600_000, maxBackoffMs: 3_600_000 });
    try {
      await assert.rejects(c.getServerInfo(), startFailed);
      await assert.rejects(c.getServerInfo(), (e: unknown) => {
        assert.ok(e instanceof PostcompactError);
        assert.equal(e.reason, ClientReason.DAEMON_UNAVAILABLE);
        assert.match(e.details, /the last start failed \(.*postcompact: not today\)/);
        return true;
      });
      assert.equal(readFileSync(spawns, "utf8"), "x\n");
    } finally {
      c.close();
    }
  });
});
