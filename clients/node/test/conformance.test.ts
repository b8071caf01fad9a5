// The conformance suite (tests/conformance/*.json) against a live daemon: starts
// `<repo>/.venv/bin/python -m postcompact serve --socket <short /tmp path>` itself (an isolated
// XDG_RUNTIME_DIR and XDG_CONFIG_HOME), waits for health, runs every scenario through the
// client, and SIGTERMs the daemon at the end. No scenario is skipped: an unrunnable one fails.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { PostcompactClient, waitForHealth } from "../src/index.js";
import { ScenarioRun, type Scenario } from "./conformance/scenario.js";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url)); // dist/test -> repo root
const SCENARIOS = process.env["POSTCOMPACT_CONFORMANCE_DIR"] || join(REPO, "tests", "conformance");
const PYTHON = process.env["POSTCOMPACT_PYTHON"] || join(REPO, ".venv", "bin", "python");

/** The caller's environment without POSTCOMPACT_* settings, with private runtime/config/home dirs. */
function daemonEnv(dir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("POSTCOMPACT_")) env[k] = v;
  return { ...env, XDG_RUNTIME_DIR: join(dir, "run"), XDG_CONFIG_HOME: join(dir, "config"), HOME: join(dir, "home") };
}

const files = readdirSync(SCENARIOS)
  .filter((f) => f.endsWith(".json"))
  .sort();

describe("conformance (tests/conformance/*.json)", () => {
  let dir: string;
  let daemon: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let client: PostcompactClient;
  let logFile: string;
  let startError: Error | undefined;

  const daemonLog = (): string => {
    try {
      return readFileSync(logFile, "utf8").split("\n").slice(-40).join("\n");
    } catch {
      return "(no daemon log)";
    }
  };

  before(async () => {
    dir = mkdtempSync("/tmp/pcn-"); // short: Unix socket paths are limited to 107 bytes
    const socket = join(dir, "d.sock");
    logFile = join(dir, "daemon.log");
    mkdirSync(join(dir, "run"), { mode: 0o700 });
    mkdirSync(join(dir, "config"));
    mkdirSync(join(dir, "home"));
    if (!existsSync(PYTHON)) {
      startError = new Error(`${PYTHON} not found: run \`make build\` first`);
      return;
    }
    const out = openSync(logFile, "a");
    daemon = spawn(PYTHON, ["-m", "postcompact", "serve", "--socket", socket], {
      cwd: dir,
      stdio: ["ignore", out, out],
      env: daemonEnv(dir),
    });
    exited = new Promise((resolve) => daemon!.once("exit", () => resolve()));
    let exitInfo: string | undefined;
    daemon.once("exit", (code, signal) => {
      exitInfo = `daemon exited early (code ${code}, signal ${signal})`;
    });
    const target = `unix://${socket}`;
    const healthy = await waitForHealth(target, {
      timeoutMs: 30_000,
      abort: () => (exitInfo ? new Error(exitInfo) : undefined),
    }).catch((e: Error) => {
      startError = e;
      return false;
    });
    if (!healthy && !startError) startError = new Error("daemon did not report SERVING within 30 s");
    client = new PostcompactClient({ address: target, autoStart: false, timeoutMs: 30_000 });
  });

  after(async () => {
    client?.close();
    if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
      daemon.kill("SIGTERM");
      const timer = setTimeout(() => daemon?.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test("there are scenarios", () => {
    if (files.length === 0) throw new Error(`no scenarios in ${SCENARIOS}`);
  });

  for (const file of files) {
    test(file.replace(/\.json$/, ""), async () => {
      if (startError) throw new Error(`${startError.message}\n--- daemon log ---\n${daemonLog()}`);
      const scenario = JSON.parse(readFileSync(join(SCENARIOS, file), "utf8")) as Scenario;
      const run = new ScenarioRun(client, scenario);
      try {
        await run.run();
      } catch (e) {
        if (daemon && daemon.exitCode !== null)
          throw new Error(`${(e as Error).message}\n--- daemon log ---\n${daemonLog()}`, { cause: e });
        throw e;
      } finally {
        run.cleanup();
      }
    });
  }
});
