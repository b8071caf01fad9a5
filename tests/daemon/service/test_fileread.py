"""diskaccess.read_text: refusals (binary, device, directory, symlink escape, deny globs, size) and
ranges."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from postcompact import diskaccess
from postcompact.diskaccess import DEFAULT_DENY_GLOBS, FileReadError, TextFile, read_text

from tests.daemon.conftest import evict_from_page_cache


def _read(path: Path | str, root: Path, **kw: object) -> TextFile:
    kw.setdefault("max_bytes", 1000)
    return read_text(str(path), roots=[str(root)], **kw)  # type: ignore[arg-type]


def _kind(path: Path | str, root: Path, **kw: object) -> str:
    with pytest.raises(FileReadError) as err:
        _read(path, root, **kw)
    assert str(path) in err.value.message or err.value.kind in {"invalid_path", "invalid_range"}
    return err.value.kind


def test_whole_file(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_bytes(b"a\r\nb\nc\n")
    tf = _read(f, tmp_path)
    assert tf.content == b"a\r\nb\nc\n"
    assert (tf.total_lines, tf.start_line, tf.num_lines, tf.size) == (4, 1, 4, 7)
    assert tf.mtime_ms == os.stat(f).st_mtime_ns // 1_000_000
    assert tf.path == str(f)


def test_empty_file_has_no_lines(tmp_path: Path) -> None:
    f = tmp_path / "e.txt"
    f.write_bytes(b"")
    tf = _read(f, tmp_path)
    assert (tf.content, tf.total_lines, tf.num_lines) == (b"", 0, 0)


def test_ranges(tmp_path: Path) -> None:
    f = tmp_path / "r.txt"
    f.write_bytes(b"l1\r\nl2\nl3\nl4")
    assert _read(f, tmp_path, offset=2).content == b"l2\nl3\nl4"
    one = _read(f, tmp_path, offset=1, limit=1)
    assert (one.content, one.num_lines, one.total_lines) == (b"l1", 1, 4)
    mid = _read(f, tmp_path, offset=2, limit=2)
    assert (mid.content, mid.start_line, mid.num_lines) == (b"l2\nl3", 2, 2)
    past = _read(f, tmp_path, offset=9)
    assert (past.content, past.num_lines, past.total_lines) == (b"", 0, 4)
    assert _read(f, tmp_path, limit=100).content == b"l1\r\nl2\nl3\nl4"


def test_invalid_range(tmp_path: Path) -> None:
    f = tmp_path / "r.txt"
    f.write_text("x")
    assert _kind(f, tmp_path, offset=0) == "invalid_range"
    assert _kind(f, tmp_path, limit=0) == "invalid_range"


def test_too_large_whole_but_ranged_ok(tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    f.write_bytes(b"".join(b"line %d\n" % i for i in range(500)))
    assert _kind(f, tmp_path, max_bytes=100) == "too_large"
    part = _read(f, tmp_path, max_bytes=100, offset=10, limit=2)
    assert part.content == b"line 9\nline 10"
    assert part.total_lines == 501


def test_head_bytes_cuts_at_a_line_boundary(tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    f.write_bytes(b"aaaa\nbbbb\ncccc\n")
    tf = _read(f, tmp_path, max_bytes=4, head_bytes=12)
    assert (tf.content, tf.truncated, tf.num_lines, tf.total_lines) == (b"aaaa\nbbbb", True, 2, 4)
    first = _read(f, tmp_path, max_bytes=4, head_bytes=3)
    assert (first.content, first.truncated) == (b"aaa", True)
    # A multi-byte character is never split.
    g = tmp_path / "u.txt"
    g.write_bytes("ééé".encode())
    assert _read(g, tmp_path, head_bytes=3).content == "é".encode()
    whole = _read(f, tmp_path, head_bytes=1000)
    assert (whole.content, whole.truncated) == (b"aaaa\nbbbb\ncccc\n", False)


def test_binary_by_extension_and_by_content(tmp_path: Path) -> None:
    for name in ("x.png", "x.o", "x.so", "x.exe", "x.zip", "x.pdf", "X.PNG"):
        p = tmp_path / name
        p.write_text("text really")
        assert _kind(p, tmp_path) == "binary", name
    nul = tmp_path / "data.txt"
    nul.write_bytes(b"abc\0def")
    assert _kind(nul, tmp_path) == "binary"
    late = tmp_path / "late.txt"
    late.write_bytes(b"a" * 20000 + b"\0")
    assert _kind(late, tmp_path, max_bytes=100000) == "binary"


def test_device_directory_missing(tmp_path: Path) -> None:
    with pytest.raises(FileReadError) as err:
        read_text("/dev/null", roots=["/dev"], max_bytes=10)
    assert err.value.kind == "device"
    assert _kind(tmp_path, tmp_path) == "directory"
    assert _kind(tmp_path / "nope.txt", tmp_path) == "missing"


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert _kind(fifo, tmp_path) == "device"


def test_symlink_escaping_roots(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    (root / "link.txt").symlink_to(outside)
    assert _kind(root / "link.txt", root) == "outside_roots"
    assert _kind(outside, root) == "outside_roots"
    assert _kind(root / ".." / "secret.txt", root) == "outside_roots"
    # A symlink that stays inside is followed.
    (root / "real.txt").write_text("ok")
    (root / "inner.txt").symlink_to(root / "real.txt")
    tf = _read(root / "inner.txt", root)
    assert (tf.content, tf.path) == (b"ok", str(root / "real.txt"))


def test_deny_globs(tmp_path: Path) -> None:
    for name in (".env", ".env.local", "server.pem", "tls.key", "id_rsa", "id_ed25519.pub"):
        p = tmp_path / name
        p.write_text("secret")
        assert _kind(p, tmp_path, deny_globs=DEFAULT_DENY_GLOBS) == "denied", name
    ok = tmp_path / "env.txt"
    ok.write_text("fine")
    assert _read(ok, tmp_path, deny_globs=DEFAULT_DENY_GLOBS).content == b"fine"
    sub = tmp_path / "secrets"
    sub.mkdir()
    (sub / "a.txt").write_text("x")
    assert _kind(sub / "a.txt", tmp_path, deny_globs=["*/secrets/*"]) == "denied"


def test_relative_and_nul_paths_are_invalid(tmp_path: Path) -> None:
    assert _kind("rel.txt", tmp_path) == "invalid_path"
    assert _kind(str(tmp_path / "a\0b"), tmp_path) == "invalid_path"


# --- inline (page-cache-only) reads ---------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [{}, {"offset": 3}, {"offset": 2, "limit": 40}, {"limit": 5}, {"head_bytes": 700}],
    ids=["whole", "offset", "range", "limit", "head"],
)
def test_inline_read_equals_the_blocking_read(tmp_path: Path, kw: dict[str, int]) -> None:
    f = tmp_path / "lines.txt"
    f.write_bytes(b"".join(b"line %d\r\n" % i for i in range(300)))
    kw = {"max_bytes": 100_000, **kw}
    assert _read(f, tmp_path, inline=True, **kw) == _read(f, tmp_path, **kw)


def test_inline_read_refuses_what_would_block(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"x\n" * (diskaccess.INLINE_READ_BYTES // 2 + 1))  # over the inline size
    with pytest.raises(diskaccess.WouldBlock):
        _read(big, tmp_path, max_bytes=10**7, inline=True)
    assert _read(big, tmp_path, max_bytes=10**7).size == big.stat().st_size

    cold = tmp_path / "cold.txt"
    cold.write_bytes(b"cold line\n" * 4000)
    evict_from_page_cache(cold)
    probe = os.open(cold, os.O_RDONLY)
    try:
        os.preadv(probe, [bytearray(16)], 0, os.RWF_NOWAIT)
        cached = True
    except BlockingIOError:
        cached = False
    finally:
        os.close(probe)
    if cached:
        pytest.skip("this filesystem kept the evicted pages (no page-cache-only miss to test)")
    with pytest.raises(diskaccess.WouldBlock):
        _read(cold, tmp_path, max_bytes=10**6, inline=True)
    assert _read(cold, tmp_path, max_bytes=10**6).content == b"cold line\n" * 4000


async def test_off_loop_falls_back_to_a_worker_thread(tmp_path: Path) -> None:
    import threading

    big = tmp_path / "big.txt"
    big.write_bytes(b"y\n" * diskaccess.INLINE_READ_BYTES)
    small = tmp_path / "small.txt"
    small.write_bytes(b"z\n")
    loop_thread = threading.get_ident()
    threads: dict[str, list[tuple[bool, int]]] = {"big": [], "small": []}

    def reader(path: Path, name: str) -> Callable[[bool], TextFile]:
        def read(inline: bool) -> TextFile:
            threads[name].append((inline, threading.get_ident()))
            return _read(path, tmp_path, max_bytes=10**7, inline=inline)

        return read

    assert (await diskaccess.off_loop(reader(small, "small"))).content == b"z\n"
    assert threads["small"] == [(True, loop_thread)]
    assert (await diskaccess.off_loop(reader(big, "big"))).size == big.stat().st_size
    (first, on_loop), (second, worker) = threads["big"]
    assert (first, on_loop, second) == (True, loop_thread, False)
    assert worker != loop_thread


# --- the core's range reader against a model of Claude Code's readFileInRange --------------


def _model(data: bytes, start: int, limit: int | None, head: int | None) -> tuple[object, ...]:
    """(content, total_lines, num_lines, truncated) by the line model of the module docstring."""
    lines = data.split(b"\n")
    total = len(lines) if data else 0
    if start > total:
        return (b"", total, 0, False)
    end = total + 1 if limit is None else min(start + limit, total + 1)
    content = b"\n".join(lines[start - 1 : end - 1])
    to_eof = end == total + 1
    if not to_eof:
        content = content.removesuffix(b"\r")
    if head is not None and len(content) > head:
        cut = content.rfind(b"\n", 0, head + 1)
        if cut <= 0:
            cut = head
            while 0 < cut < len(content) and content[cut] & 0xC0 == 0x80:
                cut -= 1
        content = content[:cut].removesuffix(b"\r")
        return (content, total, content.count(b"\n") + 1, True)
    return (content, total, end - start, False)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.sampled_from(["", "a", "bc\r", "é€", "x" * 40, "\r", "🙂🙂"]), max_size=40),
    trailing_newline=st.booleans(),
    start=st.integers(1, 45),
    limit=st.one_of(st.none(), st.integers(1, 45)),
    head=st.one_of(st.none(), st.integers(0, 200)),
    inline=st.booleans(),
)
def test_ranged_reads_follow_the_line_model(
    tmp_path_factory: pytest.TempPathFactory,
    lines: list[str],
    trailing_newline: bool,
    start: int,
    limit: int | None,
    head: int | None,
    inline: bool,
) -> None:
    root = tmp_path_factory.mktemp("ranges")
    data = "\n".join(lines).encode() + (b"\n" if trailing_newline and lines else b"")
    f = root / "f.txt"
    f.write_bytes(data)
    offset = start if start > 1 else None
    if offset is None and limit is None and head is None:
        limit = 10**6  # keep the call a ranged one (a whole read is tested elsewhere)
    tf = _read(f, root, max_bytes=10**6, offset=offset, limit=limit, head_bytes=head, inline=inline)
    assert (tf.content, tf.total_lines, tf.num_lines, tf.truncated) == _model(
        data, start, limit, head
    )
    assert (tf.start_line, tf.size) == (start, len(data))
