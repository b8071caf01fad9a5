"""`make test-packaging`: every client installed the way its README's Install section says, from a
checkout with nothing built in it, into a fresh project, and every code block of every README run
against a live daemon (issue 14, walls 8 and 9).

The checkout is an export of this working tree: every file git tracks or would track (untracked,
not ignored), copied with its mtime, so nothing built (`node_modules/`, `dist/`, `target/`,
`.venv/`) comes along. `/path/to/postcompact` in an install block (sh or toml) stands for it. One
daemon serves every snippet: `postcompact serve` on its default socket under a private
`XDG_RUNTIME_DIR` (config and state private too), so a snippet finds it exactly as its README
says, through server.json, with no address given; `POSTCOMPACT_BIN=/bin/false`, so a snippet that
missed it fails instead of starting another.

- python: a fresh venv; the README's install block there (the wheel of `clients/python`, its
  dependencies from the package index); `postcompact_client` must import from that venv; then the
  python blocks of README.md and clients/python/README.md, each a script run by the venv.
- node: each install block of clients/node/README.md (`npm install <checkout>/clients/node`, which
  links and builds the checkout through the package's `prepare`; `npm pack` of it and the
  tarball's install) in a fresh project of its own (`"type": "module"`, TypeScript and
  @types/node at the client's pinned versions, to type-check the snippets) and a checkout of its
  own; a packed install must work with that checkout deleted. Then `import("@postcompact/client")`,
  and each ts block as a `.mts` file, compiled by `tsc --strict` against the installed package's
  declarations and run.
- go: a fresh module (`go mod init`); the README's install block (`go mod edit -replace` to the
  checkout, `go get`); each go block, a program of its own, by `go run`; then the README's other
  sh blocks from the repository's root.
- rust: a fresh cargo project (its own `[workspace]`) whose dependencies are the README's Install
  toml block, with `Cargo.lock` copied from the repository (the versions its tests use); each rust
  block, its rustdoc-hidden lines shown, a binary of its own, built and run; then the README's
  other sh blocks from the repository's root. The project, the checkout and the cargo target
  directory keep their paths across runs (`target/packaging/`), so a second run is incremental.
- cli: README.md's sh blocks, from the repository's root (its `.venv`), against the same daemon.

At the end every block in a language of `blocks.RUNNABLE` must have been run by one of these,
unless marked `synopsis` (```` ```sh synopsis ````); `EXEMPT` lists the READMEs left to their own
tests. Prints one line per language; exit 1 if any failed (with the failing command's output).
Work files are in `target/packaging/` (`POSTCOMPACT_PACKAGING_DIR` elsewhere);
`POSTCOMPACT_PACKAGING_VERBOSE=1` prints every step's output. No timing is asserted; the times
printed are for information.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from postcompact_client import Client

from tests.daemon.conftest import daemon_env
from tests.packaging.blocks import SHELL, Block, Inventory, rust_program

ROOT = Path(__file__).resolve().parents[2]
WORK = Path(os.environ.get("POSTCOMPACT_PACKAGING_DIR") or ROOT / "target" / "packaging")
PLACEHOLDER = "/path/to/postcompact"
GO = os.environ.get("GO") or shutil.which("go") or "/usr/local/go/bin/go"
LANGS = ("python", "node", "go", "rust", "cli")
# READMEs whose blocks other tests own.
EXEMPT = {
    "clients/opencode/README.md": "the OpenCode plugin's install, tests/opencode",
    "clients/claude-code/plugins/postcompact/README.md": (
        "the Claude Code plugin's install, tests/claude_code"
    ),
    "clients/codex/README.md": "the Codex plugin's install, tests/codex",
    "clients/gemini-cli/README.md": "the Gemini CLI extension's install, tests/gemini_cli",
}
STEP_TIMEOUT_S = 1200
VERBOSE = os.environ.get("POSTCOMPACT_PACKAGING_VERBOSE", "") not in ("", "0")

RUST_MANIFEST = """\
[package]
name = "pc-readme"
version = "0.0.0"
edition = "2021"
publish = false

# A project of its own, even inside the postcompact checkout's directory.
[workspace]

