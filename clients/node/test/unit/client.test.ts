import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { ClientReason, PostcompactClient, PostcompactError, joinAttachments, joinRenderedText, readServerJson, type Attachment } from "../../src/index.js";
import { daemonError, startFakeServer, type FakeServer } from "../fixtures/fake-server.js";

const tmp = mkdtempSync("/tmp/pc-node-cli-");
after(() => rmSync(tmp, { recursive: true, force: true }));

describe("over a Unix socket (fake daemon)", () => {
  let fake: FakeServer;
  let client: PostcompactClient;
  before(async () => {
    fake = await startFakeServer(`unix://${join(tmp, "u.sock")}`, {
      OpenSession: (r) => ({ sessionId: r["sessionId"] || "s-1", resumed: false, session: { cwd: r["cwd"] } }),
      ReadFile: (r) => {
        if (r["path"] === "missing.ts")
          throw daemonError(grpc.status.NOT_FOUND, "FILE_NOT_FOUND", "no such file: missing.ts", { path: "missing.ts" });
        return { path: `/p/${String(r["path"])}`, text: Buffer.from("1\théllo"), content: Buffer.from("héllo"), totalLines: 1 };
      },
      RecordRead: (r) => ({ path: r["path"] }),
      Compact: () => ({
        attachments: [
          { kind: "ATTACHMENT_KIND_FILE", placement: "PLACEMENT_USER", blocks: ["call a", "result a"], file: { path: "/p/a" } },
          { kind: "ATTACHMENT_KIND_TASK_STATUS", placement: "PLACEMENT_SYSTEM", blocks: ["task"], taskStatus: { taskId: "t" } },
          { kind: "ATTACHMENT_KIND_FILE", placement: "PLACEMENT_USER", blocks: ["call b", "result b", "note b"], file: { path: "/p/b" } },
          { kind: "ATTACHMENT_KIND_INVOKED_SKILLS", placement: "PLACEMENT_SYSTEM", blocks: ["skills"], invokedSkills: { skills: [] } },
        ],
        decisions: [{ subject: "SUBJECT_FILE", name: "/p/a", outcome: "OUTCOME_RESTORED", rank: 1 }],
        compaction: 1,
      }),
      EstimateTokens: (r) => ({ tokens: (r["text"] as Buffer).length }),
      ImportTranscript: (r) => ({
        sessionId: r["sessionId"] || "from-transcript",
        records: 9,
        events: 3,
        boundaries: [{ uuid: "b1", line: 6, recorded: [{ kind: "file", path: "/orig/a.ts" }], restored: [{ kind: "file", path: "/orig/a.ts" }] }],
        warnings: ["line 7: skipped"],
      }),
    });
    client = new PostcompactClient({ address: fake.address });
  });
  after(async () => {
    client.close();
    await fake.stop();
  });

  test("an explicit address turns auto-start off", () => {
    assert.equal(client.autoStart, false);
    assert.equal(client.address.source, "explicit");
  });

  test("openSession + readFile decode to strings", async () => {
    const s = await client.openSession({ cwd: "/p", policy: { maxFiles: 2, oversize: "REFERENCE", counter: "EXACT" }, profile: "CLAUDE_CODE" });
    assert.equal(s.id, "s-1");
    const open = fake.calls.find((c) => c.method === "OpenSession")!.request;
    assert.deepEqual(
      { ...(open["policy"] as object) },
      { ...(open["policy"] as object), maxFiles: 2, oversize: "OVERSIZE_POLICY_REFERENCE", counter: "TOKEN_COUNTER_EXACT" },
    );
    assert.equal(open["profile"], "PROFILE_CLAUDE_CODE");
    const r = await s.readFile("a.ts", { offset: 2 });
    assert.equal(r.path, "/p/a.ts");
    assert.equal(r.text, "1\théllo");
    assert.equal(r.content, "héllo");
    const req = fake.calls.find((c) => c.method === "ReadFile")!.request;
    assert.equal(req["sessionId"], "s-1");
    assert.equal(req["agentId"], "");
    assert.equal(req["offset"], 2);
    assert.equal(req["limit"], undefined); // proto3 optional left unset
  });

  test("bytes fields take strings as UTF-8 (not base64) and Uint8Array as is, at any depth", async () => {
    const s = client.session("s-1", "sub");
    await s.recordRead("b.ts", "héllo wörld");
    await s.recordRead("c.ts", new Uint8Array([0x61, 0x62]));
    const reads = fake.calls.filter((c) => c.method === "RecordRead").map((c) => c.request);
    assert.equal((reads[0]!["content"] as Buffer).toString("utf8"), "héllo wörld");
    assert.equal(reads[0]!["agentId"], "sub");
    assert.deepEqual([...(reads[1]!["content"] as Buffer)], [0x61, 0x62]);
    await s.compact({
      kind: "PARTIAL",
      preservedMessages: [
        { role: "USER", content: [{ text: "ünïcode" }] },
        { role: "ASSISTANT", content: [{ toolResult: { toolUseId: "t1", content: "réad" } }] },
      ],
    });
    const c = fake.calls.find((x) => x.method === "Compact")!.request;
    assert.equal(c["kind"], "COMPACT_KIND_PARTIAL");
    const msgs = c["preservedMessages"] as { role: string; content: { text?: Buffer; toolResult?: { content: Buffer } }[] }[];
    assert.equal(msgs[0]!.role, "ROLE_USER");
    assert.equal(msgs[0]!.content[0]!.text!.toString("utf8"), "ünïcode");
    assert.equal(msgs[1]!.content[0]!.toolResult!.content.toString("utf8"), "réad");
    assert.equal(await client.estimateTokens("ééé"), 6); // 6 UTF-8 bytes reached the server
  });

  test("compact returns ordered attachments and decisions", async () => {
    const res = await client.session("s-1").compact();
    assert.equal(res.attachments.length, 4);
    assert.equal(res.attachments[0]!.kind, "ATTACHMENT_KIND_FILE");
    assert.equal(res.attachments[0]!.payload, "file");
    assert.equal(res.attachments[0]!.file!.path, "/p/a");
    assert.equal(res.decisions[0]!.outcome, "OUTCOME_RESTORED");
    assert.equal(res.attachments[1]!.placement, "PLACEMENT_SYSTEM");
    assert.deepEqual(res.attachments[2]!.blocks, ["call b", "result b", "note b"]);
    // joined by the client: every block in order, and the user/system split
    assert.equal(res.renderedText, "call a\nresult a\ntask\ncall b\nresult b\nnote b\nskills");
    assert.deepEqual(res.userBlocks, ["call a", "result a", "call b", "result b", "note b"]);
    assert.equal(res.systemText, "task\n\nskills");
    assert.equal(res.compaction, 1);
    await client.session("s-1").compact({ includeContent: true });
    const sent = fake.calls.filter((x) => x.method === "Compact").map((x) => x.request);
    assert.equal(sent.at(-2)!["includeContent"], false); // off by default
    assert.equal(sent.at(-1)!["includeContent"], true);
  });

  test("importTranscript builds the request as openSession does and returns the response", async () => {
    const jsonl = '{"type":"user","cwd":"/orig"}\n';
    const res = await client.importTranscript(jsonl, {
      cwd: "/p",
      sessionId: "s-imp",
      pathMap: { "/orig": "/p", "C:\\work": "/w" },
      profile: "claude-code-2.1.88",
      policy: { maxFiles: 3, oversize: "REFERENCE", carryReadState: false },
      home: "/home/me",
      replace: true,
    });
    assert.equal(res.sessionId, "s-imp");
    assert.equal(res.records, 9);
    assert.equal(res.events, 3);
    assert.equal(res.boundaries[0]!.line, 6);
    assert.deepEqual(res.boundaries[0]!.restored.map((x) => ({ ...x })), [{ kind: "file", path: "/orig/a.ts" }]);
    assert.deepEqual(res.warnings, ["line 7: skipped"]);
    const req = fake.calls.filter((c) => c.method === "ImportTranscript").at(-1)!.request;
    assert.equal((req["transcript"] as Buffer).toString("utf8"), jsonl); // UTF-8, not base64
    assert.equal(req["cwd"], "/p");
    assert.equal(req["sessionId"], "s-imp");
    assert.deepEqual((req["pathMap"] as object[]).map((m) => ({ ...m })), [
      { source: "/orig", target: "/p" },
      { source: "C:\\work", target: "/w" },
    ]);
    assert.equal(req["profile"], "PROFILE_CLAUDE_CODE_2_1_88");
    const policy = req["policy"] as Record<string, unknown>;
    assert.equal(policy["maxFiles"], 3);
    assert.equal(policy["oversize"], "OVERSIZE_POLICY_REFERENCE");
    assert.equal(policy["carryReadState"], false); // optional: sent although false
    assert.equal(req["home"], "/home/me");
    assert.equal(req["replace"], true);

    await client.importTranscript(new Uint8Array(Buffer.from(jsonl)), { cwd: "/p" });
    const bare = fake.calls.filter((c) => c.method === "ImportTranscript").at(-1)!.request;
    assert.equal((bare["transcript"] as Buffer).toString("utf8"), jsonl);
    assert.equal(bare["sessionId"], ""); // the transcript's own
    assert.deepEqual(bare["pathMap"], []);
    assert.equal(bare["profile"], "PROFILE_UNSPECIFIED");
    assert.equal(bare["replace"], false);
  });

  test("profiles by config name or enum name; an unknown one throws before any call", async () => {
    const sent = async (profile: string): Promise<unknown> => {
      await client.openSession({ cwd: "/p", profile: profile as "default" });
      return fake.calls.filter((c) => c.method === "OpenSession").at(-1)!.request["profile"];
    };
    assert.equal(await sent("default"), "PROFILE_DEFAULT");
    assert.equal(await sent("claude-code"), "PROFILE_CLAUDE_CODE");
    assert.equal(await sent("claude-code-2.1.88"), "PROFILE_CLAUDE_CODE_2_1_88");
    assert.equal(await sent("CLAUDE_CODE_2_1_88"), "PROFILE_CLAUDE_CODE_2_1_88");
    assert.equal(await sent("PROFILE_CLAUDE_CODE"), "PROFILE_CLAUDE_CODE");
    const before = fake.calls.length;
    await assert.rejects(client.openSession({ cwd: "/p", profile: "claude-code-2.1.89" as "default" }), TypeError);
    await assert.rejects(client.importTranscript("", { cwd: "/p", profile: "claude" as "default" }), TypeError);
    assert.equal(fake.calls.length, before);
  });

  test("daemon errors become PostcompactError with code and reason", async () => {
    const s = client.session("s-1");
    await assert.rejects(s.readFile("missing.ts"), (e: unknown) => {
      assert.ok(e instanceof PostcompactError);
      assert.equal(e.code, grpc.status.NOT_FOUND);
      assert.equal(e.codeName, "NOT_FOUND");
      assert.equal(e.reason, "FILE_NOT_FOUND");
      assert.equal(e.details, "no such file: missing.ts");
      assert.deepEqual(e.info, { path: "missing.ts" });
      assert.equal(e.method, "ReadFile");
      return true;
    });
  });

  test("every RPC has a raw promise method", () => {
    for (const m of ["getServerInfo", "getStats", "openSession", "closeSession", "listSessions", "startAgent", "endAgent", "mergeFileState", "readFile", "recordRead", "recordWrite", "checkWrite", "checkStale", "recordSkill", "setPlan", "setMode", "upsertTask", "setCatalog", "compact", "previewCompact", "estimateTokens", "estimateTokensBatch", "countTokens", "countTokensBatch", "truncateTokens", "truncateTokensBatch", "importTranscript"])
      assert.equal(typeof (client.rpc as unknown as Record<string, unknown>)[m], "function", m);
    assert.equal(Object.keys(client.rpc).length, 27);
  });
});

