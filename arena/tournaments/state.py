"""One tournament in memory: its settings, schedule and counted results, shared by the
scheduler (which keeps it current) and ``arena tournament status`` (which loads it).

A game slot is ``(pair number, game)``: game 0 of a pair has the pair's seat
``a`` move first, game 1 seat ``b``. A slot is

- *done* once a finished match was recorded for it (the first one, by end
  time: a slot is counted once);
- *void* after ``MAX_NO_SHOWS`` aborts in which a bot never moved (no game
  was ever played there; the pair does not count);
- *forfeit* while it is not done and one of its bots was removed from the
  arena: the removed bot loses it (in points, never in the statistics);
- otherwise *pending* (or *playing*, while the scheduler runs it).

A match aborted by the infrastructure (a server stopped or killed) counts
nothing and its slot is played again. ``SprtTracker`` follows an SPRT pair
by pair, in the order pairs were completed, and stops at the first bound.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from arena.stats import sprt
from arena.stats.sprt import Model, sprt_bounds
from arena.tournaments.openings import Opening
from arena.tournaments.schedule import PairSlot
from arena.tournaments.settings import TournamentSettings
from protocol.games import Termination
from protocol.games.base import winner_score

MAX_NO_SHOWS = 3
"""Aborts without a move (a no-show) after which a slot is given up as void."""

SlotKey = tuple[int, int]
"""(pair number, game 0 or 1)."""

MAX_GAMES_VERDICT = "max-games"
"""An SPRT's stored verdict when it reached ``max_games`` without crossing a bound."""


def games_to_show(status: str, done: int, planned: int) -> int:
    """The games a tournament's progress counts up to: ``planned`` while it can still play,
    the ``done`` ones once finished (an SPRT ends at its verdict, not at ``max_games``)."""
    return done if status == "finished" else planned


@dataclass(frozen=True, slots=True)
class GameResult:
    """A counted game: which slot, the score of the pair's seat ``a``, and the match."""

    pair: int
    game: int
    score_a: float
    """1, ½ or 0 from the point of view of the pair's seat ``a``."""
    match_id: str
    termination: str
    ended_at: datetime


class SprtTracker:
    """An SPRT updated after each completed pair; the first bound crossed is the verdict."""

    def __init__(self, elo0: float, elo1: float, alpha: float, beta: float, model: Model) -> None:
        self.elo0, self.elo1, self.alpha, self.beta, self.model = elo0, elo1, alpha, beta, model
        self.lower, self.upper = sprt_bounds(alpha, beta)
        self.counts = [0, 0, 0, 0, 0]
        self.llr = 0.0
        self.history: list[tuple[int, float]] = [(0, 0.0)]
        """(games, LLR) after each pair, for the chart."""
        self.verdict: str | None = None
        self.verdict_games: int | None = None

    def add_pair(self, score_new: float) -> str | None:
        """Count a pair in which the new bot scored ``score_new`` (0 ... 2); the new verdict."""
        self.counts[round(score_new * 2)] += 1
        games = 2 * sum(self.counts)
        if self.verdict is not None:
            return None  # pairs that finish after the verdict are recorded, never re-judged
        state = sprt(self.counts, self.elo0, self.elo1, self.alpha, self.beta, self.model)
        self.llr = state.llr
        self.history.append((games, state.llr))
        if state.verdict is not None:
            self.verdict, self.verdict_games = state.verdict, games
            return state.verdict
        return None

    def stop_at_max(self, games: int) -> None:
        """The test ran out of games without a verdict."""
        if self.verdict is None:
            self.verdict, self.verdict_games = MAX_GAMES_VERDICT, games