"""

IMPORT_CHECK = """\
const m = await import("@postcompact/client");
if (typeof m.PostcompactClient !== "function") throw new Error("no PostcompactClient export");
"""


class Failure(Exception):
    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


@dataclass
class Context:
    inventory: Inventory
    checkout: Path  # the shared export
    env: dict[str, str]  # tools and snippets: the daemon's runtime dir, the user's caches
    daemon_env: dict[str, str]  # the daemon's own (private config and state too)


def run(cmd: Sequence[str | Path], *, cwd: Path, env: dict[str, str], what: str = "") -> str:
    """Run `cmd`; its output (stdout and stderr), or Failure with it."""
    argv = [str(c) for c in cmd]
    try:
        p = subprocess.run(
            argv,
            check=False,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=STEP_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as e:
        out = e.output if isinstance(e.output, str) else ""
        raise Failure(f"{what or argv[0]}: timed out in {cwd}: {argv}", out) from None
    if VERBOSE:
        print(f"--- {what or argv[0]} ({cwd}): exit {p.returncode}\n{p.stdout}", flush=True)
    if p.returncode != 0:
        raise Failure(f"{what or argv[0]}: exit {p.returncode} in {cwd}: {argv}", p.stdout)
    return p.stdout


def sh(block: Block, *, cwd: Path, env: dict[str, str], checkout: Path) -> str:
    """A sh block as a bash script (-e, pipefail), the placeholder made the checkout's path."""
    if block.install and PLACEHOLDER not in block.text:
        raise Failure(f"{block.where()}: an install block that does not name {PLACEHOLDER}")
    script = block.text.replace(PLACEHOLDER, str(checkout))
    return run(["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, what=block.where())


def fresh(path: Path) -> Path:
    if path.exists() or path.is_symlink():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def tracked_files() -> list[str]:
    """Every file of the working tree that git tracks or would track (not ignored)."""
    out = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
    ).stdout
    return sorted({os.fsdecode(f) for f in out.split(b"\0") if f})


def export(dest: Path) -> Path:
    """A checkout with nothing built: the working tree's files, mtimes kept, at `dest`."""
    if dest.exists():
        shutil.rmtree(dest)
    for rel in tracked_files():
        src = ROOT / rel
        if not (src.exists() or src.is_symlink()):
            continue  # deleted in the working tree
        dst = dest / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)
    return dest


def readmes() -> list[str]:
    return [f for f in tracked_files() if Path(f).name == "README.md"]


def need(blocks: list[Block], what: str) -> list[Block]:
    if not blocks:
        raise Failure(f"no {what}")
    return blocks


# ------------------------------------------------------------------------------------------------
# The languages


def python(ctx: Context) -> str:
    readme = "clients/python/README.md"
    installs = need(ctx.inventory.take(readme, SHELL, install=True), f"install block in {readme}")
    snippets = ctx.inventory.take("README.md", ("python",)) + ctx.inventory.take(
        readme, ("python",)
    )
    proj = fresh(WORK / "python")
    venv = proj / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=proj, env=ctx.env, what="python -m venv")
    env = {**ctx.env, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}:{ctx.env['PATH']}"}
    for key in ("PYTHONPATH", "PYTHONHOME"):
        env.pop(key, None)
    for b in installs:
        sh(b, cwd=proj, env=env, checkout=ctx.checkout)
    py = venv / "bin" / "python"
    where = run(
        [py, "-c", "import postcompact_client as m; print(m.__file__)"],
        cwd=proj,
        env=env,
        what="import postcompact_client",
    ).strip()
    if not Path(where).resolve().is_relative_to(venv.resolve()):
        raise Failure(f"postcompact_client imported from {where}, not from the fresh venv")
    for n, b in enumerate(snippets, 1):
        script = proj / f"readme_{n}.py"
        script.write_text(b.text)
        run([py, script], cwd=proj, env=env, what=b.where())
    return (
        f"the wheel of clients/python in a fresh venv; {len(snippets)} python snippets "
        "against the daemon"
    )


