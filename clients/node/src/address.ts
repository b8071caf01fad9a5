// Finding the daemon, exactly as docs/clients.md says every client does.
import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";

export type Env = Record<string, string | undefined>;

/** `D/server.json`, written by the daemon once serving. */
export interface ServerJson {
  pid: number;
  version: string;
  api_version: string;
  socket: string;
  address: string;
  tcp_port: number;
  token_file: string | null;
  started_at_ms: number;
}

export type AddressSource = "explicit" | "env" | "server.json" | "default";

export interface ResolvedAddress {
  /** The address as given (or found), e.g. "unix:///run/user/1000/postcompact/daemon.sock". */
  address: string;
  /** The grpc-js target ("unix:///abs/path" or "host:port"). */
  target: string;
  transport: "unix" | "tcp";
  source: AddressSource;
  /** The runtime directory D used for server.json, the default socket and the token file. */
  runtimeDir: string;
}

/** D: `$XDG_RUNTIME_DIR/postcompact` when set and non-empty, else `/tmp/postcompact-<uid>`. */
export function runtimeDir(env: Env = process.env): string {
  const xdg = env["XDG_RUNTIME_DIR"];
  if (xdg) return join(xdg, "postcompact");
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return `/tmp/postcompact-${uid}`;
}

/** The default socket path `D/daemon.sock`. */
export function defaultSocketPath(env: Env = process.env): string {
  return join(runtimeDir(env), "daemon.sock");
}

/** `D/server.json`, or undefined when absent or unreadable. */
export function readServerJson(dir: string = runtimeDir()): ServerJson | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, "server.json"), "utf8");
  } catch {
    return undefined;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object" && typeof (parsed as ServerJson).address === "string")
      return parsed as ServerJson;
  } catch {
    // A half-written file cannot happen (the daemon writes it atomically); treat junk as absent.
  }
  return undefined;
}

/**
 * Turn an address into a grpc-js target. Accepted: `unix:///abs/path` (also `unix:/abs/path`),
 * a bare absolute socket path, `host:port` (`127.0.0.1:50051`), `tcp://host:port`, `dns:…`.
 */
export function parseAddress(address: string): { target: string; transport: "unix" | "tcp" } {
  const a = address.trim();
  if (a === "") throw new Error("empty daemon address");
  if (a.startsWith("unix:")) {
    let path = a.slice("unix:".length);
    if (path.startsWith("//")) path = path.slice(2);
    if (!isAbsolute(path)) throw new Error(`unix socket address must be absolute: ${address}`);
    return { target: `unix://${path}`, transport: "unix" };
  }
  if (isAbsolute(a)) return { target: `unix://${a}`, transport: "unix" };
  if (a.startsWith("tcp://")) return { target: a.slice("tcp://".length), transport: "tcp" };
  return { target: a, transport: "tcp" };
}

/**
 * Resolve the daemon's address (first that applies): the explicit address, then
 * `POSTCOMPACT_ADDRESS`, then `address` in `D/server.json`, then `unix://D/daemon.sock`.
 */
export function resolveAddress(explicit?: string, env: Env = process.env): ResolvedAddress {
  const dir = runtimeDir(env);
  const pick = (address: string, source: AddressSource): ResolvedAddress => ({
    address,
    ...parseAddress(address),
    source,
    runtimeDir: dir,
  });
  if (explicit) return pick(explicit, "explicit");
  const fromEnv = env["POSTCOMPACT_ADDRESS"];
  if (fromEnv) return pick(fromEnv, "env");
  const sj = readServerJson(dir);
  if (sj?.address) return pick(sj.address, "server.json");
  return pick(`unix://${join(dir, "daemon.sock")}`, "default");
}

/**
 * The TCP token: `POSTCOMPACT_TOKEN`, else the file named by `token_file` in server.json, else
 * `D/token`. Undefined when none is found (the daemon will answer UNAUTHENTICATED).
 */
export function resolveToken(env: Env = process.env, dir: string = runtimeDir(env)): string | undefined {
  const fromEnv = env["POSTCOMPACT_TOKEN"];
  if (fromEnv) return fromEnv.trim();
  const sj = readServerJson(dir);
  const candidates = [sj?.token_file, join(dir, "token")].filter(
    (p): p is string => typeof p === "string" && p !== "",
  );
  for (const file of candidates) {
    try {
      const token = readFileSync(file, "utf8").trim();
      if (token) return token;
    } catch {
      // next candidate
    }
  }
  return undefined;
}
