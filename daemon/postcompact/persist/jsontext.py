"""The JSON text of the agent row's small columns, written without `json.dumps`.

`json.dumps` sets up an encoder on every call (~3-4 µs), several times the cost of encoding a
few short strings, and an agent's row has three such columns, written at every Compact on the
event loop. These functions write the very text `json.dumps` writes for the same values (its
default separators unless a function says otherwise; strings escaped by the function it uses
itself with `ensure_ascii`, so non-ASCII text and surrogate escapes come out the same), which
tests/daemon/persist/test_persist_jsontext.py checks against `json.dumps` on generated values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from json.encoder import encode_basestring_ascii as _quoted

__all__ = ["announced_text", "carried_text", "sorted_strings"]


def sorted_strings(items: Iterable[str], sep: str = ", ") -> str:
    """`json.dumps(sorted(items))` (`sep` ",": with separators (",", ":"))."""
    return "[" + sep.join(map(_quoted, sorted(items))) + "]"


def announced_text(
    tools: Iterable[str], agent_types: Iterable[str], mcp: Iterable[str], sent_skills: Iterable[str]
) -> str:
    """`json.dumps` of {"tools", "agent_types", "mcp", "sent_skills"}, each sorted, with
    separators (",", ":")."""
    join = ",".join
    return (
        '{"tools":['
        + join(map(_quoted, sorted(tools)))
        + '],"agent_types":['
        + join(map(_quoted, sorted(agent_types)))
        + '],"mcp":['
        + join(map(_quoted, sorted(mcp)))
        + '],"sent_skills":['
        + join(map(_quoted, sorted(sent_skills)))
        + "]}"
    )


def carried_text(
    reads: Mapping[str, tuple[str, int]],
    refs: Mapping[str, int],
    unaware: Mapping[str, int] | None = None,
) -> str:
    """`json.dumps({"reads": {path: [hex, length]}, "refs": {path: timestamp}})`, with
    `"unaware": {path: timestamp}` after them when there are such files (complement mode), each
    in key order (already sorted by the caller: dicts keep their order)."""
    parts = [f'{_quoted(p)}: ["{digest}", {int(n)}]' for p, (digest, n) in reads.items()]
    marks = [f"{_quoted(p)}: {int(ts)}" for p, ts in refs.items()]
    text = '{"reads": {' + ", ".join(parts) + '}, "refs": {' + ", ".join(marks) + "}"
    if unaware:
        text += (
            ', "unaware": {'
            + ", ".join(f"{_quoted(p)}: {int(ts)}" for p, ts in unaware.items())
            + "}"
        )
    return text + "}"
