"""B4's informational lines say what the 1.3x target leaves above a part of ReadFile's work,
and whether a variant saves anything, in both directions (bench/b4_transport.py). No daemon."""

from __future__ import annotations

from bench.b4_transport import _against, _left


def test_the_room_left_above_a_part_is_named_or_its_excess() -> None:
    assert _left(100.0, 120.0) == "the target leaves 10 µs per read"
    assert _left(100.0, 137.0) == "that alone is 7 µs over the target, which leaves nothing"


def test_a_variant_is_a_saving_only_when_it_costs_less() -> None:
    assert _against(12.4) == "12 µs per read below"
    assert _against(0.3) == "no saving: as much as"
    assert _against(-5.0) == "no saving: 5 µs per read above"
