"""How a bot finds its matches: ``Seeking`` keeps at most one seek and one challenge
pending, and only while the bot has a seat free (``max_matches``, the games left)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from bots.client.config import ClientConfig
from protocol.messages import CancelSeek, Challenge, ClientMessage, Seek


class Seeking:
    """The bot's pending seek and challenge (``bots.client.runtime.BotClient`` owns one).

    ``post`` queues a message on the live connection, ``busy`` counts the matches
    holding a seat, ``finished`` the matches played.
    """

    def __init__(
        self,
        config: ClientConfig,
        post: Callable[[ClientMessage], None],
        busy: Callable[[], int],
        finished: Callable[[], int],
    ) -> None:
        self.config = config
        self.seek_pending = False
        self.challenge_pending = False
        self._post = post
        self._busy = busy
        self._finished = finished
        self._ids = itertools.count(1)

    def games_left(self) -> float:
        """Matches still to finish (infinite without ``config.games``)."""
        games = math.inf if self.config.games is None else self.config.games
        return games - self._finished()

    def free_seats(self) -> int:
        """Matches this bot may still start: limited by max_matches and the games left."""
        busy = self._busy()
        left = self.games_left() - busy
        return int(max(0, min(self.config.max_matches - busy, left)))

    def forget(self) -> None:
        """Nothing is pending any more (a new connection, a match paired or ended)."""
        self.seek_pending = self.challenge_pending = False

    def withdraw(self) -> bool:
        """Cancel a pending seek; whether there was one."""
        if not self.seek_pending:
            return False
        self._post(CancelSeek(game=self.config.game))
        self.seek_pending = False
        return True

    def look(self) -> None:
        """Seek, or challenge ``config.challenge``, when a seat is free and nothing is
        pending (the caller checks that the bot may play at all)."""
        if self.free_seats() <= 0:
            return
        config = self.config
        if config.challenge is not None:
            if not self.challenge_pending:
                self.challenge_pending = True
                self._post(
                    Challenge(
                        opponent=config.challenge,
                        game=config.game,
                        time_control=config.time_control,
                        id=f"challenge-{next(self._ids)}",
                    )
                )
        elif config.seek and not self.seek_pending:
            self.seek_pending = True
            self._post(
                Seek(
                    game=config.game, time_control=config.time_control, id=f"seek-{next(self._ids)}"
                )
            )
