// The plugin's hooks called as OpenCode calls them, against the real daemon (started here on a
// socket of its own, state kept across its restarts) or none: how the daemon is found, what the
// user is told when it cannot be reached, that a request never waits out the client's timeouts,
// and that a compaction whose restoration failed is restored by a later request.
// tests/opencode/run_e2e.py runs the plugin in the real OpenCode.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, describe, test } from "node:test";

import type { PluginInput } from "@opencode-ai/plugin";
import { PostcompactClient, waitForHealth } from "@postcompact/client";

import { findDaemonBin, within } from "../src/daemon.js";
import { PostcompactPlugin, unreachableMessage } from "../src/plugin.js";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const PYTHON = process.env["POSTCOMPACT_PYTHON"] || join(REPO, ".venv", "bin", "python");
/** What every test's bound on a hook call is checked against: the client's own waits are 2 s (a
 * health check), 10 s (its retries) and the call deadlines; the plugin's is about 1 s. */
const STALL_BOUND_MS = 5000;

const tmp = mkdtempSync("/tmp/pc-opencode-");
after(() => rmSync(tmp, { recursive: true, force: true }));

type Hooks = Awaited<ReturnType<typeof PostcompactPlugin>>;
type Messages = Parameters<NonNullable<Hooks["experimental.chat.messages.transform"]>>[1]["messages"];

interface Seen {
  logs: { level: string; message: string; extra?: Record<string, unknown> }[];
  toasts: { title?: string; message: string; variant: string }[];
}

/** OpenCode's side of the plugin: the SDK client's log and toast, recorded. */
function openCode(directory: string): { input: PluginInput; seen: Seen } {
  const seen: Seen = { logs: [], toasts: [] };
  const client = {
    app: {
      log: async (o: { body: Seen["logs"][number] }) => {
        seen.logs.push(o.body);
        return { data: true };
      },
    },
    tui: {
      showToast: async (o: { body: Seen["toasts"][number] }) => {
        seen.toasts.push(o.body);
        return { data: true };
      },
    },
  };
  return { input: { client, directory, worktree: directory } as unknown as PluginInput, seen };
}

/** A history after OpenCode's compaction: a summary, then the user message the restoration goes in. */
function afterSummary(sessionID: string, summaryId = "msg_summary"): Messages {
  return [
    { info: { id: "msg_first", sessionID, role: "user" }, parts: [{ id: "prt_a", sessionID, messageID: "msg_first", type: "text", text: "Refactor" }] },
    { info: { id: summaryId, sessionID, role: "assistant", summary: true }, parts: [] },
    { info: { id: "msg_continue", sessionID, role: "user" }, parts: [{ id: "prt_b", sessionID, messageID: "msg_continue", type: "text", text: "Continue" }] },
  ] as unknown as Messages;
}

/** The text of the user message after the summary, once the hook ran (bounded: never more than
 * STALL_BOUND_MS, or the call is reported as stalled). */
async function request(hooks: Hooks, messages: Messages): Promise<string> {
  const done = await within(
    hooks["experimental.chat.messages.transform"]!({}, { messages }).then(() => "returned"),
    STALL_BOUND_MS,
    "stalled",
  );
  assert.equal(done, "returned", `the request waited for the daemon ${STALL_BOUND_MS} ms or more`);
  const user = messages[2] as unknown as { parts: { text?: string }[] };
  return user.parts.map((p) => p.text ?? "").join("\n");
}

async function read(hooks: Hooks, sessionID: string, filePath: string): Promise<void> {
  await hooks["tool.execute.after"]!({ tool: "read", sessionID, callID: "c1", args: { filePath } }, { title: "", output: "", metadata: {} });
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting (${ms} ms) for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A real daemon on `dir/d.sock`, its state in `dir/state`: kept across stop() and start(). */
class Daemon {
  readonly address: string;
  private child: ChildProcess | undefined;
  private readonly env: Record<string, string> = {};

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 }); // the socket's directory must be private
    this.address = `unix://${join(dir, "d.sock")}`;
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("POSTCOMPACT_")) this.env[k] = v;
    Object.assign(this.env, { XDG_RUNTIME_DIR: join(dir, "run"), XDG_CONFIG_HOME: join(dir, "config"), XDG_STATE_HOME: join(dir, "state"), HOME: dir });
  }

  async start(): Promise<void> {
    assert.ok(existsSync(PYTHON), `${PYTHON} not found: run \`make build\` first`);
    this.child = spawn(PYTHON, ["-m", "postcompact", "serve", "--socket", join(this.dir, "d.sock")], { env: this.env, stdio: "ignore" });
    if (!(await waitForHealth(this.address, { timeoutMs: 30_000 }))) throw new Error("the daemon did not start");
  }

  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGCONT");
    child.kill("SIGTERM");
    await exited;
  }

  /** The daemon's cached entries of session `id` (0 while it has none, or no such session). */
  async entries(id: string): Promise<number> {
    const c = new PostcompactClient({ address: this.address });
    try {
      return (await c.listSessions()).find((s) => s.sessionId === id)?.cachedEntries ?? 0;
    } finally {
      c.close();
    }
  }
}

