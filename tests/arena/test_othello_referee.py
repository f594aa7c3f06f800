"""The referee plays Othello to the end: passes are moves, the disc count decides."""

from __future__ import annotations

import random

from test_referee import Game

from protocol.games import Termination
from protocol.games.othello import PASS


def test_random_othello_games_end_on_the_disc_count_with_passes_as_moves() -> None:
    rng = random.Random(7)
    passes = 0
    reasons = set()
    for _ in range(30):
        g = Game("othello")
        while g.ref.ending is None:
            state = g.ref.state
            move = rng.choice(state.legal_moves())
            passes += move == PASS
            g.play(state.to_move, move)
        final = g.ref.state
        black, white = (b.bit_count() for b in final.boards)  # type: ignore[attr-defined]
        ending = g.ending
        assert ending.winner == (None if black == white else 0 if black > white else 1)
        assert ending.termination is (Termination.DRAW if black == white else Termination.LINE)
        reasons.add(ending.reason)
    assert passes > 0
    assert (
        "no move left: a has more discs" in reasons and "no move left: b has more discs" in reasons
    )