@dataclass
class TournamentState:
    """See the module docstring."""

    id: int
    settings: TournamentSettings
    status: str
    openings: tuple[Opening, ...]
    pairs: list[PairSlot]
    removed: list[bool]
    """Per seat: removed from the arena (its remaining games are forfeits)."""
    created_at: datetime
    started_at: datetime | None = None
    ended_at: datetime | None = None
    stored_verdict: str | None = None
    results: dict[SlotKey, GameResult] = field(default_factory=dict)
    order: list[GameResult] = field(default_factory=list)
    """Counted games in the order they ended."""
    no_shows: Counter[SlotKey] = field(default_factory=Counter)
    playing: set[SlotKey] = field(default_factory=set)
    """Slots the scheduler is starting or playing now."""
    elsewhere: set[SlotKey] = field(default_factory=set)
    """Slots other nodes of a multi-node arena play now (their claims, as last read)."""
    tallied: set[str] = field(default_factory=set)
    """Ids of the matches counted (``tally``): a match is counted once, however it is seen."""
    completed: list[int] = field(default_factory=list)
    """Pair numbers whose two games are both counted, in the order they completed."""
    sprt: SprtTracker | None = None
    version: int = 0
    """Bumped at every change, so a cached status knows it is stale."""

    def __post_init__(self) -> None:
        s = self.settings
        if s.format == "sprt" and s.elo0 is not None and s.elo1 is not None:
            model: Model = "logistic" if s.model == "logistic" else "normalized"
            self.sprt = SprtTracker(s.elo0, s.elo1, s.alpha or 0.05, s.beta or 0.05, model)
        self._void: set[SlotKey] = set()
        # Scans start at frontiers that only move forward over settled slots, so a pass
        # costs what is near them, not the whole schedule (100 000 slots, say).
        self._open_from = 0
        self._by_seat: list[list[SlotKey]] = [[] for _ in s.bots]
        self._by_meeting: dict[tuple[int, int], list[SlotKey]] = {}
        for pair in self.pairs:
            meeting = self._by_meeting.setdefault(_meeting(pair.seat_a, pair.seat_b), [])
            for game in (0, 1):
                self._by_seat[pair.seat_a].append((pair.number, game))
                self._by_seat[pair.seat_b].append((pair.number, game))
                meeting.append((pair.number, game))
        self._seat_from = [0] * len(s.bots)
        self._meeting_from: Counter[tuple[int, int]] = Counter()

    # Results ----------------------------------------------------------------------

    def record(self, result: GameResult) -> bool:
        """Count ``result`` unless its slot already counts; True when it completed its pair."""
        key = (result.pair, result.game)
        if key in self.results or key in self._void:
            return False
        self.results[key] = result
        self.order.append(result)
        self.version += 1
        other = self.results.get((result.pair, 1 - result.game))
        if other is None:
            return False
        self.completed.append(result.pair)
        if self.sprt is not None:
            pair = self.pairs[result.pair]
            score_a = result.score_a + other.score_a
            # The SPRT is about seat 0 (the new bot), whichever seat of the pair it had.
            self.sprt.add_pair(score_a if pair.seat_a == 0 else 2.0 - score_a)
        return True

    def tally(
        self,
        key: SlotKey,
        *,
        winner: int | None,
        termination: str,
        fault: str | None,
        match_id: str,
        ended_at: datetime,
    ) -> bool:
        """Count one ended match of slot ``key``: the one rule, live and on reload.

        ``termination`` and ``fault`` are their stored values. A finished match
        is a result (``record``); an abort without a fault is a no-show
        (``record_no_show``); an abort by the infrastructure counts nothing.
        True when the result completed its pair. A match already tallied counts nothing.
        """
        if match_id in self.tallied:
            return False
        self.tallied.add(match_id)
        if termination == Termination.ABORTED.value:
            if fault is None:
                self.record_no_show(key)
            return False
        score_first = winner_score(winner, 0)
        return self.record(
            GameResult(
                pair=key[0],
                game=key[1],
                score_a=score_first if key[1] == 0 else 1.0 - score_first,
                match_id=match_id,
                termination=termination,
                ended_at=ended_at,
            )
        )

    def record_no_show(self, key: SlotKey) -> None:
        """A match of ``key`` was aborted before a bot's first move."""
        self.no_shows[key] += 1
        if self.no_shows[key] >= MAX_NO_SHOWS and key not in self.results:
            self._void.add(key)
        self.version += 1

    def void_slots(self) -> set[SlotKey]:
        """Slots given up after ``MAX_NO_SHOWS`` no-shows."""
        return self._void

    def forfeit_loser(self, key: SlotKey) -> int | None:
        """The removed seat that forfeits ``key`` (None: not a forfeit)."""
        if key in self.results:
            return None
        pair = self.pairs[key[0]]
        for seat in (pair.seat_a, pair.seat_b):
            if self.removed[seat]:
                return seat
        return None

    # Scheduling --------------------------------------------------------------------

    def _settled(self, key: SlotKey) -> bool:
        """Counted, void or forfeited: nothing will ever be played there."""
        if key in self.results or key in self._void:
            return True
        pair = self.pairs[key[0]]
        return self.removed[pair.seat_a] or self.removed[pair.seat_b]

    @property
    def stopped(self) -> bool:
        """An SPRT with a verdict starts nothing more."""
        return self.sprt is not None and self.sprt.verdict is not None

    def pending(self) -> Iterator[SlotKey]:
        """Slots still to be played, in schedule order (busy ones excluded)."""
        if self.stopped:
            return
        while self._open_from < len(self.pairs) and all(
            self._settled((self._open_from, game)) for game in (0, 1)
        ):
            self._open_from += 1
        for pair in self.pairs[self._open_from :]:
            for game in (0, 1):
                key = (pair.number, game)
                if not self.busy(key) and not self._settled(key):
                    yield key

    def next_slot(self, free: Collection[int]) -> SlotKey | None:
        """The first pending slot in schedule order whose two seats are both in ``free``.

        With few seats free (a game just ended) it looks at each two of them; with
        many (a start) at each seat's slots in order.
        """
        if self.stopped:
            return None
        if len(free) * (len(free) - 1) // 2 <= len(self._by_meeting) // 4 + 1:
            return self._next_of_meetings(sorted(free))
        best: SlotKey | None = None
        for seat in free:
            slots = self._by_seat[seat]
            start = self._seat_from[seat]
            while start < len(slots) and self._settled(slots[start]):
                start += 1
            self._seat_from[seat] = start
            for index in range(start, len(slots)):
                key = slots[index]
                if best is not None and key >= best:
                    break
                if self.busy(key) or self._settled(key):
                    continue
                pair = self.pairs[key[0]]
                partner = pair.seat_b if pair.seat_a == seat else pair.seat_a
                if partner in free:
                    best = key
                    break
        return best

    def _next_of_meetings(self, free: list[int]) -> SlotKey | None:
        best: SlotKey | None = None
        for i, low in enumerate(free):
            for high in free[i + 1 :]:
                meeting = (low, high)
                slots = self._by_meeting.get(meeting)
                if slots is None:
                    continue
                start = self._meeting_from[meeting]
                while start < len(slots) and self._settled(slots[start]):
                    start += 1
                self._meeting_from[meeting] = start
                for key in slots[start:]:
                    if best is not None and key >= best:
                        break
                    if not self.busy(key) and not self._settled(key):
                        best = key
                        break
        return best

    def busy(self, key: SlotKey) -> bool:
        """Being played, here or on another node."""
        return key in self.playing or key in self.elsewhere

    def is_complete(self) -> bool:
        """True when nothing is left to play or waiting to finish, here or elsewhere."""
        return not self.playing and not self.elsewhere and next(self.pending(), None) is None

    @property
    def total_games(self) -> int:
        """Games the tournament plays at most (SPRT: up to ``max_games``)."""
        return 2 * len(self.pairs)

    @property
    def done_games(self) -> int:
        """Games counted, forfeited or void: the progress."""
        forfeits = 0
        if any(self.removed):
            forfeits = sum(
                1
                for pair in self.pairs
                for key in ((pair.number, 0), (pair.number, 1))
                if key not in self._void and self.forfeit_loser(key) is not None
            )
        return len(self.results) + len(self._void) + forfeits

    def players(self, key: SlotKey) -> tuple[str, str]:
        """(first, second) bot of slot ``key``."""
        first, second = self.pairs[key[0]].seats(key[1])
        return self.settings.bots[first], self.settings.bots[second]

    def opening_of(self, key: SlotKey) -> Opening:
        """The opening slot ``key`` starts from."""
        return self.openings[self.pairs[key[0]].opening]

    def scores(self) -> Sequence[tuple[int, int, float]]:
        """Per counted game: (first seat, second seat, first seat's score)."""
        rows = []
        for result in self.order:
            pair = self.pairs[result.pair]
            first, second = pair.seats(result.game)
            score = result.score_a if first == pair.seat_a else 1.0 - result.score_a
            rows.append((first, second, score))
        return rows


def _meeting(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)