describe("finding the executable that starts the daemon", () => {
  const root = join(tmp, "bins");
  const exe = (path: string) => {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, "#!/bin/sh\n");
    chmodSync(path, 0o755);
    return path;
  };
  const checkout = join(root, "checkout");
  const pluginDir = join(checkout, "clients", "opencode");
  const venv = join(checkout, ".venv", "bin", "postcompact");
  const home = join(root, "home");
  const local = join(home, ".local", "bin", "postcompact");
  const onPath = join(root, "path", "postcompact");

  test("the option, POSTCOMPACT_BIN, PATH, the checkout's .venv, ~/.local/bin: the first there", () => {
    for (const p of [venv, local, onPath]) exe(p);
    const env = { PATH: `/nonexistent:${join(root, "path")}`, POSTCOMPACT_BIN: "/opt/pc/postcompact" };
    assert.deepEqual(
      [
        findDaemonBin({ option: "/my/postcompact", env, pluginDir, home }),
        findDaemonBin({ env, pluginDir, home }),
        findDaemonBin({ env: { PATH: env.PATH }, pluginDir, home }),
        findDaemonBin({ env: { PATH: "/nonexistent" }, pluginDir, home }),
      ].map((f) => [f.bin, f.source]),
      [
        ["/my/postcompact", "option"],
        ["/opt/pc/postcompact", "POSTCOMPACT_BIN"],
        [onPath, "PATH"],
        [venv, "checkout"],
      ],
    );
    rmSync(venv);
    const f = findDaemonBin({ env: { PATH: "/nonexistent" }, pluginDir, home });
    assert.deepEqual([f.bin, f.source], [local, "~/.local/bin"]);
  });

  test("none: nothing to start, and every place looked at is named", () => {
    rmSync(root, { recursive: true, force: true });
    const f = findDaemonBin({ env: { PATH: "/nonexistent" }, pluginDir, home });
    assert.equal(f.bin, undefined);
    assert.deepEqual(f.tried, ["postcompact on PATH", venv, local]);
  });
});

describe("a daemon that cannot be reached", () => {
  test("the requests do not wait for it, nothing is restored, and each session is told once, visibly", async () => {
    const project = mkdtempSync(join(tmp, "p-"));
    writeFileSync(join(project, "a.py"), "x = 1\n");
    const { input, seen } = openCode(project);
    const hooks = await PostcompactPlugin(input, { address: `unix://${join(project, "nobody.sock")}` });
    try {
      for (const sid of ["ses_one", "ses_two"]) {
        await read(hooks, sid, join(project, "a.py"));
        for (let n = 0; n < 3; n++) {
          const text = await request(hooks, afterSummary(sid));
          assert.equal(text, "Continue", "nothing is put in the request");
        }
      }
      await until("both sessions told", () => seen.toasts.length >= 2);
      assert.deepEqual(
        seen.toasts.map((t) => [t.title, t.variant]),
        [
          ["postcompact", "warning"],
          ["postcompact", "warning"],
        ],
      );
      assert.match(seen.toasts[0].message, /no daemon answered at unix:\/\/.*nobody\.sock/);
      assert.match(seen.toasts[0].message, /auto-start is off/);
      const warnings = seen.logs.filter((l) => l.level === "warn");
      assert.deepEqual(
        warnings.map((w) => [w.message, w.extra?.["sessionID"]]),
        seen.toasts.map((t, i) => [t.message, ["ses_one", "ses_two"][i]]),
        "one warning in OpenCode's log per toast",
      );
    } finally {
      await hooks.dispose?.();
    }
  });

  test("no executable to start it: the message names where the plugin looked", () => {
    const nowhere = join(tmp, "nowhere");
    const found = findDaemonBin({ env: { PATH: "/nonexistent" }, pluginDir: join(nowhere, "clients", "opencode"), home: nowhere });
    const error = new Error("no postcompact daemon at unix:///run/pc/daemon.sock (auto-start is off)");
    const message = unreachableMessage({ error, at: 0, address: "unix:///run/pc/daemon.sock", attempt: true }, true, found);
    assert.match(message, /^postcompact: no daemon answered at unix:\/\/\/run\/pc\/daemon\.sock; /);
    assert.ok(
      message.includes(`no postcompact executable to start it (looked at: postcompact on PATH, ${nowhere}/.venv/bin/postcompact, ${nowhere}/.local/bin/postcompact; set POSTCOMPACT_BIN or the plugin's daemonBin option)`),
      message,
    );
  });
});

