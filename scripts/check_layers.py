"""`make lint`: the daemon's layers, enforced (docs/architecture.md, "Layers").

Every module under daemon/postcompact is read (not imported) and each `import` / `from ... import`
of a postcompact module, at any depth, is checked against the rules below: a module of a layer
must not import from the packages that layer is forbidden. Exit 1 naming each offence as
`path:line: <module> imports <module> (<rule>)`.

It also refuses a module importing another module's private name (`from postcompact.x import
_name`, relative imports alike): what modules share is public where it is defined, as
`path:line: <module> imports <module>.<name> (a private name of another module)`. A private
module (`postcompact._core`) is not a private name; the layer rules say who may import it.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "daemon" / "postcompact"

# The modules everything may use and that use nothing above them.
BASE = (
    "postcompact.core",
    "postcompact.errors",
    "postcompact.exitcodes",
    "postcompact.paths",
    "postcompact.state.model",
    "postcompact.state.store",
    "postcompact.state.null",
    "postcompact.render",
    "postcompact.diskaccess",
    "postcompact.profiles",
    "postcompact.refusals",
    "postcompact.units",
)
TOP = ("postcompact.server", "postcompact.cli", "postcompact.__main__", "postcompact.demo")


@dataclass(frozen=True)
class Rule:
    name: str
    layer: tuple[str, ...]  # module prefixes the rule is about
    forbidden: tuple[str, ...]  # what they must not import


# The state's own unit of work and registry: persistence implements the store they use.
STATE_UNIT = ("postcompact.state.registry", "postcompact.state.unit")
# The transport's admission (calls in flight, answer bytes reserved): the services' and the
# server's; below them nothing may refuse a call OVERLOADED.
ADMISSION = "postcompact.admission"

RULES = (
    Rule(
        "the Rust core is used through postcompact.core",
        ("postcompact",),
        ("postcompact._core",),
    ),
    Rule(
        "the restoration is pure: no persistence, no registry, no service, no admission, no "
        "transport",
        ("postcompact.restore",),
        (
            "postcompact.persist",
            *STATE_UNIT,
            "postcompact.service",
            "postcompact.transcript",
            ADMISSION,
            *TOP,
        ),
    ),
    Rule(
        "persistence implements the state's Store; it does not run the registry, the service or "
        "the pipeline",
        ("postcompact.persist",),
        (
            *STATE_UNIT,
            "postcompact.service",
            "postcompact.transcript",
            "postcompact.restore.pipeline",
            "postcompact.restore.file_step",
            "postcompact.restore.catalog",
            "postcompact.restore.hooks",
            *TOP,
        ),
    ),
    Rule(
        "the state is kept behind its Store protocol: it imports no persistence",
        ("postcompact.state",),
        (
            "postcompact.persist",
            "postcompact.service",
            "postcompact.restore",
            "postcompact.transcript",
            ADMISSION,
            *TOP,
        ),
    ),
    Rule(
        "the services change state through the registry's units of work, never the store",
        (
            "postcompact.service",
            "postcompact.transcript",
            "postcompact.evaluation",
            "postcompact.settings",
        ),
        ("postcompact.persist", *TOP),
    ),
    Rule(
        "the base modules use nothing above them",
        BASE,
        (
            "postcompact.persist",
            *STATE_UNIT,
            "postcompact.service",
            "postcompact.restore",
            "postcompact.transcript",
            ADMISSION,
            *TOP,
        ),
    ),
)


def module_name(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(tree: ast.AST, here: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, module) for every postcompact module imported, `from x import y` counting as
    both x and x.y (y may be a submodule)."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _imported_from(node, here, is_package)
            out.append((node.lineno, base))
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return [(n, m) for n, m in out if m == "postcompact" or m.startswith("postcompact.")]


def within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def offences(package: Path = PACKAGE) -> list[str]:
    """Every import across a layer in the package at `package`, as `path:line: ...`."""
    found: set[str] = set()
    for path in sorted(package.rglob("*.py")):
        if "v1" in path.relative_to(package).parts:  # generated code
            continue
        here = module_name(path, package)
        tree = ast.parse(path.read_text(), str(path))
        for line, target in imports(tree, here, path.name == "__init__.py"):
            for rule in RULES:
                if here == "postcompact.core" and rule is RULES[0]:
                    continue  # the facade itself
                if within(here, rule.layer) and within(target, rule.forbidden):
                    rel = path.relative_to(package.parent)
                    found.add(f"{rel}:{line}: {here} imports {target} ({rule.name})")
    return sorted(found)


def private_imports(package: Path = PACKAGE) -> list[str]:
    """Every `from <postcompact module> import _name` in the package at `package` whose `_name`
    is not a module of its own, as `path:line: ...`."""
    found: set[str] = set()
    for path in sorted(package.rglob("*.py")):
        if "v1" in path.relative_to(package).parts:  # generated code
            continue
        here = module_name(path, package)
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = _imported_from(node, here, path.name == "__init__.py")
            if not (base == "postcompact" or base.startswith("postcompact.")):
                continue
            for alias in node.names:
                name = alias.name
                if not name.startswith("_") or name.startswith("__"):
                    continue
                if _is_module(package, f"{base}.{name}"):
                    continue
                rel = path.relative_to(package.parent)
                found.add(
                    f"{rel}:{node.lineno}: {here} imports {base}.{name} "
                    "(a private name of another module)"
                )
    return sorted(found)


def _imported_from(node: ast.ImportFrom, here: str, is_package: bool) -> str:
    base = node.module or ""
    if node.level:  # relative: resolve against this module's package
        pkg = here.split(".") if is_package else here.split(".")[:-1]
        pkg = pkg[: len(pkg) - (node.level - 1)]
        base = ".".join([*pkg, base] if base else pkg)
    return base


def _is_module(package: Path, module: str) -> bool:
    """Whether `module` is a module or package under `package` (or the Rust core, `_core`)."""
    if module == "postcompact._core":
        return True
    rel = Path(*module.split(".")[1:])
    return (package / rel).with_suffix(".py").exists() or (package / rel / "__init__.py").exists()


def main() -> int:
    found = offences() + private_imports()
    for f in found:
        print(f)
    if found:
        print(
            f"check_layers: {len(found)} import(s) across a layer or of a private name",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
