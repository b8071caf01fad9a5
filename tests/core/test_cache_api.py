"""The Python surface of the file-state cache: path keys, identity of stored objects, errors,
load. The bench-only `LruCache` has its own file, test_lru_api.py."""

from __future__ import annotations

import sys

import pytest
from postcompact._core import FileState, FileStateCache, expand_path

MIB = 1024 * 1024
CWD = "/home/u/proj"
HOME = "/home/u"


# --- expand_path ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/a/b/c.rs", "/a/b/c.rs"),
        ("  /a/b.rs \n", "/a/b.rs"),  # trimmed
        ("\u3000/a\ufeff", "/a"),  # JavaScript trim: ideographic space, BOM
        ("/a\u0085", "/a\u0085"),  # ...but not NEL
        ("~", "/home/u"),
        ("~/", "/home/u"),
        ("~/notes/x.md", "/home/u/notes/x.md"),
        ("~other/x", "/home/u/proj/~other/x"),
        ("src/main.rs", "/home/u/proj/src/main.rs"),
        ("./src/../lib.rs", "/home/u/proj/lib.rs"),
        ("../sibling", "/home/u/sibling"),
        ("../../../../..", "/"),
        ("", "/home/u/proj"),
        (".", "/home/u/proj"),
        ("/a//b///c", "/a/b/c"),
        ("/a/./b/.", "/a/b"),
        ("/a/b/../../..", "/"),
        ("/a/b/", "/a/b"),  # no trailing slash but on the root
        ("/", "/"),
        ("//", "/"),
        ("/cafe\u0301.txt", "/caf\u00e9.txt"),  # NFC
        ("cafe\u0301", "/home/u/proj/caf\u00e9"),
        ("/my dir/a b.txt", "/my dir/a b.txt"),
    ],
)
def test_expand_path_vectors(path: str, expected: str) -> None:
    assert expand_path(path, CWD, HOME) == expected


def test_expand_path_without_home_keeps_tilde() -> None:
    assert expand_path("~/x", CWD) == "/home/u/proj/~/x"


def test_expand_path_returns_canonical_input_itself() -> None:
    path = "".join(["/a/", "b.rs"])  # a fresh, non-interned str
    assert expand_path(path, CWD) is path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("/a\0b", CWD), r'path contains a NUL byte: "/a\\0b"'),
        (("a", "rel/dir"), r'cwd must be an absolute path, got "rel/dir"'),
        (("a", "/x\0"), r"cwd contains a NUL byte"),
        (("~", CWD, "home"), r'home must be an absolute path, got "home"'),
    ],
)
def test_expand_path_errors(args: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        expand_path(*args)


# --- FileState --------------------------------------------------------------------------------


def test_file_state_fields_and_value_semantics() -> None:
    content = b"fn main() {}\n"
    state = FileState(content, 1_700_000_000_123, offset=1, limit=20)
    assert state.content is content
    assert (state.timestamp, state.offset, state.limit, state.partial_view) == (
        1_700_000_000_123,
        1,
        20,
        False,
    )
    assert FileState(content, 5) == FileState(bytes(content), 5)
    assert FileState(content, 5) != FileState(content, 6)
    assert FileState(content, 5) != FileState(content, 5, partial_view=True)
    assert FileState(content, 5).__eq__("x") is NotImplemented
    assert hash(FileState(content, 5)) == hash(FileState(bytes(content), 5))
    assert repr(state) == (
        "FileState(content=<13 bytes>, timestamp=1700000000123, offset=1, limit=20, "
        "partial_view=False)"
    )
    with pytest.raises(AttributeError):
        state.timestamp = 3  # type: ignore[misc]


def test_file_state_validates() -> None:
    with pytest.raises(ValueError, match="offset must be >= 0, got -1"):
        FileState(b"", 0, offset=-1)
    with pytest.raises(ValueError, match="limit must be >= 0, got -5"):
        FileState(b"", 0, limit=-5)
    with pytest.raises(TypeError):
        FileState("text", 0)  # type: ignore[arg-type]


# --- FileStateCache ---------------------------------------------------------------------------


def test_file_state_cache_defaults() -> None:
    cache = FileStateCache()
    assert (cache.max_entries, cache.max_size) == (100, 25 * MIB)
    assert (cache.cwd, cache.home) == (None, None)
    assert len(cache) == 0
    assert cache.total_size == 0
    assert repr(cache) == (
        "FileStateCache(len=0, total_size=0, max_entries=100, max_size=26214400, cwd=None, "
        "home=None)"
    )


def test_content_is_stored_by_reference() -> None:
    big = bytes(5 * MIB)
    state = FileState(big, 1)
    cache = FileStateCache(cwd="/w")
    cache.set("/w/big.bin", state)
    before = sys.getrefcount(big)
    got = cache.get("big.bin")
    assert got is state
    assert got.content is big
    assert sys.getrefcount(big) == before  # no copy was made and none is kept elsewhere
    assert cache.total_size == 5 * MIB
    snap = cache.snapshot()
    assert snap[0][1].content is big
    assert cache.clone().get("/w/big.bin") is state  # clones share the (immutable) states


def test_set_returns_the_key_and_normalises() -> None:
    cache = FileStateCache(cwd=CWD, home=HOME)
    key = "".join(["/abs/", "x.py"])
    assert cache.set(key, FileState(b"1", 1)) is key  # canonical: the argument itself
    assert cache.set(" src//a.py ", FileState(b"2", 2)) == "/home/u/proj/src/a.py"
    assert cache.set("~/b.md", FileState(b"3", 3)) == "/home/u/b.md"
    assert cache.keys() == ["/home/u/b.md", "/home/u/proj/src/a.py", "/abs/x.py"]
    assert cache.normalize("./src/a.py") == "/home/u/proj/src/a.py"
    assert cache.has("src/a.py")
    assert "src/a.py" in cache
    assert 42 not in cache
    state = cache.peek("/home/u/proj/src/./a.py")
    assert state is not None
    assert state.content == b"2"
    assert cache.keys()[0] == "/home/u/b.md"  # peek did not promote
    assert cache.get("src/a.py") is not None
    assert cache.keys()[0] == "/home/u/proj/src/a.py"
    assert cache.delete("src/a.py")
    assert not cache.delete("src/a.py")


def test_relative_path_without_cwd_is_an_error() -> None:
    cache = FileStateCache()
    cache.set("/abs", FileState(b"", 0))
    with pytest.raises(ValueError, match=r'cannot resolve the relative path "rel": no cwd'):
        cache.set("rel", FileState(b"", 0))
    with pytest.raises(ValueError, match="path contains a NUL byte"):
        cache.get("/a\0")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_entries": 0}, "max_entries must be between 1 and 4294967294, got 0"),
        ({"max_entries": -3}, "max_entries must be between 1 and 4294967294, got -3"),
        ({"max_size": 0}, "max_size must be at least 1, got 0"),
        ({"max_size": -1}, "max_size must be at least 1, got -1"),
        ({"cwd": "relative"}, 'cwd must be an absolute path, got "relative"'),
        ({"home": "~"}, 'home must be an absolute path, got "~"'),
    ],
)
def test_file_state_cache_bad_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FileStateCache(**kwargs)  # type: ignore[arg-type]