describe("the end of a run", () => {
  test("a read recorded just before OpenCode disposes the plugin reaches the daemon, with no warning", { timeout: 60_000 }, async () => {
    const daemon = new Daemon(join(tmp, "end"));
    await daemon.start();
    const project = mkdtempSync(join(tmp, "p-"));
    const file = join(project, "last.py");
    writeFileSync(file, "def last():\n    return 9\n");
    const { input, seen } = openCode(project);
    const hooks = await PostcompactPlugin(input, { address: daemon.address });
    try {
      await read(hooks, "ses_end", file); // queued: the plugin is still connecting
      await hooks.dispose?.();
      assert.equal(await daemon.entries("opencode-ses_end"), 1, "the last read was lost");
      const warned = seen.logs.filter((l) => l.level === "warn");
      assert.deepEqual(warned, [], "a warning at the end of the run");
    } finally {
      await daemon.stop();
    }
  });
});

describe("a daemon that goes away and comes back", () => {
  test("a request while it is stopped (SIGSTOP) returns within the bound; a later one is restored", { timeout: 60_000 }, async () => {
    const daemon = new Daemon(join(tmp, "hung"));
    await daemon.start();
    const project = mkdtempSync(join(tmp, "p-"));
    const file = join(project, "a.py");
    writeFileSync(file, "def f():\n    return 1\n");
    const { input, seen } = openCode(project);
    const hooks = await PostcompactPlugin(input, { address: daemon.address });
    try {
      await read(hooks, "ses_hung", file);
      await until("the read recorded", async () => (await daemon.entries("opencode-ses_hung")) >= 1);
      daemon.signal("SIGSTOP");
      assert.equal(await request(hooks, afterSummary("ses_hung")), "Continue", "nothing while the daemon is stopped");
      daemon.signal("SIGCONT");
      await until("the daemon answers again", () => waitForHealth(daemon.address, { timeoutMs: 5000 }));
      const text = await request(hooks, afterSummary("ses_hung"));
      assert.ok(text.includes(file) && text.includes("return 1"), `the next request is restored:\n${text}`);
      assert.ok(
        seen.logs.some((l) => l.level === "info" && /restored 1 file\(s\)/.test(l.message)),
        `the restoration is logged at INFO: ${JSON.stringify(seen.logs)}`,
      );
    } finally {
      await hooks.dispose?.();
      await daemon.stop();
    }
  });

  test("after a transport error the next request tries again (and reconnects), not giving up", { timeout: 60_000 }, async () => {
    const daemon = new Daemon(join(tmp, "restart"));
    await daemon.start();
    const project = mkdtempSync(join(tmp, "p-"));
    const file = join(project, "b.py");
    writeFileSync(file, "def g():\n    return 2\n");
    const { input, seen } = openCode(project);
    const hooks = await PostcompactPlugin(input, { address: daemon.address });
    try {
      await read(hooks, "ses_back", file);
      await until("the read recorded", async () => (await daemon.entries("opencode-ses_back")) >= 1);
      await daemon.stop();
      assert.equal(await request(hooks, afterSummary("ses_back")), "Continue", "nothing while the daemon is down");
      // The Compact it started fails at the transport (after the client's short retries): the
      // user is told, once.
      await until("the user told", () => seen.toasts.length >= 1);
      assert.equal(await request(hooks, afterSummary("ses_back")), "Continue");
      await daemon.start(); // the same socket and state
      const text = await request(hooks, afterSummary("ses_back"));
      assert.ok(text.includes(file) && text.includes("return 2"), `the next request is restored:\n${text}`);
      assert.equal(seen.toasts.length, 1, "told once");
      // Restored once: the later requests of the same summary carry the same, with no Compact.
      assert.equal(await request(hooks, afterSummary("ses_back")), text);
      const c = new PostcompactClient({ address: daemon.address });
      try {
        const info = (await c.listSessions()).find((s) => s.sessionId === "opencode-ses_back");
        assert.equal(info?.compactions, 1);
      } finally {
        c.close();
      }
    } finally {
      await hooks.dispose?.();
      await daemon.stop();
    }
  });
});
