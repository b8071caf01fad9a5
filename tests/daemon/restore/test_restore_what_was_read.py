"""Two restoration rules of the default profile, over a live daemon (docs/profiles.md): a file
last read as a range comes back as that range, and the per-file cap bounds the attachment as the
model sees it. The Claude Code profiles keep Claude Code's rules (a head from line 1; the cap on
the file's text)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from postcompact import render
from postcompact_client import Session
from postcompact_client.types import Attachment, CompactResponse, Decision, FileAttachment, Outcome

from tests.daemon.conftest import V1_POLICY, RunningDaemon, new_session_id

CAP = 5000


def _lines(n: int, width: int = 60, tag: str = "line") -> str:
    return "".join(f"{tag} {i:05d} ".ljust(width, "x") + "\n" for i in range(1, n + 1))


def _open(daemon: RunningDaemon, project: Path, tag: str, profile: str = "default") -> Session:
    """Under the default profile with its file rule as these walls were fixed for (V1_POLICY:
    the range last read, heads cut to the cap); today's is tested in test_restore_seen.py."""
    policy = V1_POLICY if profile == "default" else None
    return daemon.client.open_session(
        str(project), session_id=new_session_id(tag), profile=profile, policy=policy
    )


def _file(resp: CompactResponse, path: Path) -> tuple[Attachment, FileAttachment]:
    """The restored file attachment of `path`, and its payload."""
    ((att, f),) = [
        (a, a.file) for a in resp.attachments if a.file is not None and a.file.path == str(path)
    ]
    return att, f


def _decision(resp: CompactResponse, path: Path) -> Decision:
    (d,) = [d for d in resp.decisions if d.name == str(path)]
    return d


def test_a_range_read_comes_back_as_that_range(daemon: RunningDaemon, project: Path) -> None:
    """The harness author's reproduction: `test/hooks.ts` read at offset 2000, limit 50, then a
    compaction. The lines read come back, numbered as they were, and the cache holds that range:
    the same read right after is the "unchanged" stub."""
    path = project / "test" / "hooks.ts"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_lines(2400))
    s = _open(daemon, project, "range")
    read = s.read_file("test/hooks.ts", offset=2000, limit=50)
    assert (read.start_line, read.num_lines) == (2000, 50)
    resp = s.compact(skip_hooks=True, include_content=True)
    att, f = _file(resp, path)
    assert (f.start_line, f.num_lines, f.total_lines) == (2000, 50, 2401)
    assert not f.truncated
    assert f.content == read.content  # exactly the lines read
    call, result = att.blocks[0], att.blocks[1]
    assert '"offset":2000' in call
    assert '"limit":50' in call
    assert re.search(r"\b2000\tline 02000 ", result)
    assert re.search(r"\b2049\tline 02049 ", result)
    assert "line 00001 " not in result
    assert "line 02050 " not in result
    d = _decision(resp, path)
    assert d.outcome == Outcome.RESTORED
    assert d.detail == "lines 2000-2049 of 2401: the range last read"
    assert d.tokens == att.tokens
    assert s.read_file("test/hooks.ts", offset=2000, limit=50).unchanged
    # Another compaction restores the same range again.
    again = s.compact(skip_hooks=True, include_content=True)
    assert _file(again, path)[1].content == read.content


def test_claude_code_restores_a_range_read_from_line_one(
    daemon: RunningDaemon, project: Path
) -> None:
    path = project / "big.ts"
    path.write_text(_lines(2400))
    s = _open(daemon, project, "cc-range", profile="claude-code")
    s.read_file("big.ts", offset=2000, limit=50)
    resp = s.compact(skip_hooks=True, include_content=True)
    if any(a.file is not None for a in resp.attachments):
        _, f = _file(resp, path)
        assert f.start_line == 1
        assert f.content.startswith(b"line 00001 ")
    else:  # too large for Claude Code's cap: its note, as Claude Code does
        (ref,) = [a.file_reference for a in resp.attachments if a.file_reference is not None]
        assert ref.path == str(path)


