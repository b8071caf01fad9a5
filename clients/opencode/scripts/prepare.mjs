// `npm install` here runs this (the `prepare` script): it builds the postcompact Node client this
// plugin links to (../node, a `file:` dependency) when it is not built yet, then the plugin.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = join(dirname(fileURLToPath(import.meta.url)), "..");
const nodeClient = join(here, "..", "node");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: "inherit" });

if (!existsSync(join(nodeClient, "node_modules", "@grpc", "grpc-js"))) {
  run(npm, ["ci", "--no-audit", "--no-fund", "--loglevel=error"], nodeClient);
}
if (!existsSync(join(nodeClient, "dist", "src", "index.js"))) {
  run(npm, ["run", "--silent", "build"], nodeClient);
}
run(process.execPath, [join(here, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], here);