describe("joinAttachments and joinRenderedText", () => {
  const att = (placement: Attachment["placement"], ...blocks: string[]): Pick<Attachment, "placement" | "blocks"> => ({ placement, blocks });

  test("user blocks in order; system sections joined by a blank line", () => {
    const attachments = [
      att("PLACEMENT_USER", "read call a", "read result a"),
      att("PLACEMENT_SYSTEM", "task section"),
      att("PLACEMENT_USER", "read call b", "read result b", "note b"),
      att("PLACEMENT_SYSTEM", "skills section\nwith two lines"),
    ];
    assert.deepEqual(joinAttachments(attachments), {
      userBlocks: ["read call a", "read result a", "read call b", "read result b", "note b"],
      systemText: "task section\n\nskills section\nwith two lines",
    });
    assert.equal(
      joinRenderedText(attachments),
      "read call a\nread result a\ntask section\nread call b\nread result b\nnote b\nskills section\nwith two lines",
    );
  });

  test("anything not PLACEMENT_SYSTEM is user-placed; empty input joins to nothing", () => {
    assert.deepEqual(joinAttachments([att("PLACEMENT_UNSPECIFIED", "u"), att("PLACEMENT_USER", "v")]), { userBlocks: ["u", "v"], systemText: "" });
    assert.deepEqual(joinAttachments([att("PLACEMENT_SYSTEM", "only")]), { userBlocks: [], systemText: "only" });
    assert.deepEqual(joinAttachments([]), { userBlocks: [], systemText: "" });
    assert.equal(joinRenderedText([]), "");
    assert.equal(joinRenderedText([att("PLACEMENT_USER"), att("PLACEMENT_USER", "x")]), "x");
  });
});

