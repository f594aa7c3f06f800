"""The client's side of its matches: ``MatchBook`` keeps each position in step with the
server, ``Searches`` chooses each move (one search per match, its answer kept for a resend).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from bots.budget import Budget
from bots.client.choosing import MoveChooser
from bots.client.config import ClientSummary, MatchReport
from bots.strategy import Forfeit
from protocol.errors import GameError
from protocol.games import GameState, decode_state
from protocol.messages import (
    ClientMessage,
    MatchEnd,
    MatchStart,
    Move,
    Moved,
    Resign,
    YourTurn,
)
from protocol.messages.client import RESIGN_REASON_MAX

log = logging.getLogger("bots.client")


@dataclass(slots=True)
class _Match:
    """A match this bot plays; ``ply`` is absolute (decoded states count from their position)."""

    match_id: str
    game: str
    players: tuple[str, str]
    you: int | None
    state: GameState | None
    ply: int
    banks_ms: tuple[int, int] | None = None
    """Both players' banks as the server last reported them."""


class MatchBook:
    """The live matches of this bot and those waiting to be resumed after a reconnect.

    The server is the referee: whenever ``moved`` or ``your_turn`` disagrees
    with the position followed here, the server's ``position`` is adopted.
    """

    def __init__(self, game: str) -> None:
        self.game = game
        self.live: dict[str, _Match] = {}
        self.resumable: set[str] = set()
        """Matches of a dropped connection, until the server resumes them (or not)."""

    def busy(self) -> int:
        """Seats taken: live and resumable matches."""
        return len(self.live) + len(self.resumable)

    def ids(self) -> list[str]:
        """Every live or resumable match id, sorted."""
        return sorted(self.live.keys() | self.resumable)

    def start(self, start: MatchStart) -> bool | None:
        """Follow a started (or re-sent) match; whether it is a resumption, None if undecodable."""
        try:
            state = decode_state(start.game, start.position).play_all(start.moves)
        except GameError as exc:
            log.error("cannot follow match %s: %s", start.match_id, exc)
            return None
        resumed = start.match_id in self.resumable or start.match_id in self.live
        self.resumable.discard(start.match_id)
        self.live[start.match_id] = _Match(
            start.match_id, start.game, start.players, start.you, state, start.ply,
            start.clocks.bank_ms,
        )
        # Results get an INFO line each; a start only matters when it is a resumption.
        log.log(
            logging.INFO if resumed else logging.DEBUG,
            "%s match %s (%s) vs %s at ply %d",
            "resumed" if resumed else "started",
            start.match_id,
            start.game,
            _opponent(start.players, start.you),
            start.ply,
        )
        return resumed

    def moved(self, moved: Moved) -> bool:
        """Play a broadcast move on the followed position; whether this bot played it."""
        match = self.live.get(moved.match_id)
        if match is None:
            return False
        match.banks_ms = moved.clocks.bank_ms
        if match.state is not None and moved.ply == match.ply:
            with contextlib.suppress(GameError):
                match.state = match.state.play(moved.move)
                match.ply += 1
        if (
            match.state is None
            or moved.ply + 1 != match.ply
            or match.state.encode() != moved.position
        ):
            self._resync(match, moved.position, moved.ply + 1)
        return moved.player == match.you

    def position(self, turn: YourTurn) -> GameState | None:
        """The position to move in (None when the server's cannot be decoded)."""
        match = self.live.get(turn.match_id)
        if match is None:  # a your_turn without match_start: its position is all we need
            match = _Match(turn.match_id, self.game, ("?", "?"), None, None, -1)
            self.live[turn.match_id] = match
        in_step = (
            match.state is not None
            and match.ply == turn.ply
            and match.state.encode() == turn.position
        )
        if not in_step and not self._resync(match, turn.position, turn.ply):
            match.state = None  # better the fallback move than a search of a wrong position
        return match.state

    def opponent_bank_ms(self, match_id: str) -> int | None:
        """The opponent's bank in ``match_id`` as last reported (None: not known)."""
        match = self.live.get(match_id)
        if match is None or match.you is None or match.banks_ms is None:
            return None
        return match.banks_ms[1 - match.you]

    def _resync(self, match: _Match, position: str, ply: int) -> bool:
        """Adopt the server's position (it is the referee); False if it cannot be decoded."""
        try:
            match.state = decode_state(match.game, position)
        except GameError as exc:
            log.error("match %s: undecodable position %r: %s", match.match_id, position, exc)
            return False
        match.ply = ply
        return True

    def end(self, end: MatchEnd) -> MatchReport:
        """Stop following a match; its report from this bot's side."""
        match = self.live.pop(end.match_id, None)
        self.resumable.discard(end.match_id)
        you = match.you if match else None
        return MatchReport(
            match_id=end.match_id,
            game=match.game if match else self.game,
            opponent=_opponent(match.players, you) if match else None,
            you=you,
            outcome=_outcome(end, you),
            end=end,
        )

    def disconnected(self) -> None:
        """The connection dropped: every live match waits to be resumed."""
        self.resumable.update(self.live)
        self.live.clear()

    def forget_unresumed(self) -> set[str]:
        """Drop the matches the server did not resume (they ended meanwhile); returns them."""
        gone, self.resumable = self.resumable, set()
        return gone


