"""FileStateCache against a pure-Python reference (an OrderedDict and a byte counter), as a
hypothesis state machine: set/get/peek/has/delete/clear/clone/merge/snapshot with tiny bounds,
paths spelled in several ways that normalise to the same key."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
)
from postcompact._core import FileState, FileStateCache

CWD = "/w"
HOME = "/home/u"

# Canonical key -> spellings that normalise to it (with cwd=/w, home=/home/u).
SPELLINGS: dict[str, list[str]] = {
    "/w/a.txt": ["/w/a.txt", "a.txt", "./a.txt", "/w//a.txt", " /w/a.txt\n", "/w/x/../a.txt"],
    "/w/src/b.rs": ["/w/src/b.rs", "src/b.rs", "src/./b.rs", "/w/src/b.rs/."],
    "/home/u/notes.md": ["/home/u/notes.md", "~/notes.md", "../home/u/notes.md"],
    "/w/caf\u00e9": ["/w/caf\u00e9", "cafe\u0301", "/w/cafe\u0301"],
    "/etc/hosts": ["/etc/hosts", "/../etc/hosts", "//etc//hosts"],
    "/w/d": ["/w/d", "d"],
    "/w/e": ["/w/e", "e/"],
}
KEYS = list(SPELLINGS)
SIZES = [0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 70]

_contents = {n: bytes(range(65, 65 + min(n, 26))) * (n // 26 + 1) for n in SIZES}
CONTENT = {n: c[:n] for n, c in _contents.items()}


@dataclass(frozen=True)
class Entry:
    content: bytes
    timestamp: int


class Reference:
    """lru-cache semantics, written plainly. The OrderedDict's last item is the most recent."""

    def __init__(self, max_entries: int, max_size: int) -> None:
        self.max_entries = max_entries
        self.max_size = max_size
        self.items: OrderedDict[str, Entry] = OrderedDict()
        self.evictions = 0

    @staticmethod
    def size(entry: Entry) -> int:
        return max(1, len(entry.content))

    @property
    def total(self) -> int:
        return sum(self.size(e) for e in self.items.values())

    def _evict(self) -> None:
        self.items.popitem(last=False)
        self.evictions += 1

    def set(self, key: str, entry: Entry) -> None:
        size = self.size(entry)
        if size > self.max_size:
            self.items.pop(key, None)
            return
        if key in self.items:
            del self.items[key]
        elif len(self.items) == self.max_entries:
            self._evict()
        while self.total + size > self.max_size:
            self._evict()
        self.items[key] = entry

    def get(self, key: str) -> Entry | None:
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        return None

    def keys(self) -> list[str]:
        return list(reversed(self.items))

    def clone(self) -> Reference:
        copy = Reference(self.max_entries, self.max_size)
        copy.items = OrderedDict(self.items)
        return copy

    def merge(self, other: list[tuple[str, Entry]]) -> Reference:
        """mergeFileStateCaches: `other` is most recently used first."""
        merged = self.clone()
        for key, entry in other:
            existing = merged.get(key)
            if existing is None or entry.timestamp > existing.timestamp:
                merged.set(key, entry)
        return merged


def as_entry(state: FileState | None) -> Entry | None:
    return None if state is None else Entry(state.content, state.timestamp)


entries = st.tuples(st.sampled_from(KEYS), st.sampled_from(SIZES), st.integers(0, 6))