def test_oversize_state_is_not_stored_and_removes_existing() -> None:
    cache = FileStateCache(max_entries=10, max_size=10)
    cache.set("/a", FileState(b"12345", 1))
    cache.set("/b", FileState(b"", 1))
    assert cache.total_size == 6  # the empty file counts 1
    cache.set("/a", FileState(b"x" * 11, 2))
    assert cache.keys() == ["/b"]
    assert cache.evictions == 0


def test_merge_newer_wins_and_order() -> None:
    first = FileStateCache(cwd="/w")
    for path in ("/a", "/b", "/c"):
        first.set(path, FileState(b"first", 10))
    second = FileStateCache()
    second.set("/d", FileState(b"second", 1))
    second.set("/a", FileState(b"second", 10))  # tie: keep first's
    second.set("/b", FileState(b"second", 11))  # newer: take second's
    merged = first.merge(second)
    assert [(k, s.content) for k, s in merged.snapshot()] == [
        ("/d", b"second"),
        ("/a", b"first"),
        ("/b", b"second"),
        ("/c", b"first"),
    ]
    assert merged.cwd == "/w"
    assert first.keys() == ["/c", "/b", "/a"]  # inputs untouched
    assert [k for k, _ in first.merge(first).snapshot()] == ["/a", "/b", "/c"]


def test_file_state_cache_load_round_trip() -> None:
    cache = FileStateCache(max_entries=3, cwd="/w")
    for name in "abcd":
        cache.set(name, FileState(name.encode(), ord(name)))
    cache.get("b")
    snap = cache.snapshot()
    assert [k for k, _ in snap] == ["/w/b", "/w/d", "/w/c"]
    other = FileStateCache(max_entries=3)
    other.set("/zz", FileState(b"", 0))
    other.load(snap)
    assert other.snapshot() == snap
    with pytest.raises(ValueError, match="no cwd"):
        other.load([("relative", FileState(b"", 0))])
    assert other.snapshot() == snap  # unchanged after the error
    with pytest.raises(TypeError):
        other.load([("/x", "not a state")])  # type: ignore[list-item]
