"""Write the policy fields' documentation from the policy table (`make policy-table`).

The table is `postcompact.restore.policy.FIELDS`: the proto's `RestorePolicy` and each field's
annotation (`Policy`'s rows). Two generated parts are rewritten from it, each between its markers,
the rest of the file kept as it is:

- docs/profiles.md, "Policy fields": every field, its values, its default under each profile and
  what it does (`<!-- generated: policy -->` … `<!-- end: policy -->`);
- config.py's docstring, the keys of its `[policy]` example: the default profile's values and the
  others' where they differ (`# generated: policy` … `# end: policy`).

`--check` (in `make lint`) writes nothing and fails naming each file whose part is stale.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from postcompact import profiles
from postcompact.restore.policy import FIELDS, PolicyField
from postcompact.units import MIB
from postcompact.v1 import postcompact_pb2 as pb

ROOT = Path(__file__).resolve().parents[1]
PROFILES_MD = ROOT / "docs" / "profiles.md"
CONFIG_PY = ROOT / "daemon" / "postcompact" / "config.py"
# config.py's example: where a key's comment starts, and the longest line.
COMMENT_COLUMN = 38
WIDTH = 100


def _by_number() -> list[PolicyField]:
    """The rows in the proto's order (the table's own is the order of validation)."""
    return sorted(FIELDS, key=lambda f: f.descriptor.number)


def _number(n: int) -> str:
    return f"{n:,}"


def _values(f: PolicyField, *, markdown: bool) -> str:
    """What a layer may set `f` to."""
    k = f.knob
    if f.kind == "int":
        if k.maximum is None:
            bounds = f"{k.minimum} or more"
        else:
            size = f" ({k.maximum // MIB} MiB)" if k.unit == "bytes" and k.maximum >= MIB else ""
            bounds = f"{k.minimum} to {_number(k.maximum)}{size}"
        return f"{k.unit}, {bounds}" if k.unit else bounds
    if f.kind == "enum":
        names = [f"`{c}`" if markdown else json.dumps(c) for c in f.choices]
        return ", ".join(names[:-1]) + " or " + names[-1]
    if f.kind == "bool":
        return "`true` or `false`" if markdown else "true or false"
    text = inspect.getdoc(k.check) if k.check is not None else None
    text = text or "text"
    return text if markdown else text.replace("`", "")


def _shown(f: PolicyField, value: Any) -> str:
    """A value in the docs table."""
    if value is None:
        return "unset: the wording's"
    if f.kind == "int":
        return _number(value)
    if f.kind == "enum":
        return f"`{f.choice_name(value)}`"
    if f.kind == "bool":
        return "`true`" if value else "`false`"
    return f"`{value}`"


def _toml(f: PolicyField, value: Any) -> str:
    """A value as config.toml spells it."""
    if f.kind == "enum":
        return json.dumps(f.choice_name(value))
    if f.kind == "bool":
        return "true" if value else "false"
    if f.kind == "int":
        return str(value)
    return json.dumps(value)


def markdown_table() -> str:
    names = [profiles.name_of(p) for p in profiles.ALL]
    head = ["field", "values", *names, "what it does"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for f in _by_number():
        field = f"`{f.name}`"
        if f.config_key != f.name:
            field += f" (`[policy]` key `{f.config_key}`)"
        cells = [field, _values(f, markdown=True)]
        cells += [_shown(f, f.knob.value_for(p)) for p in profiles.ALL]
        cells.append(f.knob.doc)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def config_example() -> str:
    """The keys of config.py's `[policy]` example, indented as its docstring is."""
    shown = pb.PROFILE_DEFAULT
    out = []
    for f in _by_number():
        value = f.knob.value_for(shown)
        if value is None:
            line = f'    # {f.config_key} = "..."'
        else:
            line = f"    {f.config_key} = {_toml(f, value)}"
        others: dict[str, list[str]] = {}
        for p in profiles.ALL:
            theirs = f.knob.value_for(p)
            if p != shown and theirs != value:
                spelled = "unset" if theirs is None else _toml(f, theirs)
                others.setdefault(spelled, []).append(profiles.name_of(p))
        comment = _values(f, markdown=False)
        for spelled, names in others.items():
            comment += f"; {', '.join(names)}: {spelled}"
        column = max(COMMENT_COLUMN, len(line) + 1)
        wrapped = textwrap.wrap(comment, WIDTH - column - 2, break_on_hyphens=False) or [""]
        out.append(f"{line.ljust(column)}# {wrapped[0]}")
        out += [f"{' ' * column}# {rest}" for rest in wrapped[1:]]
    return "\n".join(out) + "\n"


def _replace(text: str, start: str, end: str, body: str, where: Path) -> str:
    """`text` with what is between the lines `start` and `end` replaced by `body`."""
    try:
        i = text.index(start + "\n") + len(start) + 1
        j = text.index(end + "\n", i)
    except ValueError:
        raise SystemExit(f"{where}: no {start!r} … {end!r} markers") from None
    return text[:i] + body + text[j:]


def generated() -> dict[Path, str]:
    """Each file as it should be."""
    docs = PROFILES_MD.read_text()
    config = CONFIG_PY.read_text()
    return {
        PROFILES_MD: _replace(
            docs,
            "<!-- generated: policy -->",
            "<!-- end: policy -->",
            markdown_table(),
            PROFILES_MD,
        ),
        CONFIG_PY: _replace(
            config, "    # generated: policy", "    # end: policy", config_example(), CONFIG_PY
        ),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if a generated part is stale")
    args = ap.parse_args(argv)
    stale = []
    for path, text in generated().items():
        if path.read_text() == text:
            continue
        if args.check:
            stale.append(path.relative_to(ROOT))
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    for path in stale:
        print(f"{path}: the policy table's part is stale: run 'make policy-table'", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
