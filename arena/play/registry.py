"""The live matches this server owns: starting them, finding them, ending them on shutdown.

``MatchRegistry`` creates a ``Match`` for each pairing (its row written with
the store's next group commit, owned by this node), indexes the live
matches by id and by bot (so a connecting bot finds its matches without a
scan), and forgets a match only once its end is committed: until then its
bots count as playing, so their next match cannot start before they have
been told this one's result. Recently finished ids are remembered so a late
move gets ``match_over`` rather than ``no_such_match``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any, Protocol

from arena.play.clock import Clock
from arena.play.guests import is_guest, recorded_name
from arena.play.lobby import Pairing
from arena.play.match import Match, MatchObserver, MatchRecorder, PlayerLink, Spawn
from arena.play.rated_openings import RatedOpenings
from arena.ratings import DEFAULT_RATING
from protocol.errors import ProtocolError
from protocol.messages import ErrorCode

log = logging.getLogger(__name__)

RECENTLY_FINISHED = 1024
"""Finished match ids remembered to answer late moves with ``match_over``."""


class Ratings(Protocol):
    """Each bot's one rating: its leaderboard rating (``arena.leaderboard.Leaderboards``)."""

    def rating_now(self, bot: str, game: str) -> float | None:
        """``bot``'s rating in ``game`` without waiting; None before the game's first board."""
        ...

    async def rating(self, bot: str, game: str) -> float:
        """``bot``'s rating in ``game``, waiting for the game's first board if need be."""
        ...


class MatchStore(MatchRecorder, Protocol):
    """What the registry needs from the store besides recording."""

    async def open_match(
        self,
        game: str,
        players: tuple[str, str],
        move_ms: int,
        bank_ms: int,
        rated: bool = True,
        *,
        opening: Sequence[int] = (),
        tournament: tuple[int, int] | None = None,
        match_id: str | None = None,
    ) -> str:
        """Create the live match row (with the next group commit); returns its id
        (``match_id`` when given)."""
        ...


