"""This build's CLI one schema step behind or ahead of the build, for the rolling-upgrade test
(tests/daemon/persist/test_rolling_upgrade.py; docs/fleet.md, "Rolling upgrades"):

    python tests/daemon/persist/schema_launcher.py withhold -- PYTHON -m postcompact ARGS...
    python tests/daemon/persist/schema_launcher.py stand-in -- PYTHON -m postcompact ARGS...

runs `postcompact ARGS...` in this process (`serve --socket ... --state-url ...`: the real
daemon on its real socket, as `python -m postcompact` runs it) once, before anything of it
runs, what the build knows of the schema has been changed:

- `withhold`: the last step of `persist.schema.MIGRATIONS` is left out, and `SCHEMA_VERSION` is
  the step before it, N-1. The daemon creates a database at N-1, migrates an older one to N-1,
  and refuses one at N as newer than it understands: it has exactly the previous release's view
  of the database. Its code is this build's, so it stands for the previous release only where
  the code does not depend on the step: a step this build's statements name the tables or
  columns of (`withholdable` says) cannot be withheld (today's last one, v7, adds
  `sessions.version`, which every write of the PostgreSQL store checks: there was no
  PostgreSQL store before it).
- `stand-in`: for that case, a step N+1 is appended (`STAND_IN`: an index, as the next
  migration adds one, and a column with a default, as v3, v5, v6 and v7 added, on a table every
  session read selects `*` from), with `SCHEMA_VERSION` N+1. The older daemon is then this
  build unchanged, and the newer ones are it with one step more.

Changed are `persist.schema`'s names and every copy a module made by importing them by value
(`from postcompact.persist.schema import SCHEMA_VERSION`): every module whose source imports
them is imported first, then each module in `sys.modules` holding the old values is changed
(a module imported later, or reading them inside a function, gets the changed ones). The
launcher checks that no copy is left, and refuses one imported under another name.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import postcompact
from postcompact.persist import schema

NAMES = ("MIGRATIONS", "SCHEMA_VERSION")
MODES = ("withhold", "stand-in")
# The step appended in `stand-in` mode, written for SQLite as every step is (PostgreSQL runs it
# in its types, `persist.postgres.pg_script`).
STAND_IN = """
CREATE INDEX stand_in_sessions_last_active ON sessions (last_active_ms);
ALTER TABLE files ADD COLUMN stand_in INTEGER NOT NULL DEFAULT 0;
"""

_CREATE_TABLE = re.compile(r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I)
_ADD_COLUMN = re.compile(
    r"ALTER\s+TABLE\s+(\w+)\s+ADD\s+(?:COLUMN\s+)?(?:IF\s+NOT\s+EXISTS\s+)?(\w+)", re.I
)
_CREATE_INDEX = re.compile(r"CREATE\s+(?:UNIQUE\s+)?INDEX\b", re.I)
_BACKFILL = re.compile(r"(?:UPDATE|INSERT)\b", re.I)


def statements(script: str) -> list[str]:
    """A step's statements, as the stores split it."""
    return [s.strip() for s in script.split(";") if s.strip()]


def withholdable(script: str) -> bool:
    """Whether this build can run without the step `script`: it adds nothing this build's
    statements name (`schema.COLUMNS`: every statement names its columns). ValueError for a
    step that is not additive (a drop, a rename, a type change): no rolling upgrade crosses one,
    since the daemons still running name what it removes."""
    named = False
    for statement in statements(script):
        body = re.sub(r"--[^\n]*", "", statement).strip()
        if m := _CREATE_TABLE.match(body):
            named |= m[1] in schema.COLUMNS
        elif m := _ADD_COLUMN.match(body):
            named |= m[2] in schema.COLUMNS.get(m[1], ())
        elif not (_CREATE_INDEX.match(body) or _BACKFILL.match(body)):
            raise ValueError(f"the step is not additive, daemons one step older break: {body!r}")
    return not named


def _importers() -> list[str]:
    """The modules whose source imports one of NAMES (at any depth); SystemExit for one that
    binds it under another name (a copy this launcher would not recognise)."""
    root = Path(postcompact.__file__).parent
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            for alias in node.names:
                if alias.name in NAMES:
                    if alias.asname not in (None, alias.name):
                        raise SystemExit(
                            f"schema_launcher: {module} imports {alias.name} as {alias.asname}"
                        )
                    found.append(module)
    return sorted(set(found))


def shift(mode: str) -> tuple[int, int]:
    """Change what this process knows of the schema (see the module docstring); (the schema
    version the daemon now speaks, the build's)."""
    build_steps, build_version = schema.MIGRATIONS, schema.SCHEMA_VERSION
    if mode == "withhold":
        if not withholdable(build_steps[-1][1]):
            raise SystemExit(
                f"schema_launcher: this build cannot run without its last step (v{build_version})"
            )
        steps = build_steps[:-1]
    elif mode == "stand-in":
        steps = (*build_steps, (build_version + 1, STAND_IN))
    else:
        raise SystemExit(f"schema_launcher: the mode is one of {', '.join(MODES)}, not {mode!r}")
    version = steps[-1][0]
    for name in _importers():
        importlib.import_module(name)
    left: list[str] = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "postcompact" or name.startswith("postcompact.")):
            continue
        names = vars(module)
        if names.get("MIGRATIONS") is build_steps:
            module.MIGRATIONS = steps  # type: ignore[attr-defined]
        if "SCHEMA_VERSION" in names and names["SCHEMA_VERSION"] == build_version:
            module.SCHEMA_VERSION = version  # type: ignore[attr-defined]
        left += [f"{name}.{k}" for k, v in names.items() if v is build_steps]
    if left or version != schema.SCHEMA_VERSION:
        raise SystemExit(f"schema_launcher: copies left unchanged: {', '.join(left)}")
    return version, build_version


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[1] != "--":
        raise SystemExit(
            f"usage: schema_launcher.py {{{'|'.join(MODES)}}} -- [PYTHON -m postcompact] ARGS..."
        )
    mode, args = argv[0], argv[2:]
    if args[1:3] == ["-m", "postcompact"]:  # the serve command as the tests' start_daemon runs it
        args = args[3:]
    version, build_version = shift(mode)
    print(
        f"schema_launcher: {mode}: schema version {version} (this build's: {build_version})",
        file=sys.stderr,
        flush=True,
    )
    import postcompact.cli

    return postcompact.cli.main(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
