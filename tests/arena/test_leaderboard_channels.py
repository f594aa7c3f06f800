"""Fitted ratings with intervals on every channel: MQTT, HTTP, the websocket and the command line.

A real ``ArenaApp`` (server on port 0, SQLite file, a private Mosquitto) serves a
database seeded with rated results through the store. Every channel must show
what ``fit_ratings`` gives for those games, computed here from the game list
alone; a match then played over real websockets must reach every channel after
exactly one more fit, however often the board is read meanwhile.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mosquitto_fixture import MOSQUITTO, Mosquitto, Recorder
from websockets.asyncio.client import ClientConnection, connect

from arena.app import ArenaApp
from arena.cli.main import main as arena_main
from arena.live import mqtt_topics as topics
from arena.stats import RatingFit
from arena.store import LeaderboardRow, Store
from protocol.messages import PROTOCOL_VERSION, LeaderboardReply, parse_server_message
from tests.arena.conftest import TEST_CONFIG
from tests.arena.rating_data import Game, expected_fit, random_games, seed_results

pytestmark = pytest.mark.skipif(MOSQUITTO is None, reason="the mosquitto binary is not installed")

GAME = "connect4"
SKILL = {"alice": 1700.0, "bob": 1550.0, "carol": 1400.0, "dave": 1500.0, "erin": 1450.0}
X_WINS = {0: 0, 1: 1, 2: 0, 3: 1, 4: 0, 5: 1, 6: 0}  # four in column 0
ACTIVE = ["alice", "bob", "carol", "dave"]


def seeded_games() -> list[Game]:
    """Plenty of games among three bots, a handful for dave, and erin's (removed later)."""
    regulars = random_games(["alice", "bob", "carol"], 240, seed=11, skill=SKILL)
    newcomer = [("dave", "carol", 1.0), ("bob", "dave", 1.0), ("dave", "alice", 0.5)]
    return regulars + newcomer + random_games(["erin", "alice", "bob"], 30, seed=3, skill=SKILL)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    started = Mosquitto(tmp_path)
    started.start()
    yield started
    started.kill()


async def seed_database(db: Path, games: list[Game]) -> tuple[dict[str, str], list[LeaderboardRow]]:
    """Register the bots, write ``games``, remove erin; the tokens and the Elo rows."""
    store = await Store.open(f"sqlite+aiosqlite:///{db}")
    try:
        tokens = {name: await store.add_bot(name) for name in SKILL}
        await seed_results(store, GAME, games)
        await store.remove_bot("erin")
        return tokens, await store.leaderboard(GAME)
    finally:
        await store.close()


def check_entries(entries: list[dict[str, Any]], fit: RatingFit, online: set[str]) -> None:
    """Entries (as JSON) against the independently computed fit, line by line."""
    assert [e["bot"] for e in entries] == [line.name for line in fit.ratings]
    for entry, line in zip(entries, fit.ratings, strict=True):
        assert entry["rank"] == line.rank
        assert entry["rating"] == pytest.approx(line.rating, abs=0.051)
        assert entry["ci95"] == pytest.approx(line.ci95, abs=0.051)
        assert entry["provisional"] is line.provisional
        assert (entry["rank_low"], entry["rank_high"]) == (line.rank_low, line.rank_high)
        assert entry["group"] == line.group
        assert (entry["games"], entry["wins"], entry["draws"], entry["losses"]) == (
            line.games,
            line.wins,
            line.draws,
            line.losses,
        )
        assert "elo" not in entry  # one rating: the incremental Elo is not shown
        assert entry["online"] is (line.name in online)


def http_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


async def spectator_board(ws_url: str) -> list[dict[str, Any]]:
    """The websocket ``leaderboard`` reply, parsed (so validated) by the protocol package."""
    async with connect(ws_url, compression=None) as ws:
        await ws.send(
            json.dumps({"type": "hello", "role": "spectator", "version": PROTOCOL_VERSION})
        )
        assert parse_server_message(await ws.recv()).type == "welcome"
        await ws.send(json.dumps({"type": "leaderboard", "game": GAME, "id": "lb"}))
        reply = parse_server_message(await asyncio.wait_for(ws.recv(), 5))
        assert isinstance(reply, LeaderboardReply) and reply.id == "lb"
        return [entry.to_dict() for entry in reply.entries]


