"""One tally, every channel, the same three numbers: ``elo_interval`` is the only Elo method shown.

A W/D/L record goes through a real server over a seeded SQLite file (``/api/h2h``,
``/api/bots/NAME``, ``arena h2h``); a tally of colour-swapped pairs goes through a
tournament's status (the API body, the MQTT state payload, ``arena tournament
status``) and ``bots play``'s report. Each must show ``elo_interval`` of its tally:
the same JSON, or the same printed ``elo [low, high]``. Under 8 games every text
channel says "too few games".
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from arena.cli.bots_command import match_verdict
from arena.cli.main import main as arena_main
from arena.server import ArenaServer
from arena.stats import EloInterval, elo_interval
from arena.stats.interval import TOO_FEW, format_elo
from arena.store import Store
from arena.tournaments.report import format_status
from arena.tournaments.schedule import build_schedule
from arena.tournaments.settings import TournamentSettings
from arena.tournaments.standings import build_status
from arena.tournaments.state import GameResult, TournamentState
from bots.match import GameRecord, MatchResult
from protocol.games import Outcome, Termination, new_game
from tests.arena.conftest import ServerFactory
from tests.arena.rating_data import seed_results, tally_games
from tests.arena.test_server_http import http_get

GAME = "connect4"
TALLY = (3, 2, 7)
"""alice against bob: 3 losses, 2 draws, 7 wins."""
PAIR_SCORES = [0.0, 0.5, 1.0, 1.0, 1.0, 1.5, 1.5, 2.0, 2.0, 2.0]
"""x's totals over ten colour-swapped pairs against y: pentanomial (1, 1, 3, 2, 3)."""
PENTANOMIAL = (1, 1, 3, 2, 3)
FIGURES = re.compile(r"([+-](?:\d+|inf)) \[([+-](?:\d+|inf)), ([+-](?:\d+|inf))\]")


def three(text: str) -> tuple[str, str, str]:
    """The ``elo [low, high]`` a text channel printed."""
    found = FIGURES.search(text)
    assert found is not None, text
    return found.group(1), found.group(2), found.group(3)


def expected_three(interval: EloInterval) -> tuple[str, str, str]:
    """``elo``, ``low`` and ``high`` as printed, from the JSON every channel carries."""
    data = interval.to_json()
    low = float("-inf") if data["low"] is None else data["low"]
    high = float("inf") if data["high"] is None else data["high"]
    return format_elo(data["elo"]), format_elo(low), format_elo(high)


async def test_one_record_reads_the_same_on_the_api_bot_page_and_command_line(
    make_server: ServerFactory, store: Store, tokens: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    await seed_results(store, GAME, tally_games(TALLY, "alice", "bob"))
    await seed_results(store, GAME, [("alice", "carol", 1.0)] * 2)  # too few games
    server: ArenaServer = await make_server()
    interval = elo_interval(TALLY)
    assert not interval.too_few and expected_three(interval) == ("+120", "-93", "+366")

    _, _, h2h = await http_get(server.port, f"/api/h2h?game={GAME}&a=alice&b=bob")
    assert h2h["elo_interval"] == interval.to_json()
    _, _, page = await http_get(server.port, "/api/bots/alice")
    opponents = {row["bot"]: row for row in page["ratings"][0]["opponents"]}
    assert opponents["bob"]["elo_interval"] == interval.to_json()
    assert opponents["carol"]["elo_interval"]["too_few"] is True

    db = str(store.engine.url.database)
    code = await asyncio.to_thread(arena_main, ["h2h", "alice", "bob", "--game", GAME, "--db", db])
    out = capsys.readouterr().out
    assert code == 0 and three(out) == expected_three(interval)
    assert f"LOS {interval.los:.1%}" in out
    argv = ["h2h", "alice", "carol", "--game", GAME, "--db", db]
    code = await asyncio.to_thread(arena_main, argv)
    assert code == 0 and f"95%): {TOO_FEW}" in capsys.readouterr().out


def pair_state() -> TournamentState:
    """A finished gauntlet of x against y whose pairs give x ``PAIR_SCORES``."""
    settings = TournamentSettings(
        game=GAME, format="gauntlet", bots=("x", "y"), games_per_pair=2 * len(PAIR_SCORES)
    )
    start = datetime(2026, 1, 1, tzinfo=UTC)
    state = TournamentState(
        id=1, settings=settings, status="running", openings=((3,), (4,)),
        pairs=build_schedule(settings.format, 2, len(PAIR_SCORES), 2, seed=3),
        removed=[False, False], created_at=start,
    )  # fmt: skip
    split = {0.0: (0.0, 0.0), 0.5: (0.5, 0.0), 1.0: (1.0, 0.0), 1.5: (1.0, 0.5), 2.0: (1.0, 1.0)}
    for k, (pair, total) in enumerate(zip(state.pairs, PAIR_SCORES, strict=True)):
        games = split[total if pair.seat_a == 0 else 2.0 - total]
        for game, score_a in enumerate(games):
            at = start + timedelta(seconds=2 * k + game)
            state.record(GameResult(pair.number, game, score_a, f"m{k}-{game}", "line", at))
    return state


def test_one_pair_tally_reads_the_same_in_a_tournament_and_in_bots_play() -> None:
    interval = elo_interval(PENTANOMIAL)
    status = build_status(pair_state())
    [meeting] = status["meetings"]
    assert meeting["pentanomial"] == list(PENTANOMIAL)
    assert meeting["elo_interval"] == interval.to_json()
    # The MQTT state topic carries the status as strict JSON (no NaN or infinity).
    payload = json.loads(json.dumps(status, allow_nan=False))
    assert payload["meetings"][0]["elo_interval"] == interval.to_json()
    assert three(format_status(status).split("pentanomial")[-1]) == expected_three(interval)

    # bots play: the same pairs, played offline.
    board = new_game("tictactoe")
    games = []
    for number, total in enumerate(PAIR_SCORES):
        first_game = {0.0: 0.0, 0.5: 0.5, 1.0: 1.0, 1.5: 1.0, 2.0: 1.0}[total]
        for index, score in enumerate((first_game, total - first_game)):
            first = (2 * number + index) % 2  # strategy 0 moves first in even games
            winner = None if score == 0.5 else (first if score == 1.0 else 1 - first)
            games.append(GameRecord(first, (), Outcome(winner, Termination.LINE), board))
    result = MatchResult("tictactoe", ("x", "y"), tuple(games))
    assert result.pair_scores(0) == PAIR_SCORES
    line = match_verdict(result)
    assert "10 pairs" in line and three(line) == expected_three(interval)
    short = MatchResult("tictactoe", ("x", "y"), tuple(games[:6]))
    assert match_verdict(short).endswith(TOO_FEW)