def test_a_range_over_the_cap_keeps_its_start(daemon: RunningDaemon, project: Path) -> None:
    path = project / "long.ts"
    path.write_text(_lines(5000))
    s = _open(daemon, project, "range-cap")
    s.read_file("long.ts", offset=1200, limit=1500)
    resp = s.compact(skip_hooks=True, include_content=True)
    att, f = _file(resp, path)
    assert f.truncated
    assert f.start_line == 1200
    assert f.content.startswith(b"line 01200 ")
    last = 1200 + f.num_lines - 1
    assert f.content.rstrip(b"\n").endswith(f"line {last:05d} ".ljust(60, "x").encode())
    assert f"truncated for compaction at line {last} of 5001" in att.blocks[1]
    assert f"with offset {last + 1} " in att.blocks[1]
    assert att.tokens <= CAP
    d = _decision(resp, path)
    assert d.outcome == Outcome.TRUNCATED
    assert d.detail.startswith("lines 1200-2699 of 5001: the range last read; ")
    assert d.detail.endswith(f"; kept lines 1200-{last} of 5001")


def test_a_range_past_the_end_now_comes_back_from_line_one(
    daemon: RunningDaemon, project: Path
) -> None:
    path = project / "shrunk.ts"
    path.write_text(_lines(300))
    s = _open(daemon, project, "shrunk")
    s.read_file("shrunk.ts", offset=250, limit=20)
    path.write_text(_lines(40))
    resp = s.compact(skip_hooks=True, include_content=True)
    _, f = _file(resp, path)
    assert (f.start_line, f.num_lines, f.total_lines) == (1, 41, 41)
    assert f.content == path.read_bytes()


@pytest.mark.parametrize(
    ("width", "lines"),
    [(12, 3000), (60, 700), (240, 200), (2000, 30), (30, 40_000)],
    ids=["short lines", "code", "long lines", "very long lines", "numbering dominates"],
)
def test_the_cap_bounds_the_attachment_as_the_model_sees_it(
    daemon: RunningDaemon, project: Path, width: int, lines: int
) -> None:
    """The outside testers' reproduction: with TRUNCATE_HEAD the attachments measured 5,490 to
    6,012 tokens against a 5,000 cap, because the cap counted the raw text while the model sees it
    numbered, wrapped and announced by its Read call. Under the default profile `tokens` (the
    rough estimate of the whole rendered text) never passes the cap, and the head is the longest
    that fits: one line more would pass it."""
    path = project / f"w{width}.txt"
    path.write_text(_lines(lines, width))
    s = _open(daemon, project, f"cap-{width}")
    s.record_read(str(path), path.read_text(), timestamp_ms=1)
    resp = s.compact(skip_hooks=True, include_content=True, policy={"max_tokens_per_file": CAP})
    att, f = _file(resp, path)
    assert f.truncated
    assert att.tokens <= CAP
    shown = f.num_lines
    more = "".join(path.read_text().splitlines(keepends=True)[: shown + 1]).removesuffix("\n")
    marker = render.file_truncation_marker(str(path), shown_lines=shown + 1, total_lines=lines + 1)
    blocks = render.file_blocks(str(path), more, total_lines=lines + 1, truncation_marker=marker)
    assert len("\n".join(blocks)) / 4 > CAP


def test_claude_code_caps_the_text_as_claude_code_measures_it(
    daemon: RunningDaemon, project: Path
) -> None:
    """Under claude-code-2.1.88 (TRUNCATE_HEAD asked for) the cap is on the file's text, as
    Claude Code measures it: the rendered attachment may be larger than the cap."""
    path = project / "short-lines.txt"
    path.write_text(_lines(3000, 12))
    s = _open(daemon, project, "cc-cap", profile="claude-code-2.1.88")
    s.record_read(str(path), path.read_text(), timestamp_ms=1)
    policy = {"max_tokens_per_file": CAP, "oversize": "truncate_head"}
    resp = s.compact(skip_hooks=True, include_content=True, policy=policy)
    att, f = _file(resp, path)
    assert f.truncated
    assert att.tokens > CAP  # the numbering of 12-character lines is not counted by that rule