describe("over TCP", () => {
  let fake: FakeServer;
  before(async () => {
    fake = await startFakeServer("127.0.0.1:0", { GetServerInfo: () => ({ version: "t" }) });
  });
  after(() => fake.stop());

  test("sends the token from POSTCOMPACT_TOKEN", async () => {
    const client = new PostcompactClient({ env: { POSTCOMPACT_ADDRESS: fake.address, POSTCOMPACT_TOKEN: "s3cret", XDG_RUNTIME_DIR: tmp }, autoStart: false });
    assert.equal((await client.getServerInfo()).version, "t");
    client.close();
    assert.deepEqual(fake.calls.at(-1)!.metadata.get("authorization"), ["Bearer s3cret"]);
  });

  test("sends the token from D/token", async () => {
    const xdg = join(tmp, "tcp-xdg");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(join(xdg, "postcompact"), { recursive: true });
    writeFileSync(join(xdg, "postcompact", "token"), "filetoken\n");
    const client = new PostcompactClient({ address: fake.address, env: { XDG_RUNTIME_DIR: xdg } });
    await client.getServerInfo();
    client.close();
    assert.deepEqual(fake.calls.at(-1)!.metadata.get("authorization"), ["Bearer filetoken"]);
  });

  test("no token on a Unix socket", async () => {
    const u = await startFakeServer(`unix://${join(tmp, "nt.sock")}`, { GetServerInfo: () => ({}) });
    const client = new PostcompactClient({ address: u.address, env: { POSTCOMPACT_TOKEN: "s3cret" } });
    await client.getServerInfo();
    client.close();
    assert.deepEqual(u.calls.at(-1)!.metadata.get("authorization"), []);
    await u.stop();
  });
});