def _opponent(players: tuple[str, str], you: int | None) -> str | None:
    return players[1 - you] if you is not None else None


def _outcome(end: MatchEnd, you: int | None) -> str:
    if end.result == "*":
        return "aborted"
    if end.winner is None:
        return "draw"
    if you is None:
        return f"player {end.winner} won"
    return "win" if end.winner == you else "loss"


@dataclass(slots=True)
class _Search:
    """The move being chosen for one ply; ``result`` is kept to resend after a reconnect."""

    ply: int
    task: asyncio.Task[None] | None = None
    result: Move | None = None


class Searches:
    """One move search per match, answered through ``post``.

    A chooser that fails or picks an illegal move is replaced by the first
    legal move (counted in ``summary.fallback_moves``): a bug costs a move,
    not the match. A chooser that raises ``Forfeit`` (an engine fault)
    resigns the match with the fault's one-line reason.
    """

    def __init__(
        self,
        chooser: MoveChooser,
        post: Callable[[ClientMessage], None],
        summary: ClientSummary,
    ) -> None:
        self.chooser = chooser
        self._post = post
        self._summary = summary
        self._searches: dict[str, _Search] = {}
        self._ids = itertools.count(1)

    def answer(self, turn: YourTurn, state: GameState | None, budget: Budget) -> bool:
        """Start choosing the move ``turn`` asks for; False when it was asked before (after a
        reconnect) and the move already chosen is resent, or the search goes on."""
        search = self._searches.get(turn.match_id)
        if search is not None and search.ply == turn.ply:
            if search.result is not None:
                self._post(search.result)
            return False
        self.drop(turn.match_id)
        search = _Search(turn.ply)
        self._searches[turn.match_id] = search
        search.task = asyncio.create_task(
            self._think(turn, state, budget, search), name=f"think-{turn.match_id}-{turn.ply}"
        )
        return True

    async def _think(
        self, turn: YourTurn, state: GameState | None, budget: Budget, search: _Search
    ) -> None:
        move, analysis = turn.legal_moves[0], None
        try:
            if state is None:
                raise ValueError("no position to search")
            left = None if budget.expires is None else budget.expires - time.monotonic()
            async with asyncio.timeout(left):
                decision = await self.chooser.choose(state, budget)
            if decision.move in turn.legal_moves:
                move, analysis = decision.move, decision.analysis
            else:
                self._summary.fallback_moves += 1
                log.error(
                    "match %s ply %d: the chooser picked illegal move %r; playing %d",
                    turn.match_id,
                    turn.ply,
                    decision.move,
                    move,
                )
        except asyncio.CancelledError:
            raise
        except Forfeit as exc:
            # An engine fault loses this game, with its reason in the match record.
            reason = " ".join(str(exc).split())[:RESIGN_REASON_MAX]
            log.warning("match %s ply %d: resigning: %s", turn.match_id, turn.ply, reason)
            self._summary.forfeits += 1
            self._post(Resign(match_id=turn.match_id, reason=reason))
            return
        except TimeoutError:
            # A stalled machine ate the margin: a weak move beats a loss on time.
            self._summary.fallback_moves += 1
            log.warning(
                "match %s ply %d: no move from the search as the time runs out; playing %d",
                turn.match_id, turn.ply, move,
            )
        except Exception:
            self._summary.fallback_moves += 1
            log.exception(
                "match %s ply %d: choosing failed; playing %d", turn.match_id, turn.ply, move
            )
        search.result = Move(
            match_id=turn.match_id,
            ply=turn.ply,
            move=move,
            analysis=analysis,
            id=f"move-{next(self._ids)}",
        )
        self._post(search.result)
        if budget.deadline is not None:
            # Negative: the search overran its deadline (a stalled machine eats the margin).
            log.debug("match %s ply %d: move %d posted %+.0f ms from the deadline",
                      turn.match_id, turn.ply, move, (time.monotonic() - budget.deadline) * 1000)

    def drop(self, match_id: str) -> None:
        """Forget (and stop) the search of ``match_id``."""
        search = self._searches.pop(match_id, None)
        if search is not None and search.task is not None:
            search.task.cancel()

    async def cancel_all(self) -> None:
        """Stop every search and wait until they are gone."""
        tasks = [s.task for s in self._searches.values() if s.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._searches.clear()