async def bot_session(ws_url: str, name: str, token: str) -> ClientConnection:
    ws = await connect(ws_url, compression=None)
    hello = {"type": "hello", "role": "bot", "version": PROTOCOL_VERSION}
    await ws.send(json.dumps({**hello, "name": name, "token": token}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws


async def play(ws: ClientConnection) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """Seek, answer every turn from ``X_WINS``; the seat played, ``match_end`` and ``rating``."""
    seek = {"type": "seek", "game": GAME, "time_control": {"move_ms": 5000, "bank_ms": 0}}
    await ws.send(json.dumps(seek))
    seat, end = -1, None
    async with asyncio.timeout(10):
        while True:
            message = json.loads(await ws.recv())
            if message["type"] == "match_start":
                seat = message["you"]
            elif message["type"] == "your_turn":
                move = {"type": "move", "match_id": message["match_id"], "ply": message["ply"]}
                await ws.send(json.dumps({**move, "move": X_WINS[message["ply"]]}))
            elif message["type"] == "match_end":
                end = message
            elif message["type"] == "rating":
                assert end is not None and message["match_id"] == end["match_id"]
                return seat, end, message


def cli_lines(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert arena_main(list(argv)) == 0
    return capsys.readouterr().out.splitlines()


def check_cli_table(lines: list[str], fit: RatingFit, online: set[str]) -> None:
    rows = {line.split()[2]: line for line in lines if re.match(r"^\d+\s", line)}
    assert list(rows) == [line.name for line in fit.ratings]
    assert not any(line.split()[:1] == ["rank"] and "elo" in line.split() for line in lines)
    for line in fit.ratings:
        text = rows[line.name]
        span = (
            str(line.rank_low)
            if line.rank_low == line.rank_high
            else (f"{line.rank_low}-{line.rank_high}")
        )
        assert text.split()[:3] == [str(line.rank), span, line.name]
        assert f"{line.rating:.0f} ± {line.ci95:.0f}" in text
        assert (text.split("±")[1].split()[1] == "?") is line.provisional
        assert text.split()[-1] == ("yes" if line.name in online else "no")


async def test_fitted_ratings_reach_every_channel_and_one_result_costs_one_fit(
    tmp_path: Path, broker: Mosquitto, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "arena.db"
    games = seeded_games()
    tokens, _ = await seed_database(db, games)
    fit = expected_fit(games, shown=ACTIVE)
    assert [line.name for line in fit.ratings if line.provisional] == ["dave"]
    config = replace(TEST_CONFIG, db_url=f"sqlite+aiosqlite:///{db}", leaderboard_refresh_s=0.2)
    board_topic = topics.leaderboard(GAME)
    async with (
        Recorder(broker.port, board_topic) as mqtt,
        ArenaApp(config, mqtt_url=broker.url) as app,
    ):
        port = app.server.port
        http, ws_url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/"

        # MQTT: the retained board, published at start.
        await mqtt.wait_for(lambda ms: any(json.loads(m.payload)["entries"] for m in ms))
        check_entries(json.loads(mqtt.on(board_topic)[-1].payload)["entries"], fit, set())
        # HTTP, the websocket and the command line show the same numbers.
        body = await asyncio.to_thread(http_json, f"{http}/api/leaderboard?game={GAME}")
        check_entries(body["entries"], fit, set())
        check_entries(await spectator_board(ws_url), fit, set())
        alice = await bot_session(ws_url, "alice", tokens["alice"])
        lines = await asyncio.to_thread(
            cli_lines, capsys, "leaderboard", "--game", GAME, "--db", str(db), "--server", ws_url
        )
        check_cli_table(lines, fit, {"alice"})

        # Reading costs no fit.
        fits = app.server.leaderboards.fits
        for _ in range(20):
            await asyncio.to_thread(http_json, f"{http}/api/leaderboard?game={GAME}")
        for _ in range(3):
            await spectator_board(ws_url)
        assert app.server.leaderboards.fits == fits

        # One rated match over the websocket: one fit, and every channel has it.
        bob = await bot_session(ws_url, "bob", tokens["bob"])
        (seat, end, report), (_, _, report_bob) = await asyncio.gather(play(alice), play(bob))
        assert end["rated"] and end["result"] == "1-0" and "rating_changes" not in end
        winner, loser = ("alice", "bob") if seat == 0 else ("bob", "alice")
        played = [*games, (winner, loser, 1.0)]
        after = expected_fit(played, shown=ACTIVE)
        # Both are told their rows of the refitted board: the leaderboard's numbers.
        assert report == report_bob
        told = {e["bot"]: e for e in report["entries"]}
        assert set(told) == {"alice", "bob"}
        for name, entry in told.items():
            assert entry["rating"] == pytest.approx(after.get(name).rating, abs=0.051)
            assert entry["ci95"] == pytest.approx(after.get(name).ci95, abs=0.051)
            assert entry["games"] == after.get(name).games

        def has_new_game(messages: list[Any]) -> bool:
            entries = json.loads(messages[-1].payload)["entries"] if messages else []
            return sum(e["games"] for e in entries) == sum(line.games for line in after.ratings)

        await mqtt.wait_for(lambda ms: has_new_game(mqtt.on(board_topic)))
        both = {"alice", "bob"}
        check_entries(json.loads(mqtt.on(board_topic)[-1].payload)["entries"], after, both)
        body = await asyncio.to_thread(http_json, f"{http}/api/leaderboard?game={GAME}")
        check_entries(body["entries"], after, both)
        shown = {e["bot"]: e for e in body["entries"]}
        assert all(told[name] == shown[name] for name in told)  # to the point, every field
        check_entries(await spectator_board(ws_url), after, both)
        assert app.server.leaderboards.fits == fits + 1
        await alice.close()
        await bob.close()
