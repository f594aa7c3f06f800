"""``Rota``: the keepalive's slices (``arena.net.rota``)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from arena.net.rota import Rota


def test_members_that_join_together_spread_evenly_over_the_slices() -> None:
    rota: Rota[int] = Rota(20)
    for member in range(2_000):
        rota.add(member)
    sizes = [len(rota.turn()) for _ in range(20)]
    assert sizes == [100] * 20
    assert len(rota) == 2_000


def test_each_member_is_served_once_a_round_as_members_come_and_go() -> None:
    rng = random.Random(7)
    rota: Rota[int] = Rota(8)
    present: set[int] = set()
    for member in range(300):
        rota.add(member)
        present.add(member)
    for round_ in range(50):
        served = Counter(m for _ in range(8) for m in rota.turn())
        # Every member present through the whole round was served exactly once in it.
        assert set(served) == present, round_
        assert set(served.values()) == {1}, round_
        # Between rounds, some leave and some arrive.
        for member in rng.sample(sorted(present), 20):
            rota.discard(member)
            present.discard(member)
        for member in range(300 + 20 * round_, 320 + 20 * round_):
            rota.add(member)
            present.add(member)
        assert len(rota) == len(present)


def test_a_place_left_is_filled_first_and_repeats_are_ignored() -> None:
    rota: Rota[str] = Rota(3)
    for name in "abcdef":
        rota.add(name)
    rota.add("a")  # already in: nothing changes
    rota.discard("b")
    rota.discard("zz")  # never in: nothing changes
    rota.add("g")
    assert [rota.turn() for _ in range(3)] == [["a", "d"], ["e", "g"], ["c", "f"]]


def test_a_rota_needs_a_slice() -> None:
    with pytest.raises(ValueError, match="at least one slice"):
        Rota(0)
