// The Node driver of benchmark B6 (bench/b6_clients.py): times the daemon's real RPCs through the
// built client (dist/) beside a bare echo call made with the same grpc-js stack (a grpc.Client
// with the client's channel options, makeUnaryRequest with identity (de)serializers) in the
// same run. Build first: `npm run build`.
//
//   node bench/pcbench.mjs --daemon unix:///d.sock --echo unix:///e.sock --mode small|compact \
//        --c 1|16 --calls 2000 --warmup 100 [--rounds 4] [--project DIR] [--token T] [--window B]
//
// small: echo of 100 B against EstimateTokens on 100 B. compact: echo of 100 KB against Compact
// of a session that read DIR/src/module{0..4}.ts (one session per in-flight worker). The two
// series alternate in --rounds rounds; one JSON object per series is printed on stdout.
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import * as grpc from "@grpc/grpc-js";
import { PostcompactClient } from "../dist/src/index.js";
import { LOCAL_CHANNEL_OPTIONS } from "../dist/src/daemon.js";

const ECHO_METHOD = "/bench.Echo/Echo";
const identity = (b) => b;

function parseArgs(argv) {
  const o = { mode: "small", c: 1, calls: 2000, warmup: 100, rounds: 4, project: "", token: "", window: 0 };
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--?/, "");
    const value = argv[i + 1];
    if (!(key in o) && key !== "daemon" && key !== "echo") throw new Error(`unknown flag ${argv[i]}`);
    o[key] = typeof o[key] === "number" ? Number(value) : value;
  }
  if (!o.daemon || !o.echo) throw new Error("--daemon and --echo are required");
  return o;
}

function echoRequest(size) {
  return Buffer.from(String(size).padStart(8, "0").padEnd(100, "-"));
}

function sizeLabel(n) {
  return n >= 1024 ? `${n / 1024} KB` : `${n} B`;
}

function percentile(sorted, q) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))];
}

class Series {
  constructor(name, call) {
    this.name = name;
    this.call = call; // (worker) => Promise
    this.lat = [];
    this.wall = 0;
  }

  async run(calls, conc, record) {
    let next = 0;
    const lat = [];
    const worker = async (w) => {
      while (next < calls) {
        next++;
        const t0 = performance.now();
        await this.call(w);
        lat.push(performance.now() - t0);
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: conc }, (_, w) => worker(w)));
    const wall = performance.now() - t0;
    if (record) {
      this.lat.push(...lat);
      this.wall += wall;
    }
  }

  result(mode, conc) {
    const us = this.lat.map((ms) => ms * 1000).sort((a, b) => a - b);
    return {
      client: "node",
      series: this.name,
      mode,
      concurrency: conc,
      p50_us: percentile(us, 0.5),
      p99_us: percentile(us, 0.99),
      p999_us: percentile(us, 0.999),
      qps: us.length / (this.wall / 1000),
      calls: us.length,
    };
  }
}

async function openSessions(client, project, n) {
  const root = path.resolve(project);
  const sessions = [];
  for (let i = 0; i < n; i++) {
    const s = await client.openSession({ cwd: root, policy: { maxFiles: 5, fileTokenBudget: 50000, maxTokensPerFile: 8000, matchBudget: "NONE" } });
    for (let f = 0; f < 5; f++) await s.readFile(path.join(root, "src", `module${f}.ts`));
    const res = await s.compact({ skipHooks: true });
    const files = res.attachments.filter((a) => a.kind === "ATTACHMENT_KIND_FILE").length;
    if (files !== 5) throw new Error(`compact restored ${files} files, want 5`);
    sessions.push(s);
  }
  return sessions;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  // --window N: grpc-js's HTTP/2 receive window (its default is 64 KiB); 0 keeps the default.
  const extra = o.window > 0 ? { "grpc-node.flow_control_window": o.window } : {};
  const client = new PostcompactClient({
    address: o.daemon,
    autoStart: false,
    token: o.token || undefined,
    channelOptions: extra,
  });
  // The echo server on the same grpc-js stack with the client's channel options.
  const echo = new grpc.Client(o.echo, grpc.credentials.createInsecure(), {
    ...LOCAL_CHANNEL_OPTIONS,
    "grpc.max_receive_message_length": 64 * 1024 * 1024,
    "grpc.max_send_message_length": 64 * 1024 * 1024,
    ...extra,
  });
  try {
    await client.ensureServing();
    let echoSize;
    let real;
    if (o.mode === "small") {
      echoSize = 100;
      const text = Buffer.alloc(100, "x");
      real = new Series("EstimateTokens 100 B", () => client.rpc.estimateTokens({ text, ext: "" }));
    } else if (o.mode === "compact") {
      echoSize = 100 * 1024;
      const sessions = await openSessions(client, o.project, o.c);
      real = new Series("Compact 5x20KB", (w) => sessions[w].compact({ skipHooks: true }));
    } else {
      throw new Error(`unknown mode ${o.mode}`);
    }
    const req = echoRequest(echoSize);
    const bare = new Series(
      `echo ${sizeLabel(echoSize)}`,
      () =>
        new Promise((resolve, reject) => {
          echo.makeUnaryRequest(
            ECHO_METHOD,
            identity,
            identity,
            req,
            new grpc.Metadata(),
            { deadline: Date.now() + 60_000 },
            (err, value) => {
              if (err) reject(err);
              else if (value.length !== echoSize) reject(new Error(`echo returned ${value.length} bytes`));
              else resolve(value);
            },
          );
        }),
    );
    const all = [bare, real];
    for (const s of all) await s.run(o.warmup, o.c, false);
    const rounds = Math.max(1, o.rounds);
    for (let r = 0; r < rounds; r++) {
      const base = Math.floor(o.calls / rounds);
      const n = r === rounds - 1 ? o.calls - base * (rounds - 1) : base;
      for (const s of all) await s.run(n, o.c, true);
    }
    for (const s of all) process.stdout.write(JSON.stringify(s.result(o.mode, o.c)) + "\n");
  } finally {
    echo.close();
    client.close();
  }
}

main().catch((e) => {
  // One line (the harness reports the last line of stderr); the stack goes first with DEBUG set.
  if (process.env.DEBUG) console.error(e?.stack);
  console.error(`pcbench: ${e?.codeName ? `${e.codeName} ${e.reason}: ${e.details}` : (e?.message ?? e)}`);
  process.exit(1);
});
