"""Rated ladder games that teach something: balanced openings, played as colour-swapped pairs.

Two deterministic bots that start every game from the initial position play
the same game every time, and each copy would count as new evidence. So a
rated match the lobby pairs (seekers or a challenge; never a tournament's,
which brings its own openings) starts from an opening of the game's balanced
suite (``suite_of``: the server passes ``arena.tournaments.openings.
balanced_suite``, the suites of ``arena ladder`` and tournaments), in pairs
as tournaments play them:

- two bots whose rated ladder games so far are an odd number play the
  *return game* of their last one: the same opening, colours swapped;
- otherwise they start a new pair: the next opening of the suite (the ``n``-th
  pair of two bots takes opening ``n`` counted from a place that depends on
  their names, so different pairs do not all start on the same line), with
  the colours the lobby drew.

A game whose registration names no balanced suite (``protocol.games.GameSpec.
balanced_suite``; tic-tac-toe) keeps the initial position; its return games
still swap colours. Once two bots have played every opening of the
suite both ways, the suite starts over. The history comes from the store
(``arena.store.pair_history``): all of a bot's pairs at once, the first time
it is paired after start-up, then from a bounded cache this chooser keeps
current with the games it starts; with several nodes sharing a database it
may trail the other nodes' games, as the rating cache does. A pairing pass
reads the bots it has not seen in one go (``prefetch``) before it starts
any match, so a match start does not wait for the database. ``arena serve
--no-rated-openings`` turns all this off (``ArenaConfig.rated_openings``).
"""

from __future__ import annotations

import logging
import zlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace

from arena.play.lobby import Pairing
from arena.store.pair_history import NEVER_MET, PairHistory, PairKey, pair_key

log = logging.getLogger(__name__)

Opening = tuple[int, ...]

HistoryReader = Callable[[Iterable[str]], Awaitable[dict[PairKey, PairHistory]]]
"""Bots -> every pair of theirs that met, and its games (``Store.bot_pair_histories``)."""

CACHED_PAIRS = 100_000
"""Pairs whose history is kept in memory (least recently met first out)."""


def _packed_key(key: PairKey) -> str:
    return "\0".join(key)  # names and games never hold a NUL


def _pack(history: PairHistory) -> str:
    """``history`` as one string: a cache entry the garbage collector does not track.

    Why: the cache holds up to ``CACHED_PAIRS`` entries; as objects (the history,
    its opening, its key) they were some 300,000 tracked objects, enough to make
    the server's collector (``arena.runtime``) run a full collection of 160 ms
    as the cache filled (bench.load ``--soak``). Moves are below 256 in every game.
    """
    opening = bytes(history.last_opening).decode("latin-1")
    return f"{history.games}\0{history.last_first or ''}\0{opening}"


def _unpack(packed: str) -> PairHistory:
    games, first, opening = packed.split("\0", 2)
    return PairHistory(int(games), tuple(opening.encode("latin-1")), first or None)


def pair_start(history: PairHistory, pairing: Pairing, suite: Sequence[Opening]) -> Pairing:
    """``pairing`` as the next game of two bots with ``history`` (see the module docstring)."""
    a, b = sorted(pairing.players)
    if history.games % 2 == 1 and history.last_first in (a, b):
        # The last game's second player moves first.
        players = (b, a) if history.last_first == a else (a, b)
        return replace(pairing, players=players, opening=history.last_opening)
    offset = zlib.crc32(f"{pairing.game}\0{a}\0{b}".encode())
    return replace(pairing, opening=suite[(offset + history.games // 2) % len(suite)])


class RatedOpenings:
    """Chooses where each rated ladder match starts; see the module docstring."""

    def __init__(
        self,
        history: HistoryReader,
        suite_of: Callable[[str], Sequence[Opening]],
        *,
        cached_pairs: int = CACHED_PAIRS,
    ) -> None:
        self._history = history
        self._suite_of = suite_of
        self._cached_pairs = cached_pairs
        self._cache: OrderedDict[str, str] = OrderedDict()
        """``_packed_key`` -> ``_pack``ed history, least recently met first."""
        self._loaded: set[str] = set()
        """Bots whose every pair is in the cache: a pair of theirs not there never met."""

    async def prefetch(self, pairings: Sequence[Pairing]) -> None:
        """Read the pair history of the bots of ``pairings`` not read yet, in one go."""
        bots = {bot for pairing in pairings for bot in pairing.players} - self._loaded
        if bots:
            await self._load(bots)

    async def choose(self, pairing: Pairing) -> Pairing:
        """``pairing`` with its opening and colours set; counts it as the pair's next game.

        When the history cannot be read, the game starts a new pair and is not
        counted here: the next read of the store counts it.
        """
        key = pair_key(pairing.game, *pairing.players)
        history = self._known(key)
        if history is None and await self._load(set(pairing.players)):
            history = self._known(key)
        chosen = pair_start(history or NEVER_MET, pairing, self._suite_of(pairing.game))
        if history is not None:
            self._remember(key, PairHistory(history.games + 1, chosen.opening, chosen.players[0]))
        return chosen

    def _known(self, key: PairKey) -> PairHistory | None:
        found = self._cache.get(_packed_key(key))
        if found is None:
            return NEVER_MET if key[1] in self._loaded or key[2] in self._loaded else None
        return _unpack(found)

    async def _load(self, bots: set[str]) -> bool:
        """Read ``bots``' pairs into the cache; False when the store could not answer."""
        try:
            histories = await self._history(bots)
        except Exception as exc:
            # A match is worth more than its opening: it starts anyway (see ``choose``).
            log.warning("could not read the pair history of %d bots: %s", len(bots), exc)
            return False
        self._loaded |= bots
        for key, history in histories.items():
            if _packed_key(key) not in self._cache:  # a game started meanwhile is newer
                self._remember(key, history)
        return True

    def _remember(self, key: PairKey, history: PairHistory) -> None:
        packed = _packed_key(key)
        self._cache[packed] = _pack(history)
        self._cache.move_to_end(packed)
        if len(self._cache) > self._cached_pairs:
            oldest, _ = self._cache.popitem(last=False)
            _, a, b = oldest.split("\0")
            # Their pairs are no longer all here: absent no longer means never met.
            self._loaded.difference_update((a, b))
