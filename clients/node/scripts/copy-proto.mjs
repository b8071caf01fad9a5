// Copies the API contract (../../proto) into the package (proto/) so the built package is
// self-contained: src/proto.ts loads it at runtime with @grpc/proto-loader. Run by `npm run build`.
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const from = join(pkg, "..", "..", "proto", "postcompact");
const to = join(pkg, "proto", "postcompact");
if (!existsSync(from)) {
  // Building from an unpacked npm tarball: proto/ already ships with the package.
  if (!existsSync(to)) throw new Error(`no proto sources at ${from} or ${to}`);
  process.exit(0);
}
rmSync(to, { recursive: true, force: true });
mkdirSync(dirname(to), { recursive: true });
cpSync(from, to, { recursive: true });
