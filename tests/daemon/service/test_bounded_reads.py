"""ReadFile's work is bounded before it is done (issue 11, item 1; docs/reliability.md): a ranged
read stops at the answer limit, a session cannot raise the size cap without bound, and a whole
read over `max_read_tokens` is refused or paged as its profile says."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from postcompact import render
from postcompact_client import PostcompactError, Session

from tests.daemon.conftest import RunningDaemon, new_session_id, short_dir, start_daemon

# A small message limit: the bound shows at megabytes rather than gigabytes.
MAX_MESSAGE = 1 << 20


@pytest.fixture(scope="module")
def small() -> Iterator[RunningDaemon]:
    d = start_daemon(config_toml=f"max_message_bytes = {MAX_MESSAGE}\n")
    yield d
    d.stop()
    shutil.rmtree(d.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def proj() -> Iterator[Path]:
    root = short_dir("pcb")
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _open(d: RunningDaemon, proj: Path, profile: str, **policy: int) -> Session:
    return d.client.open_session(
        str(proj), session_id=new_session_id("b"), profile=profile, policy=policy or None
    )


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_a_ranged_read_stops_at_the_answer_limit(small: RunningDaemon, proj: Path) -> None:
    """40 MB of 100-byte lines read with an unbounded limit: refused RESPONSE_TOO_LARGE before
    the range is read, so the daemon's peak RSS grows by far less than the file (today's code
    held the whole range, then its numbered text, before the check)."""
    big = proj / "big.txt"
    with open(big, "wb") as f:
        for _ in range(40):
            f.write((b"y" * 99 + b"\n") * 10_000)
    s = _open(small, proj, "default")
    before = peak_rss_kib(small.proc.pid)
    with pytest.raises(PostcompactError) as exc:
        s.read_file(str(big), offset=1, limit=10**12)
    assert exc.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert exc.value.reason == "RESPONSE_TOO_LARGE", exc.value
    assert "offset and limit" in exc.value.message
    grown_mib = (peak_rss_kib(small.proc.pid) - before) / 1024
    assert grown_mib < 16, f"peak RSS grew {grown_mib:.0f} MiB for a refused 40 MB read"
    # The refused read recorded nothing: a read of a range that fits works and is recorded.
    r = s.read_file(str(big), offset=3, limit=5)
    # A trailing "\n" ends an empty last line: 400,001 lines.
    assert (r.start_line, r.num_lines, r.total_lines) == (3, 5, 400_001)
    assert r.content == (b"y" * 99 + b"\n") * 4 + b"y" * 99
    s.close()


def test_a_file_of_newlines_is_refused_without_growing(small: RunningDaemon, proj: Path) -> None:
    """20 MB of empty lines: the numbered text (a number and a tab per line) is what would not
    fit; the line scan counts it and refuses before building it."""
    nl = proj / "newlines.txt"
    nl.write_bytes(b"\n" * 20_000_000)
    s = _open(small, proj, "default")
    before = peak_rss_kib(small.proc.pid)
    with pytest.raises(PostcompactError) as exc:
        s.read_file(str(nl), offset=1, limit=10**9)
    assert exc.value.reason == "RESPONSE_TOO_LARGE", exc.value
    grown_mib = (peak_rss_kib(small.proc.pid) - before) / 1024
    assert grown_mib < 16, f"peak RSS grew {grown_mib:.0f} MiB"
    s.close()


def test_the_size_cap_has_an_upper_bound(small: RunningDaemon, proj: Path) -> None:
    with pytest.raises(PostcompactError) as exc:
        _open(small, proj, "default", max_file_size_bytes=10**12)
    assert exc.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert exc.value.reason == "INVALID_POLICY"
    assert "max_file_size_bytes" in exc.value.message
    assert "64 MiB" in exc.value.message
    _open(small, proj, "default", max_file_size_bytes=64 << 20).close()


def _lines(n: int) -> str:
    return "".join(f"line {i:05d} " + "x" * 40 + "\n" for i in range(1, n + 1))


@pytest.fixture(scope="module")
def wide(proj: Path) -> Path:
    """A 2,000-line file of about 27,000 rough tokens: over the 25,000 default."""
    p = proj / "wide.txt"
    p.write_text(_lines(2000))
    return p


def test_2_1_88_refuses_a_whole_read_over_max_read_tokens(small: RunningDaemon, wide: Path) -> None:
    s = _open(small, wide.parent, "claude-code-2.1.88", max_file_size_bytes=1 << 20)
    with pytest.raises(PostcompactError) as exc:
        s.read_file(str(wide))
    err = exc.value
    assert err.code == grpc.StatusCode.FAILED_PRECONDITION
    assert err.reason == "READ_TOKENS_EXCEEDED"
    tokens = int(err.metadata["tokens"])
    # Over a quarter of the cap, so weighed as Claude Code's countTokens would count it.
    assert tokens == (2 * len(wide.read_text()) + 3) // 6
    assert err.message == (
        f"File content ({tokens} tokens) exceeds maximum allowed tokens (25000). Use offset and "
        "limit parameters to read specific portions of the file, or search for specific content "
        "instead of reading the whole file."
    )
    # Nothing was recorded: writing it is still "not read"; a ranged read is not capped.
    assert s.check_write(str(wide)).result == 2  # WRITE_CHECK_NOT_READ
    assert s.read_file(str(wide), offset=1, limit=2000).num_lines == 2000
    s.close()


@pytest.mark.parametrize("profile", ["claude-code", "default"])
def test_a_whole_read_over_max_read_tokens_is_its_first_page(
    small: RunningDaemon, wide: Path, profile: str
) -> None:
    s = _open(small, wide.parent, profile, max_file_size_bytes=1 << 20, max_read_tokens=1000)
    r = s.read_file(str(wide))
    assert r.partial
    lines = wide.read_text().split("\n")
    assert r.total_lines == 2001
    assert 0 < r.num_lines < 2000
    assert r.content.decode() == "\n".join(lines[: r.num_lines])
    # The longest whole-line head within the cap, measured as the cap is measured.
    units = 3 if profile == "claude-code" else 4

    def cost(n: int) -> int:
        return -(-len("\n".join(lines[:n])) // units)

    assert cost(r.num_lines) <= 1000 < cost(r.num_lines + 1) + 1
    numbered = r.text.decode()
    assert numbered.split("\t", 1)[0].strip() == "1"
    assert numbered.split("\t", 1)[1].startswith("line 00001 ")
    marker = render.read_page_marker(
        str(wide),
        shown_lines=r.num_lines,
        total_lines=2001,
        tokens=-(-len(wide.read_text()) // units),
        max_tokens=1000,
    )
    if profile == "default":
        assert marker
        assert marker in numbered
    else:  # Claude Code marks the page partial without a note
        assert "[... showing lines" not in numbered
    # Recorded as a read of the page's range: an edit is allowed, and the same range again is
    # the range's own read (the stub under the default profile).
    assert s.check_write(str(wide)).result == 1  # WRITE_CHECK_ALLOWED
    again = s.read_file(str(wide), offset=1, limit=r.num_lines)
    assert again.unchanged == (profile == "default")
    s.close()


def test_a_first_line_over_the_cap_is_refused(small: RunningDaemon, proj: Path) -> None:
    one = proj / "one-line.txt"
    one.write_text("z" * 8000)
    s = _open(small, proj, "default", max_read_tokens=1000)
    with pytest.raises(PostcompactError) as exc:
        s.read_file(str(one))
    assert exc.value.reason == "READ_TOKENS_EXCEEDED"
    assert "(2000 tokens) exceeds maximum allowed tokens (1000)" in exc.value.message
    s.close()
