"""The schedule of a tournament: which two seats play each game pair, on which opening.

A game pair is two games on one opening with colours swapped: in its first
game seat ``a`` moves first, in its second seat ``b`` does. Pairs are
numbered in the order the scheduler prefers to start them, round by round,
so every two bots progress together and an interrupted tournament is
balanced. Round ``k`` plays opening ``order[k mod n]`` for every pairing,
where ``order`` is the suite shuffled by the tournament's seed: all bots
face the same openings.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from arena.tournaments.settings import Format


@dataclass(frozen=True, slots=True)
class PairSlot:
    """One game pair of the schedule (``tournament_pairs``)."""

    number: int
    seat_a: int
    seat_b: int
    opening: int
    """Index into the tournament's openings."""

    def first_seat(self, game: int) -> int:
        """The seat that moves first in game 0 or 1 of the pair."""
        return self.seat_a if game == 0 else self.seat_b

    def seats(self, game: int) -> tuple[int, int]:
        """(first, second) seat of game 0 or 1."""
        return (self.seat_a, self.seat_b) if game == 0 else (self.seat_b, self.seat_a)


def pairings(format: Format, seats: int) -> list[tuple[int, int]]:
    """The pairs of seats that meet, in one round of ``format`` (SPRT: the one pair)."""
    if format == "round-robin":
        return [(i, j) for i in range(seats) for j in range(i + 1, seats)]
    if format in ("gauntlet", "sprt"):
        return [(0, j) for j in range(1, seats)]
    if format == "ladder":
        return [(i, j) for i in range(seats) for j in (i + 1, i + 2) if j < seats]
    raise ValueError(f"unknown format {format!r}")


def opening_order(openings: int, seed: int) -> list[int]:
    """The suite's openings in the order rounds use them (a seeded shuffle)."""
    order = list(range(openings))
    random.Random(seed).shuffle(order)
    return order


def build_schedule(
    format: Format, seats: int, rounds: int, openings: int, seed: int
) -> list[PairSlot]:
    """Every pair of a tournament: ``rounds`` rounds of ``pairings`` (see the docstring).

    Within a round the first-moving seat alternates, so no seat always opens.
    """
    order = opening_order(openings, seed)
    slots: list[PairSlot] = []
    meetings = pairings(format, seats)
    for round_ in range(rounds):
        opening = order[round_ % openings]
        for k, (i, j) in enumerate(meetings):
            a, b = (i, j) if (round_ + k) % 2 == 0 else (j, i)
            slots.append(PairSlot(len(slots), a, b, opening))
    return slots
