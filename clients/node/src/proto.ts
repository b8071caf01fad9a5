// Loads the API contract at runtime with @grpc/proto-loader. The options below must match the
// flags `make protos` passes to proto-loader-gen-types (scripts/gen_protos.py, entry "node"), since
// the committed types in gen/ describe the objects these options produce.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { ProtoGrpcType } from "../gen/postcompact.js";

export const PROTO_FILE = "postcompact/v1/postcompact.proto";
export const SERVICE_NAME = "postcompact.v1.PostcompactService";

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false, // camelCase field names
  longs: Number, // int64 as number (times in ms, token counts: all far below 2^53)
  enums: String, // enum values as their names, e.g. "ATTACHMENT_KIND_FILE"
  defaults: true, // every scalar field present on outputs
  oneofs: true, // virtual oneof fields, e.g. attachment.payload === "file"
};

/**
 * Where the .proto lives: the copy made into the package by `npm run build` (proto/), else the
 * repository's proto/ (a checkout that has not run the copy step).
 */
export function protoIncludeDir(): string {
  const candidates = [
    new URL("../../proto/", import.meta.url), // dist/src -> package root
    new URL("../../../../proto/", import.meta.url), // dist/src -> repository root
  ];
  for (const url of candidates) {
    const dir = fileURLToPath(url);
    if (existsSync(dir + PROTO_FILE)) return dir;
  }
  throw new Error(`cannot find ${PROTO_FILE} (run \`npm run build\` in clients/node)`);
}

let cached: { pkgDef: protoLoader.PackageDefinition; proto: ProtoGrpcType } | undefined;

/** The package definition and the typed grpc object (loaded once). */
export function loadProto(): { pkgDef: protoLoader.PackageDefinition; proto: ProtoGrpcType } {
  if (!cached) {
    const pkgDef = protoLoader.loadSync(PROTO_FILE, {
      ...LOADER_OPTIONS,
      includeDirs: [protoIncludeDir()],
    });
    const proto = grpc.loadPackageDefinition(pkgDef) as unknown as ProtoGrpcType;
    cached = { pkgDef, proto };
  }
  return cached;
}

// ---------------------------------------------------------------------------------------------
// bytes fields: the client accepts a string (UTF-8 text) or a Uint8Array/Buffer for every `bytes`
// field, at any depth. protobufjs alone would read a string as base64, so requests are converted
// before they are handed to grpc-js, guided by the message descriptors.

interface FieldDescriptor {
  name: string;
  type: string; // "TYPE_BYTES", "TYPE_MESSAGE", ...
  typeName?: string; // ".postcompact.v1.Foo"
  label?: string; // "LABEL_REPEATED"
}

interface BytesPlan {
  bytes: Set<string>;
  messages: Map<string, string>; // key -> full type name
}

const camelCase = (s: string): string =>
  s.substring(0, 1) + s.substring(1).replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

const plans = new Map<string, BytesPlan>();

/** A field's type name (".pkg.Name" or relative, as protobufjs writes it) as a full name. */
function resolveTypeName(scope: string, name: string): string {
  if (name.startsWith(".")) return name.slice(1);
  const defs = loadProto().pkgDef;
  // Relative names resolve from the innermost scope outwards, as in protoc.
  for (let parts = scope.split("."); parts.length > 0; parts = parts.slice(0, -1)) {
    const full = `${parts.join(".")}.${name}`;
    if (full in defs) return full;
  }
  return name;
}

function planFor(typeName: string): BytesPlan {
  const known = plans.get(typeName);
  if (known) return known;
  const def = loadProto().pkgDef[typeName] as { type?: { field?: FieldDescriptor[] } } | undefined;
  const plan: BytesPlan = { bytes: new Set(), messages: new Map() };
  for (const f of def?.type?.field ?? []) {
    const keys = [f.name, camelCase(f.name)];
    if (f.type === "TYPE_BYTES") for (const k of keys) plan.bytes.add(k);
    else if (f.type === "TYPE_MESSAGE" && f.typeName)
      for (const k of keys) plan.messages.set(k, resolveTypeName(typeName, f.typeName));
  }
  plans.set(typeName, plan);
  return plan;
}

const toBytes = (v: unknown): unknown =>
  typeof v === "string" ? Buffer.from(v, "utf8") : v;

/** A copy of `value` (a message of `typeName`) with every string in a bytes field UTF-8 encoded. */
export function encodeBytesFields(typeName: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Buffer.isBuffer(value)) return value;
  const plan = planFor(typeName);
  if (plan.bytes.size === 0 && plan.messages.size === 0) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [k, v] of Object.entries(out)) {
    if (plan.bytes.has(k)) out[k] = Array.isArray(v) ? v.map(toBytes) : toBytes(v);
    else {
      const sub = plan.messages.get(k);
      if (sub !== undefined && v != null)
        out[k] = Array.isArray(v)
          ? v.map((x) => encodeBytesFields(sub, x))
          : encodeBytesFields(sub, v);
    }
  }
  return out;
}