def node(ctx: Context) -> str:
    readme = "clients/node/README.md"
    installs = need(ctx.inventory.take(readme, SHELL, install=True), f"install block in {readme}")
    snippets = need(ctx.inventory.take(readme, ("ts", "typescript")), f"ts block in {readme}")
    dev = json.loads((ROOT / "clients/node/package.json").read_text())["devDependencies"]
    tools = [f"typescript@{dev['typescript']}", f"@types/node@{dev['@types/node']}"]
    env = {**ctx.env, "npm_config_audit": "false", "npm_config_fund": "false"}
    env["npm_config_update_notifier"] = "false"
    done = []
    for i, block in enumerate(installs, 1):
        checkout = export(WORK / f"checkout-node-{i}")
        proj = fresh(WORK / f"node-{i}")
        manifest = {"name": f"pc-packaging-node-{i}", "private": True, "type": "module"}
        (proj / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        run(["npm", "install", "--save-dev", *tools], cwd=proj, env=env, what="npm install tsc")
        sh(block, cwd=proj, env=env, checkout=checkout)
        installed = proj / "node_modules" / "@postcompact" / "client"
        if not installed.exists():
            raise Failure(f"{block.where()}: no {installed} after the install")
        linked = installed.is_symlink()
        if not linked:
            shutil.rmtree(checkout)  # a copy in node_modules needs nothing of the checkout
        node_env = {k: v for k, v in env.items() if k != "NODE_PATH"}
        run(
            ["node", "--input-type=module", "-e", IMPORT_CHECK],
            cwd=proj,
            env=node_env,
            what='import("@postcompact/client")',
        )
        files = []
        for n, b in enumerate(snippets, 1):
            (proj / f"readme_{n}.mts").write_text(b.text)
            files.append(f"readme_{n}.mts")
        tsconfig = {
            "compilerOptions": {
                "target": "ES2022",
                "module": "NodeNext",
                "moduleResolution": "NodeNext",
                "strict": True,
                "types": ["node"],
            },
            "files": files,
        }
        (proj / "tsconfig.json").write_text(json.dumps(tsconfig, indent=2) + "\n")
        run([proj / "node_modules" / ".bin" / "tsc", "-p", "."], cwd=proj, env=env, what="tsc")
        for n, b in enumerate(snippets, 1):
            run(["node", f"readme_{n}.mjs"], cwd=proj, env=node_env, what=b.where())
        done.append("the linked checkout" if linked else "the packed tarball")
    return (
        f"{' and '.join(done)}, each in a fresh project; {len(snippets)} ts snippet(s) "
        "through tsc --strict"
    )


def go(ctx: Context) -> str:
    readme = "clients/go/README.md"
    installs = need(ctx.inventory.take(readme, SHELL, install=True), f"install block in {readme}")
    programs = need(ctx.inventory.take(readme, ("go",)), f"go block in {readme}")
    others = ctx.inventory.take(readme, SHELL, install=False)
    env = {**ctx.env, "PATH": f"{Path(GO).parent}:{ctx.env['PATH']}"}
    proj = fresh(WORK / "go")
    run([GO, "mod", "init", "example.com/pcreadme"], cwd=proj, env=env, what="go mod init")
    for b in installs:
        sh(b, cwd=proj, env=env, checkout=ctx.checkout)
    for n, b in enumerate(programs, 1):
        pkg = proj / f"readme{n}"
        pkg.mkdir()
        (pkg / "main.go").write_text(b.text)
        run([GO, "run", f"./readme{n}"], cwd=proj, env=env, what=b.where())
    for b in others:
        sh(b, cwd=ROOT, env=env, checkout=ROOT)
    return (
        f"go get with a replace in a fresh module; {len(programs)} go programs, "
        f"{len(others)} more sh block(s)"
    )


def rust(ctx: Context) -> str:
    readme = "clients/rust/README.md"
    deps = need(ctx.inventory.find(readme, "toml", "install"), f"toml install block in {readme}")
    programs = need(ctx.inventory.take(readme, ("rust",)), f"rust block in {readme}")
    others = ctx.inventory.take(readme, SHELL, install=False)
    proj = WORK / "rust"
    for old in ("src", "Cargo.toml", "Cargo.lock"):
        p = proj / old
        if p.is_dir():
            shutil.rmtree(p)
        elif p.exists():
            p.unlink()
    bins = proj / "src" / "bin"
    bins.mkdir(parents=True)
    toml = "".join(b.text for b in deps)
    if PLACEHOLDER not in toml:
        raise Failure(f"{deps[0].where()}: the dependency does not name {PLACEHOLDER}")
    (proj / "Cargo.toml").write_text(RUST_MANIFEST + toml.replace(PLACEHOLDER, str(ctx.checkout)))
    shutil.copy2(ROOT / "Cargo.lock", proj / "Cargo.lock")
    for n, b in enumerate(programs, 1):
        (bins / f"readme{n}.rs").write_text(rust_program(b))
    target = WORK / "cargo-target"
    env = {**ctx.env, "CARGO_TARGET_DIR": str(target)}
    run(["cargo", "build", "--quiet", "--bins"], cwd=proj, env=env, what="cargo build")
    for n, b in enumerate(programs, 1):
        run([target / "debug" / f"readme{n}"], cwd=proj, env=ctx.env, what=b.where())
    for b in others:
        sh(b, cwd=ROOT, env=ctx.env, checkout=ROOT)
    return (
        f"a path dependency in a fresh cargo project; {len(programs)} rust programs, "
        f"{len(others)} more sh block(s)"
    )


def cli(ctx: Context) -> str:
    blocks = ctx.inventory.take("README.md", SHELL)
    for b in blocks:
        sh(b, cwd=ROOT, env=ctx.daemon_env, checkout=ROOT)
    return f"README.md: {len(blocks)} sh block(s) from the repository's root"


RUNNERS: dict[str, Callable[[Context], str]] = {
    "python": python,
    "node": node,
    "go": go,
    "rust": rust,
    "cli": cli,
}


# ------------------------------------------------------------------------------------------------


@dataclass
class Daemon:
    base: Path
    proc: subprocess.Popen[bytes]
    env: dict[str, str]

    @property
    def log(self) -> Path:
        return self.base / "daemon.stderr"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.base, ignore_errors=True)