describe("auto-start", () => {
  const fakeDaemon = fileURLToPath(new URL("../fixtures/fake-daemon.js", import.meta.url));
  const bin = join(tmp, "postcompact-fake");
  writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" "${fakeDaemon}" "$@"\n`);
  chmodSync(bin, 0o755);

  const killFrom = (dir: string): void => {
    const sj = readServerJson(dir);
    if (sj) process.kill(sj.pid, "SIGTERM");
  };

  test("no daemon and auto-start off: UNAVAILABLE, DAEMON_UNAVAILABLE on connect", async () => {
    const env = { XDG_RUNTIME_DIR: join(tmp, "off") };
    await assert.rejects(PostcompactClient.connect({ env, autoStart: false }), (e: unknown) => {
      assert.ok(e instanceof PostcompactError);
      assert.equal(e.code, grpc.status.UNAVAILABLE);
      assert.equal(e.reason, ClientReason.DAEMON_UNAVAILABLE);
      return true;
    });
    const client = new PostcompactClient({ env, autoStart: false, retry: { maxElapsedMs: 300 } });
    await assert.rejects(client.getServerInfo(), (e: unknown) => e instanceof PostcompactError && e.code === grpc.status.UNAVAILABLE && e.reason === ClientReason.DAEMON_UNAVAILABLE);
    client.close();
  });

  test("the first call starts the daemon (POSTCOMPACT_BIN), waits for health, retries", async () => {
    const xdg = join(tmp, "auto");
    const env: Record<string, string | undefined> = { ...process.env, XDG_RUNTIME_DIR: xdg, POSTCOMPACT_BIN: bin, FAKE_DAEMON_DELAY_MS: "300" };
    delete env["POSTCOMPACT_ADDRESS"];
    const client = new PostcompactClient({ env });
    assert.equal(client.autoStart, true);
    try {
      const info = await client.getServerInfo();
      assert.equal(info.version, "fake");
      assert.ok(existsSync(join(xdg, "postcompact", "server.json")));
      assert.ok(["server.json", "default"].includes(client.address.source)); // server.json follows health
      assert.ok(info.pid !== process.pid);
    } finally {
      client.close();
      killFrom(join(xdg, "postcompact"));
    }
  });

  test("concurrent first calls share one start; connect() too", async () => {
    const xdg = join(tmp, "auto2");
    const env: Record<string, string | undefined> = { ...process.env, XDG_RUNTIME_DIR: xdg, POSTCOMPACT_BIN: bin };
    delete env["POSTCOMPACT_ADDRESS"];
    const client = await PostcompactClient.connect({ env });
    try {
      const infos = await Promise.all([1, 2, 3].map(() => client.getServerInfo()));
      assert.equal(new Set(infos.map((i) => i.pid)).size, 1);
    } finally {
      client.close();
      killFrom(join(xdg, "postcompact"));
    }
  });

  test("a missing executable fails fast with DAEMON_START_FAILED", async () => {
    const env = { PATH: process.env["PATH"], XDG_RUNTIME_DIR: join(tmp, "nobin"), POSTCOMPACT_BIN: join(tmp, "does-not-exist") };
    const client = new PostcompactClient({ env });
    const t0 = Date.now();
    await assert.rejects(client.getServerInfo(), (e: unknown) => {
      assert.ok(e instanceof PostcompactError);
      assert.equal(e.code, grpc.status.UNAVAILABLE);
      assert.equal(e.reason, ClientReason.DAEMON_START_FAILED);
      return true;
    });
    assert.ok(Date.now() - t0 < 5000);
    client.close();
  });

  test("a daemon that never becomes healthy times out with DAEMON_START_FAILED", async () => {
    const sleeper = join(tmp, "sleeper");
    writeFileSync(sleeper, "#!/bin/sh\nexit 0\n");
    chmodSync(sleeper, 0o755);
    const client = new PostcompactClient({ env: { XDG_RUNTIME_DIR: join(tmp, "never"), POSTCOMPACT_BIN: sleeper }, startTimeoutMs: 800 });
    await assert.rejects(client.getServerInfo(), (e: unknown) => e instanceof PostcompactError && e.reason === ClientReason.DAEMON_START_FAILED);
    client.close();
  });

  test("a long-lived client starts its daemon again when it finds it gone", async () => {
    const xdg = join(tmp, "again");
    const env: Record<string, string | undefined> = { ...process.env, XDG_RUNTIME_DIR: xdg, POSTCOMPACT_BIN: bin };
    delete env["POSTCOMPACT_ADDRESS"];
    const client = new PostcompactClient({ env, retry: { maxElapsedMs: 20_000 } });
    try {
      const first = (await client.getServerInfo()).pid;
      const gone = new Promise<void>((resolve) => {
        const poll = (): void => {
          try {
            process.kill(Number(first), 0);
            setTimeout(poll, 20);
          } catch {
            resolve();
          }
        };
        poll();
      });
      killFrom(join(xdg, "postcompact"));
      await gone;
      // Started again (once the back-off after the first start is over), not DAEMON_UNAVAILABLE.
      const second = (await client.getServerInfo()).pid;
      assert.notEqual(second, first);
    } finally {
      client.close();
      killFrom(join(xdg, "postcompact"));
    }
  });

  test("a daemon that exits before serving fails the call at once with its first error line", async () => {
    const broken = join(tmp, "broken");
    writeFileSync(
      broken,
      "#!/bin/sh\necho 'postcompact: configuration error: config.toml: unknown key policy.foo' >&2\nexit 2\n",
    );
    chmodSync(broken, 0o755);
    // The start timeout is long: the call must not wait it out for a daemon that has exited.
    const client = new PostcompactClient({ env: { XDG_RUNTIME_DIR: join(tmp, "broken-run"), POSTCOMPACT_BIN: broken }, startTimeoutMs: 120_000 });
    await assert.rejects(client.getServerInfo(), (e: unknown) => {
      assert.ok(e instanceof PostcompactError);
      assert.equal(e.reason, ClientReason.DAEMON_START_FAILED);
      assert.match(e.details, /exited with status 2 before serving: postcompact: configuration error: config.toml: unknown key policy.foo$/);
      return true;
    });
    client.close();
  });

  test("an explicit Unix address with autoStart: true starts the daemon on that socket", async () => {
    const xdg = join(tmp, "pinned");
    const sock = join(tmp, "pinned.sock");
    const env: Record<string, string | undefined> = { ...process.env, XDG_RUNTIME_DIR: xdg, POSTCOMPACT_BIN: bin };
    const client = new PostcompactClient({ address: `unix://${sock}`, autoStart: true, env });
    try {
      const info = await client.getServerInfo();
      assert.equal(info.socketPath, sock);
      assert.equal(readFileSync(join(xdg, "postcompact", "server.json"), "utf8").includes(sock), true);
    } finally {
      client.close();
      killFrom(join(xdg, "postcompact"));
    }
  });
});
