import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { defaultSocketPath, parseAddress, resolveAddress, resolveToken, runtimeDir } from "../../src/index.js";

const tmp = mkdtempSync("/tmp/pc-node-addr-");
after(() => rmSync(tmp, { recursive: true, force: true }));

function serverJson(dir: string, extra: Record<string, unknown> = {}): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "server.json"),
    JSON.stringify({
      pid: 1,
      version: "x",
      api_version: "postcompact.v1",
      socket: join(dir, "other.sock"),
      address: `unix://${join(dir, "other.sock")}`,
      tcp_port: 0,
      token_file: null,
      started_at_ms: 0,
      ...extra,
    }),
  );
}

describe("runtime directory", () => {
  test("XDG_RUNTIME_DIR/postcompact when set and non-empty", () => {
    assert.equal(runtimeDir({ XDG_RUNTIME_DIR: "/run/user/7" }), "/run/user/7/postcompact");
  });
  test("/tmp/postcompact-<uid> when unset or empty", () => {
    const want = `/tmp/postcompact-${process.getuid!()}`;
    assert.equal(runtimeDir({}), want);
    assert.equal(runtimeDir({ XDG_RUNTIME_DIR: "" }), want);
    assert.equal(defaultSocketPath({}), `${want}/daemon.sock`);
  });
});

describe("address resolution order", () => {
  const xdg = join(tmp, "xdg");
  const d = join(xdg, "postcompact");

  test("default socket when nothing else applies", () => {
    const r = resolveAddress(undefined, { XDG_RUNTIME_DIR: join(tmp, "empty") });
    assert.equal(r.source, "default");
    assert.equal(r.target, `unix://${join(tmp, "empty", "postcompact", "daemon.sock")}`);
    assert.equal(r.transport, "unix");
  });

  test("server.json beats the default", () => {
    serverJson(d);
    const r = resolveAddress(undefined, { XDG_RUNTIME_DIR: xdg });
    assert.equal(r.source, "server.json");
    assert.equal(r.target, `unix://${join(d, "other.sock")}`);
    assert.equal(r.runtimeDir, d);
  });

  test("POSTCOMPACT_ADDRESS beats server.json", () => {
    const r = resolveAddress(undefined, { XDG_RUNTIME_DIR: xdg, POSTCOMPACT_ADDRESS: "127.0.0.1:7001" });
    assert.equal(r.source, "env");
    assert.equal(r.target, "127.0.0.1:7001");
    assert.equal(r.transport, "tcp");
  });

  test("an explicit address beats everything", () => {
    const r = resolveAddress("unix:///tmp/x.sock", { XDG_RUNTIME_DIR: xdg, POSTCOMPACT_ADDRESS: "127.0.0.1:7001" });
    assert.equal(r.source, "explicit");
    assert.equal(r.target, "unix:///tmp/x.sock");
  });

  test("junk server.json is ignored", () => {
    const dir = join(tmp, "junk", "postcompact");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "server.json"), "{not json");
    assert.equal(resolveAddress(undefined, { XDG_RUNTIME_DIR: join(tmp, "junk") }).source, "default");
  });
});

describe("address forms", () => {
  test("unix URIs and bare paths", () => {
    assert.deepEqual(parseAddress("unix:///a/b.sock"), { target: "unix:///a/b.sock", transport: "unix" });
    assert.deepEqual(parseAddress("unix:/a/b.sock"), { target: "unix:///a/b.sock", transport: "unix" });
    assert.deepEqual(parseAddress("/a/b.sock"), { target: "unix:///a/b.sock", transport: "unix" });
    assert.throws(() => parseAddress("unix:relative.sock"));
    assert.throws(() => parseAddress(""));
  });
  test("TCP", () => {
    assert.deepEqual(parseAddress("127.0.0.1:5000"), { target: "127.0.0.1:5000", transport: "tcp" });
    assert.deepEqual(parseAddress("tcp://localhost:5000"), { target: "localhost:5000", transport: "tcp" });
  });
});

describe("token resolution", () => {
  const xdg = join(tmp, "tok");
  const d = join(xdg, "postcompact");
  mkdirSync(d, { recursive: true });

  test("D/token as the last resort, trimmed", () => {
    writeFileSync(join(d, "token"), "from-d\n");
    assert.equal(resolveToken({ XDG_RUNTIME_DIR: xdg }), "from-d");
  });
  test("server.json token_file beats D/token", () => {
    writeFileSync(join(tmp, "tokfile"), "from-file\n");
    serverJson(d, { token_file: join(tmp, "tokfile") });
    assert.equal(resolveToken({ XDG_RUNTIME_DIR: xdg }), "from-file");
  });
  test("POSTCOMPACT_TOKEN beats both", () => {
    assert.equal(resolveToken({ XDG_RUNTIME_DIR: xdg, POSTCOMPACT_TOKEN: "from-env" }), "from-env");
  });
  test("none", () => {
    assert.equal(resolveToken({ XDG_RUNTIME_DIR: join(tmp, "none") }), undefined);
  });
});