def start_daemon() -> Daemon:
    """`postcompact serve` on its default socket, in a private runtime, config and state dir."""
    base = Path(tempfile.mkdtemp(prefix="pcpkg", dir="/tmp"))
    env = daemon_env(base)
    (base / "run").mkdir(mode=0o700)
    with open(base / "daemon.stderr", "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "postcompact", "serve"],
            cwd=base,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    d = Daemon(base, proc, env)
    socket = base / "run" / "postcompact" / "daemon.sock"
    with Client(f"unix://{socket}", auto_start=False, timeout=30.0) as c:
        try:
            c.wait_for_health(30.0)
        except Exception:
            log = d.log.read_text(errors="replace")
            d.stop()
            raise SystemExit(f"packaging: the daemon did not start:\n{log}") from None
    return d


def main(argv: list[str]) -> int:
    langs = argv or list(LANGS)
    unknown = [x for x in langs if x not in RUNNERS]
    if unknown:
        print(f"usage: python -m tests.packaging [{'|'.join(LANGS)} ...]", file=sys.stderr)
        return 2
    inventory = Inventory.of(ROOT, readmes())
    WORK.mkdir(parents=True, exist_ok=True)
    checkout = export(WORK / "checkout")
    daemon = start_daemon()
    env = {k: v for k, v in os.environ.items() if not k.startswith("POSTCOMPACT_")}
    env["XDG_RUNTIME_DIR"] = daemon.env["XDG_RUNTIME_DIR"]
    env["POSTCOMPACT_BIN"] = "/bin/false"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["TMPDIR"] = str(fresh(WORK / "tmp"))  # the snippets' made-up projects, and the tools'
    daemon_cli_env = {**daemon.env, "POSTCOMPACT_BIN": "/bin/false"}
    ctx = Context(inventory, checkout, env, daemon_cli_env)
    failed = 0
    try:
        for lang in langs:
            start = time.monotonic()
            try:
                what = RUNNERS[lang](ctx)
            except Failure as f:
                failed += 1
                print(f"packaging: {lang} FAILED: {f}", flush=True)
                tail = f.output.splitlines()[-80:]
                if tail:
                    print("\n".join("    " + line for line in tail), flush=True)
                continue
            print(f"packaging: {lang} ok: {what} ({time.monotonic() - start:.0f}s)", flush=True)
    finally:
        if failed:
            log = daemon.log.read_text(errors="replace").splitlines()[-40:]
            print("packaging: the daemon's log ends with", flush=True)
            print("\n".join("    " + line for line in log), flush=True)
        daemon.stop()
    if set(langs) == set(LANGS):
        untaken = inventory.untaken(frozenset(EXEMPT))
        for b in untaken:
            print(
                f"packaging: {b.where()}: a {b.lang} block no runner ran "
                "(run it from tests/packaging, or mark it `synopsis`)",
                flush=True,
            )
        failed += bool(untaken)
        for rel, why in EXEMPT.items():
            if any(b.readme == rel and b.runnable for b in inventory.blocks):
                print(f"packaging: {rel} not run here ({why})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
