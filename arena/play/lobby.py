"""The lobby: open seeks, direct challenges, and pairing. Pure bookkeeping, no I/O.

Two seeks are compatible when they are for the same game and time control
and come from different bots. Seeks wait in a queue; the server calls
``pair`` shortly after each seek (a short window lets several seekers
gather) and after each match, and ``pair`` matches the closest ratings
first. A bot already playing its ``max_matches`` cannot seek; a waiting
seeker without room (it accepted a challenge meanwhile) waits for a later
``pair``.
Colours are drawn from the injected ``random.Random``; the match registry
may then give a rated pairing an opening and swap its colours
(``arena.play.rated_openings``).
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from protocol.errors import ProtocolError
from protocol.games import GAMES
from protocol.messages import ErrorCode, TimeControl


@dataclass(frozen=True, slots=True)
class TimeLimits:
    """The time controls the server accepts, and the one used when a request names none."""

    default: TimeControl
    min_move_ms: int = 50
    max_move_ms: int = 600_000
    max_bank_ms: int = 3_600_000

    def check(self, tc: TimeControl | None) -> TimeControl:
        """``tc`` (or the default) when within limits; raises ``bad_value`` otherwise."""
        if tc is None:
            return self.default
        if not self.min_move_ms <= tc.move_ms <= self.max_move_ms:
            raise ProtocolError(
                ErrorCode.BAD_VALUE,
                f"move_ms must be within {self.min_move_ms}-{self.max_move_ms}",
            )
        if not 0 <= tc.bank_ms <= self.max_bank_ms:
            raise ProtocolError(ErrorCode.BAD_VALUE, f"bank_ms must be within 0-{self.max_bank_ms}")
        return tc


@dataclass(frozen=True, slots=True)
class Pairing:
    """Two bots to start a match between: ``players[0]`` moves first.

    ``opening`` is the moves the match starts from (played for both before the
    first turn), and ``tournament`` the ``(tournament id, pair number)`` it is
    played for: both are set by the tournament scheduler, never by the lobby.
    ``match_id`` is the id the match must have when it was announced before it
    started (a pairing across nodes, ``arena.cluster``), else None: a new one.
    """

    game: str
    players: tuple[str, str]
    time_control: TimeControl
    opening: tuple[int, ...] = ()
    tournament: tuple[int, int] | None = None
    match_id: str | None = None


@dataclass(frozen=True, slots=True)
class Seek:
    """A bot waiting for an opponent."""

    bot: str
    game: str
    time_control: TimeControl
    rating: float
    order: int


@dataclass(frozen=True, slots=True)
class PendingChallenge:
    """A challenge sent and not yet answered."""

    challenge_id: str
    challenger: str
    opponent: str
    game: str
    time_control: TimeControl
    on_answer: Callable[[bool], None] | None = None
    """Set on a challenge the arena sends itself (``invite``): called with the answer."""


def check_game(game: str) -> None:
    """Raise ``no_such_game`` unless ``game`` is registered."""
    if game not in GAMES:
        raise ProtocolError(
            ErrorCode.NO_SUCH_GAME, f"unknown game {game!r}; games: {', '.join(GAMES)}"
        )


def closest_pairs(candidates: Iterable[Seek]) -> list[tuple[Seek, Seek]]:
    """Pair ``candidates``, closest ratings first (ties: the longest waiting, by ``order``).

    Each pair is (older seek, newer seek); a bot is paired at most once. Only
    seeks of one game and time control pair. Within such a group every seek
    is another bot's (``Lobby.seek`` refuses a second), so once a group is
    sorted by (rating, order) the best pair is always two neighbours. A heap
    of neighbouring pairs, keyed (rating gap, newer seek's order, older
    seek's order), yields the pairs in the order a scan of all pairs would
    pick them, in O(n log n) rather than O(n^2): with hundreds of seekers the
    scan stalled the event loop for seconds.
    """
    seeks: list[Seek] = []
    prev: list[int] = []
    nxt: list[int] = []
    heap: list[tuple[float, int, int, int, int]] = []

    def push(i: int, j: int) -> None:
        a, b = seeks[i], seeks[j]
        if a.bot == b.bot:  # never pair a bot with itself
            return
        gap = abs(a.rating - b.rating)
        heapq.heappush(heap, (gap, max(a.order, b.order), min(a.order, b.order), i, j))

    groups: dict[tuple[str, TimeControl], list[Seek]] = {}
    for seek in candidates:
        groups.setdefault((seek.game, seek.time_control), []).append(seek)
    by_bot: dict[str, list[int]] = {}
    for group in groups.values():
        group.sort(key=lambda s: (s.rating, s.order))
        for k, seek in enumerate(group):
            i = len(seeks)
            seeks.append(seek)
            prev.append(i - 1 if k > 0 else -1)
            nxt.append(i + 1 if k + 1 < len(group) else -1)
            by_bot.setdefault(seek.bot, []).append(i)
            if k > 0:
                push(i - 1, i)
    alive = [True] * len(seeks)

    def unlink(i: int) -> None:
        alive[i] = False
        p, n = prev[i], nxt[i]
        if p >= 0:
            nxt[p] = n
        if n >= 0:
            prev[n] = p
        if p >= 0 and n >= 0:
            push(p, n)

    pairs: list[tuple[Seek, Seek]] = []
    while heap:
        *_, i, j = heapq.heappop(heap)
        if not (alive[i] and alive[j] and nxt[i] == j):
            continue  # a neighbour pair that a pairing since then broke up
        a, b = sorted((seeks[i], seeks[j]), key=lambda s: s.order)
        for bot in (a.bot, b.bot):
            for k in by_bot[bot]:
                if alive[k]:
                    unlink(k)
        pairs.append((a, b))
    return pairs


class Lobby:
    """Seeks and challenges of the connected bots; see the module docstring."""

    def __init__(self, *, has_capacity: Callable[[str], bool], rng: random.Random) -> None:
        self._has_capacity = has_capacity
        self._rng = rng
        self._seeks: list[Seek] = []
        self._challenges: dict[str, PendingChallenge] = {}
        self._counter = itertools.count(1)

    @property
    def seeks(self) -> tuple[Seek, ...]:
        """Waiting seeks, oldest first."""
        return tuple(self._seeks)

    def seek(self, bot: str, game: str, tc: TimeControl, rating: float) -> None:
        """Queue ``bot``'s seek; ``pair`` matches it later."""
        check_game(game)
        if any(s.bot == bot and s.game == game and s.time_control == tc for s in self._seeks):
            raise ProtocolError(ErrorCode.ALREADY_SEEKING, f"already seeking {game} at {tc}")
        if not self._has_capacity(bot):
            raise ProtocolError(ErrorCode.ALREADY_SEEKING, "you already play your max_matches")
        self._seeks.append(Seek(bot, game, tc, rating, next(self._counter)))

    def cancel_seek(self, bot: str, game: str | None = None) -> int:
        """Withdraw ``bot``'s seeks (for one game, or all); returns how many were removed."""
        before = len(self._seeks)
        self._seeks = [
            s for s in self._seeks if not (s.bot == bot and (game is None or s.game == game))
        ]
        return before - len(self._seeks)

    def pair(self) -> list[Pairing]:
        """Pair waiting seekers, closest ratings first (ties: the longest waiting).

        A bot is paired at most once per call, so one with room for a single
        match that seeks two games does not start both (``closest_pairs``).
        """
        # Capacity cannot change during this synchronous call: ask once per seek.
        ready = [seek for seek in self._seeks if self._has_capacity(seek.bot)]
        pairs = closest_pairs(ready)
        if pairs:
            self.remove_seeks({seek.order for pair in pairs for seek in pair})
        return [self._pairing(a.game, a.bot, b.bot, a.time_control) for a, b in pairs]

    def remove_seeks(self, orders: set[int]) -> None:
        """Remove the seeks numbered ``orders`` (paired elsewhere)."""
        self._seeks = [s for s in self._seeks if s.order not in orders]

    def _pairing(self, game: str, a: str, b: str, tc: TimeControl) -> Pairing:
        players = (a, b) if self._rng.random() < 0.5 else (b, a)
        return Pairing(game, players, tc)

    # Challenges -----------------------------------------------------------------

    def challenge(
        self, challenger: str, opponent: str, game: str, tc: TimeControl
    ) -> PendingChallenge:
        """Record a challenge to ``opponent``, whose being online the caller has checked."""
        check_game(game)
        if challenger == opponent:
            raise ProtocolError(ErrorCode.BAD_VALUE, "a bot cannot challenge itself")
        challenge_id = f"c{next(self._counter)}"
        pending = PendingChallenge(challenge_id, challenger, opponent, game, tc)
        self._challenges[challenge_id] = pending
        return pending

    def challenges_from(self, challenger: str) -> list[PendingChallenge]:
        """The unanswered challenges ``challenger`` sent."""
        return [c for c in self._challenges.values() if c.challenger == challenger]

    def invite(
        self,
        opponent: str,
        challenger: str,
        game: str,
        tc: TimeControl,
        on_answer: Callable[[bool], None],
    ) -> PendingChallenge:
        """Record a challenge the arena sends ``opponent`` on its own behalf (a tournament's).

        ``challenger`` is the bot named as the opponent-to-be. The answer goes
        to ``on_answer`` (True: accepted) instead of starting a match; so does
        ``opponent`` leaving (False). The caller sends the ``challenge`` message.
        """
        challenge_id = f"c{next(self._counter)}"
        pending = PendingChallenge(challenge_id, challenger, opponent, game, tc, on_answer)
        self._challenges[challenge_id] = pending
        return pending

    def is_invite(self, challenge_id: str) -> bool:
        """Whether ``challenge_id`` is an unanswered ``invite`` (the arena's own challenge)."""
        pending = self._challenges.get(challenge_id)
        return pending is not None and pending.on_answer is not None

    def withdraw(self, challenge_id: str) -> bool:
        """Forget an unanswered ``invite`` without calling back; False if it was answered."""
        return self._challenges.pop(challenge_id, None) is not None

    def accept(self, bot: str, challenge_id: str) -> Pairing | None:
        """``bot`` accepts a challenge addressed to it; the pairing to start.

        None for an ``invite``: its ``on_answer`` was told, and its sender starts
        the match once every invited bot has accepted.
        """
        pending = self._find(bot, challenge_id)
        if pending.on_answer is not None:
            del self._challenges[challenge_id]
            pending.on_answer(True)
            return None
        if not (self._has_capacity(bot) and self._has_capacity(pending.challenger)):
            raise ProtocolError(ErrorCode.ALREADY_SEEKING, "a player already plays its max_matches")
        del self._challenges[challenge_id]
        return self._pairing(pending.game, pending.challenger, bot, pending.time_control)

    def decline(self, bot: str, challenge_id: str) -> PendingChallenge | None:
        """``bot`` declines a challenge addressed to it; returns it so the challenger is told.

        None for an ``invite``: its ``on_answer`` was told instead.
        """
        pending = self._find(bot, challenge_id)
        del self._challenges[challenge_id]
        if pending.on_answer is not None:
            pending.on_answer(False)
            return None
        return pending

    def _find(self, bot: str, challenge_id: str) -> PendingChallenge:
        pending = self._challenges.get(challenge_id)
        if pending is None or pending.opponent != bot:
            raise ProtocolError(
                ErrorCode.NO_SUCH_CHALLENGE, f"no challenge {challenge_id} addressed to you"
            )
        return pending

    def forget(self, bot: str) -> list[PendingChallenge]:
        """``bot`` left: drop its seeks and every challenge it sent or received (returned).

        An ``invite`` addressed to ``bot`` is answered False through its callback
        instead of being returned.
        """
        self.cancel_seek(bot)
        dropped = [c for c in self._challenges.values() if bot in (c.challenger, c.opponent)]
        for c in dropped:
            del self._challenges[c.challenge_id]
        for c in dropped:
            if c.on_answer is not None and c.opponent == bot:
                c.on_answer(False)
        return [c for c in dropped if c.on_answer is None]
