"""A rota: members split into equal slices, one slice served per turn, each member once a round.

The keepalive pings every connection once per ``ping_interval_s``. Pinging
them all in one callback holds the event loop for as long as a ping takes
times the connections (about 30 ms for 2,000 connections on a 2-core
machine): every move that arrives meanwhile waits. ``Rota`` spreads the
work: the keepalive runs ``slices`` times per interval and serves one slice
each time, so each turn costs a ``slices``-th of the whole and every
connection is still pinged once per interval.

A member joins the slice that has the fewest members (ties to the one
served soonest): members that join together spread over the slices, and
the places of members gone are filled first. A member is served once in
every round of ``slices`` turns from the round after it joined.
"""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class Rota(Generic[T]):
    """Members in ``slices`` slices; ``turn`` returns the next slice's members."""

    def __init__(self, slices: int) -> None:
        if slices < 1:
            raise ValueError(f"a rota needs at least one slice, got {slices}")
        self._slices: list[dict[T, None]] = [{} for _ in range(slices)]
        self._slice_of: dict[T, int] = {}
        self._next = 0
        """The slice the next ``turn`` serves."""

    def __len__(self) -> int:
        return len(self._slice_of)

    def add(self, member: T) -> None:
        """Put ``member`` in the smallest slice (it is served once per round from now on)."""
        if member in self._slice_of:
            return
        count = len(self._slices)
        # The smallest slice, ties broken toward the one served soonest.
        index = min(range(count), key=lambda k: (len(self._slices[k]), (k - self._next) % count))
        self._slices[index][member] = None
        self._slice_of[member] = index

    def discard(self, member: T) -> None:
        """Take ``member`` out of the rota (nothing if it is not in it)."""
        index = self._slice_of.pop(member, None)
        if index is not None:
            del self._slices[index][member]

    def turn(self) -> list[T]:
        """The members of the next slice, in the order they joined; the rota moves on."""
        members = list(self._slices[self._next])
        self._next = (self._next + 1) % len(self._slices)
        return members