class FileStateMachine(RuleBasedStateMachine):
    cache: FileStateCache
    ref: Reference

    @initialize(max_entries=st.integers(1, 6), max_size=st.integers(1, 60))
    def init(self, max_entries: int, max_size: int) -> None:
        self.cache = FileStateCache(max_entries, max_size, cwd=CWD, home=HOME)
        self.ref = Reference(max_entries, max_size)

    @rule(
        key=st.sampled_from(KEYS),
        data=st.data(),
        size=st.sampled_from(SIZES),
        ts=st.integers(0, 6),
    )
    def set(self, key: str, data: st.DataObject, size: int, ts: int) -> None:
        spelling = data.draw(st.sampled_from(SPELLINGS[key]))
        state = FileState(CONTENT[size], ts, offset=1)
        assert self.cache.set(spelling, state) == key
        self.ref.set(key, Entry(CONTENT[size], ts))
        got = self.cache.peek(key)
        if got is not None:
            assert got is state  # stored by reference, not copied
            assert got.content is CONTENT[size]

    @rule(key=st.sampled_from(KEYS), data=st.data())
    def get(self, key: str, data: st.DataObject) -> None:
        spelling = data.draw(st.sampled_from(SPELLINGS[key]))
        assert as_entry(self.cache.get(spelling)) == self.ref.get(key)

    @rule(key=st.sampled_from(KEYS))
    def peek(self, key: str) -> None:
        assert as_entry(self.cache.peek(key)) == self.ref.items.get(key)

    @rule(key=st.sampled_from(KEYS))
    def has(self, key: str) -> None:
        assert self.cache.has(key) == (key in self.ref.items)
        assert (key in self.cache) == (key in self.ref.items)

    @rule(key=st.sampled_from(KEYS))
    def delete(self, key: str) -> None:
        assert self.cache.delete(key) == (self.ref.items.pop(key, None) is not None)

    @rule()
    def clear(self) -> None:
        self.cache.clear()
        self.ref.items.clear()

    @rule()
    def clone(self) -> None:
        copy = self.cache.clone()
        assert copy.snapshot() == self.cache.snapshot()
        assert copy.evictions == 0
        assert (copy.max_entries, copy.max_size, copy.cwd, copy.home) == (
            self.cache.max_entries,
            self.cache.max_size,
            CWD,
            HOME,
        )
        # Independent: clearing the original leaves the copy intact.
        self.cache.clear()
        assert len(copy) == len(self.ref.items)
        self.cache = copy
        self.ref = self.ref.clone()

    @rule(
        other=st.lists(entries, max_size=8),
        other_bounds=st.tuples(st.integers(1, 8), st.integers(1, 80)),
    )
    def merge(self, other: list[tuple[str, int, int]], other_bounds: tuple[int, int]) -> None:
        second = FileStateCache(*other_bounds, cwd="/elsewhere")
        for key, size, ts in other:
            second.set(key, FileState(CONTENT[size], ts))
        before = self.cache.snapshot()
        second_before = second.snapshot()
        merged = self.cache.merge(second)
        assert self.cache.snapshot() == before
        assert second.snapshot() == second_before
        assert merged.cwd == CWD
        self.ref = self.ref.merge([(k, Entry(s.content, s.timestamp)) for k, s in second_before])
        self.cache = merged

    @rule()
    def merge_with_itself(self) -> None:
        self.cache = self.cache.merge(self.cache)
        self.ref = self.ref.merge(list(reversed(self.ref.items.items())))

    @rule()
    def snapshot_round_trip(self) -> None:
        snap = self.cache.snapshot()
        assert [k for k, _ in snap] == self.ref.keys()
        assert [as_entry(s) for _, s in snap] == [
            self.ref.items[k] for k in reversed(self.ref.items)
        ]
        self.cache.load(snap)
        assert self.cache.snapshot() == snap

    @invariant()
    def agrees_with_reference(self) -> None:
        assert self.cache.keys() == self.ref.keys()
        assert self.cache.total_size == self.ref.total
        assert len(self.cache) == len(self.ref.items)
        assert self.cache.evictions == self.ref.evictions

    @invariant()
    def within_bounds(self) -> None:
        assert len(self.cache) <= self.cache.max_entries
        assert self.cache.total_size <= self.cache.max_size


FileStateMachine.TestCase.settings = settings(
    max_examples=300,
    stateful_step_count=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
    database=None,
)
TestFileStateMachine = FileStateMachine.TestCase