class MatchRegistry:
    """The live matches of this server; see the module docstring."""

    def __init__(
        self,
        store: MatchStore,
        *,
        observer: MatchObserver,
        clock: Clock,
        spawn: Spawn,
        link_of: Callable[[str, Callable[[PlayerLink], int]], PlayerLink | None],
        match_options: dict[str, Any] | None = None,
        openings: RatedOpenings | None = None,
        ratings: Ratings,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self._store = store
        self._ratings = ratings
        self._observer = observer
        self._clock = clock
        self._spawn = spawn
        self._link_of = link_of
        self._options = match_options or {}
        self._openings = openings
        self._matches: dict[str, Match] = {}
        self._by_bot: dict[str, set[Match]] = {}
        self._playing: Counter[str] = Counter()
        self._recently_finished: deque[str] = deque(maxlen=RECENTLY_FINISHED)
        self._all_done = asyncio.Event()
        self._all_done.set()
        self._on_change = on_change
        """Called after a match ends (so pairing can run again for its bots)."""

    def __len__(self) -> int:
        return len(self._matches)

    def __iter__(self) -> Iterator[Match]:
        return iter(list(self._matches.values()))

    def get(self, match_id: str) -> Match:
        """The live match ``match_id``; ``match_over`` or ``no_such_match`` otherwise."""
        match = self._matches.get(match_id)
        if match is not None:
            return match
        if match_id in self._recently_finished:
            raise ProtocolError(ErrorCode.MATCH_OVER, f"match {match_id} is over")
        raise ProtocolError(ErrorCode.NO_SUCH_MATCH, f"no live match {match_id}")

    def of_bot(self, bot: str) -> list[Match]:
        """The live matches ``bot`` plays in."""
        return list(self._by_bot.get(bot, ()))

    def playing(self, bot: str) -> int:
        """How many live matches ``bot`` plays (until each one's end is committed)."""
        return self._playing[bot]

    def on_link(self, bot: str, link: object) -> int:
        """How many live matches ``bot`` plays on connection ``link`` (a bot served by
        several workers, ``arena.net.presence``)."""
        return sum(1 for match in self._by_bot.get(bot, ()) if match.link(bot) is link)

    async def rating(self, bot: str, game: str) -> float:
        """``bot``'s rating for pairing and display: its leaderboard rating (``ratings``)."""
        if is_guest(bot):
            return DEFAULT_RATING  # never looked up: a guest has no rating, nor is shown one
        return await self._ratings.rating(bot, game)

    def rating_now(self, bot: str, game: str) -> float | None:
        """``rating`` without waiting (a seek is queued on the spot); None before the game's
        first board is built."""
        if is_guest(bot):
            return DEFAULT_RATING
        return self._ratings.rating_now(bot, game)

    async def prepare(self, pairings: Sequence[Pairing]) -> None:
        """Before ``start``-ing ``pairings`` (rated, one after the other): read what their
        openings need from the store in one go, so each start does not wait for it."""
        if self._openings is not None:
            await self._openings.prefetch([p for p in pairings if self._is_ladder(p, True)])

    def _is_ladder(self, pairing: Pairing, rated: bool) -> bool:
        """A rated match between accounts that brings no opening and no tournament."""
        guests = is_guest(pairing.players[0]) or is_guest(pairing.players[1])
        return rated and not guests and not pairing.opening and pairing.tournament is None

    async def start(self, pairing: Pairing, *, rated: bool = True) -> Match:
        """Create, register and begin the match for ``pairing``.

        A match with a guest (``arena.play.guests``) is never rated, and is
        stored under the guest account. A rated match that brings no opening
        and no tournament (a ladder game) gets its opening and colours from
        ``openings`` (``arena.play.rated_openings``) when given.
        """
        if self._openings is not None and self._is_ladder(pairing, rated):
            pairing = await self._openings.choose(pairing)
        if is_guest(pairing.players[0]) or is_guest(pairing.players[1]):
            rated = False
        tc = pairing.time_control
        players = pairing.players
        ratings = (
            await self.rating(players[0], pairing.game),
            await self.rating(players[1], pairing.game),
        )
        match_id = await self._store.open_match(
            pairing.game,
            (recorded_name(players[0]), recorded_name(players[1])),
            tc.move_ms,
            tc.bank_ms,
            rated=rated,
            opening=pairing.opening,
            tournament=pairing.tournament,
            match_id=pairing.match_id,
        )
        match = Match(
            match_id,
            pairing.game,
            players,
            tc,
            (
                self._link_of(players[0], partial(self.on_link, players[0])),
                self._link_of(players[1], partial(self.on_link, players[1])),
            ),
            recorder=self._store,
            clock=self._clock,
            observer=self._observer,
            on_finished=self._finished,
            spawn=self._spawn,
            ratings=ratings,
            rated=rated,
            opening=pairing.opening,
            **self._options,
        )
        self._matches[match_id] = match
        self._all_done.clear()
        for bot in players:
            self._playing[bot] += 1
            self._by_bot.setdefault(bot, set()).add(match)
        match.start()
        return match

    def abort_all(self, reason: str) -> None:
        """Abort every live match as the infrastructure's fault (unrated)."""
        for match in list(self._matches.values()):
            match.abort(reason)

    async def wait_all(self, timeout: float | None) -> bool:
        """Wait until every live match is over; False when ``timeout`` passed first."""
        try:
            async with asyncio.timeout(timeout):
                await self._all_done.wait()
        except TimeoutError:
            return False
        return True

    def _finished(self, match: Match) -> None:
        if self._matches.pop(match.match_id, None) is None:
            return
        self._recently_finished.append(match.match_id)
        for bot in match.players:
            self._playing[bot] -= 1
            if self._playing[bot] <= 0:
                del self._playing[bot]
            matches = self._by_bot.get(bot)
            if matches is not None:
                matches.discard(match)
                if not matches:
                    del self._by_bot[bot]
        if not self._matches:
            self._all_done.set()
        if self._on_change is not None:
            self._on_change()
