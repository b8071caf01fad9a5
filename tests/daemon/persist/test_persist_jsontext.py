"""The agent row's JSON columns (persist/jsontext.py): the very text `json.dumps` writes, and read
back by a reloaded store as they were written."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from postcompact.config import Config
from postcompact.persist import SqliteStore
from postcompact.persist.jsontext import announced_text, carried_text, sorted_strings
from postcompact.service.sessions import SessionService
from postcompact.state import CarriedRead, Change
from postcompact.state.registry import Registry
from postcompact.state.worker import finish_inline as done
from postcompact.v1 import postcompact_pb2 as pb

# Any code point, surrogates included (paths decoded with surrogate escapes carry them).
_TEXT = st.text(st.characters(exclude_categories=()), max_size=12)
_NAMES = st.sets(_TEXT, max_size=6)
_INTS = st.integers(min_value=0, max_value=2**62)


@given(_NAMES)
def test_sorted_strings_is_json_dumps(names: set[str]) -> None:
    assert sorted_strings(names) == json.dumps(sorted(names))
    assert sorted_strings(names, ",") == json.dumps(sorted(names), separators=(",", ":"))


@given(_NAMES, _NAMES, _NAMES, _NAMES)
def test_announced_text_is_json_dumps(
    tools: set[str], agents: set[str], mcp: set[str], skills: set[str]
) -> None:
    want = json.dumps(
        {
            "tools": sorted(tools),
            "agent_types": sorted(agents),
            "mcp": sorted(mcp),
            "sent_skills": sorted(skills),
        },
        separators=(",", ":"),
    )
    assert announced_text(tools, agents, mcp, skills) == want


@given(
    st.dictionaries(_TEXT, st.tuples(st.binary(min_size=32, max_size=32), _INTS), max_size=5),
    st.dictionaries(_TEXT, _INTS, max_size=5),
    st.dictionaries(_TEXT, _INTS, max_size=5),
)
def test_carried_text_is_json_dumps(
    reads: dict[str, tuple[bytes, int]], refs: dict[str, int], unaware: dict[str, int]
) -> None:
    hexed = {p: (d.hex(), n) for p, (d, n) in sorted(reads.items())}
    marks = dict(sorted(refs.items()))
    own = dict(sorted(unaware.items()))
    want: dict[str, object] = {"reads": {p: [h, n] for p, (h, n) in hexed.items()}, "refs": marks}
    if own:
        want["unaware"] = own
    assert carried_text(hexed, marks, own) == json.dumps(want)


def test_odd_paths_in_the_agent_row_survive_a_restart(tmp_path: Path) -> None:
    """Paths and names with quotes, backslashes, control and non-ASCII characters, in the nested
    memory, the announced sets and the carried reads and notes: stored as JSON `json.loads`
    reads, and back as they were after a reload. (Text that is not UTF-8 is refused by the
    loader, a row the checks quarantine: test_bad_state_rows.py.)"""
    odd = ['/p/"quoted"\\back', "/p/tab\there", "/p/é日本", "/p/ctl\n\x01\x7f", "/p/\u2028"]
    db = tmp_path / "state.db"
    reg = Registry(Config(), store=SqliteStore(db, max_bytes=1 << 30))
    s, _ = done(
        SessionService(reg, reg.config).open(pb.OpenSessionRequest(session_id="s", cwd="/p"))
    )
    a = s.agents[""]
    a.nested_memory.update(odd)
    a.catalog.announced_tools.update(odd)
    a.catalog.sent_skill_names.update(odd[:2])
    a.carried_reads = {
        p: CarriedRead(i + 1, sha256=hashlib.sha256(p.encode("utf-8", "surrogateescape")).digest())
        for i, p in enumerate(odd)
    }
    a.carried_refs = {p: 1_000 + i for i, p in enumerate(odd)}
    done(reg.write(s, a, _agent_row()))
    reg.store.close()

    conn = sqlite3.connect(db)
    try:
        nested, announced, carried = conn.execute(
            "SELECT nested_memory, announced, carried FROM agents"
        ).fetchone()
    finally:
        conn.close()
    assert json.loads(nested) == sorted(odd)
    assert json.loads(announced)["tools"] == sorted(odd)
    assert set(json.loads(carried)["refs"]) == set(odd)

    again = Registry(Config(), store=SqliteStore(db, max_bytes=1 << 30))
    try:
        b = done(again.session("s")).agents[""]
        assert b.nested_memory == set(odd)
        assert b.catalog.announced_tools == set(odd)
        assert b.catalog.sent_skill_names == set(odd[:2])
        assert b.carried_refs == a.carried_refs
        assert {p: (r.length, r.sha256) for p, r in b.carried_reads.items()} == {
            p: (r.length, r.sha256) for p, r in a.carried_reads.items()
        }
    finally:
        again.store.close()


def _agent_row() -> Change:
    change = Change()
    change.agent = True
    return change
