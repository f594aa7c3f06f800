"""``/api/h2h``, ``arena h2h`` and ``/api/bots/NAME``: a real server over a seeded SQLite file."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arena.cli.main import main as arena_main
from arena.cli.remote import http_base
from arena.server import ArenaServer
from arena.stats import elo_interval
from arena.stats.elo import Z95
from arena.store import Store
from tests.arena.conftest import ServerFactory
from tests.arena.rating_data import Game, expected_fit, random_games, seed_results
from tests.arena.test_server_http import http_get

GAME = "connect4"
SKILL = {"alice": 1650.0, "bob": 1550.0, "carol": 1450.0, "dave": 1350.0}


def record(games: list[Game], a: str, b: str) -> tuple[int, int, int]:
    """``a``'s wins, draws and losses against ``b``, counted from the game list."""
    scores = [s if (x, y) == (a, b) else 1.0 - s for x, y, s in games if {x, y} == {a, b}]
    return scores.count(1.0), scores.count(0.5), scores.count(0.0)


@pytest.fixture
async def seeded(store: Store, tokens: dict[str, str]) -> list[Game]:
    await store.add_bot("erin")  # registered, never played
    games = random_games(list(SKILL), 200, seed=21, skill=SKILL)
    await seed_results(store, GAME, games)
    await seed_results(store, "tictactoe", [("alice", "bob", 0.5)] * 3)
    return games


@pytest.fixture
async def rated_server(make_server: ServerFactory, seeded: list[Game]) -> ArenaServer:
    return await make_server()


async def test_h2h_is_elo_interval_of_the_pair_and_the_fitted_difference(
    rated_server: ArenaServer, seeded: list[Game], store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    port = rated_server.port
    fit = expected_fit(seeded)
    for a, b in (("alice", "bob"), ("dave", "alice"), ("carol", "dave")):
        status, _, body = await http_get(port, f"/api/h2h?game={GAME}&a={a}&b={b}")
        assert status == 200
        wins, draws, losses = record(seeded, a, b)
        assert (body["wins"], body["draws"], body["losses"]) == (wins, draws, losses)
        assert body["games"] == wins + draws + losses > 0
        assert body["score"] == pytest.approx((wins + draws / 2) / body["games"])
        interval = elo_interval((losses, draws, wins))
        assert body["elo_interval"] == interval.to_json()
        # The fitted difference: all games, with the covariance of the two ratings.
        names = [line.name for line in fit.ratings]
        i, j = names.index(a), names.index(b)
        cov = fit.covariance
        spread = float(np.sqrt(cov[i, i] + cov[j, j] - 2 * cov[i, j]))
        lead = fit.get(a).rating - fit.get(b).rating
        assert body["fitted"]["difference"] == pytest.approx(lead, abs=0.051)
        assert body["fitted"]["ci95"] == pytest.approx(Z95 * spread, abs=0.051)
        # The command line prints the same numbers from the database.
        db = str(store.engine.url.database)
        code = await asyncio.to_thread(arena_main, ["h2h", a, b, "--game", GAME, "--db", db])
        out = capsys.readouterr().out
        assert code == 0
        assert f"{wins} W / {draws} D / {losses} L" in out
        assert f"Elo difference (these games, 95%): {interval.text(los=True)}\n" in out
        assert f"{lead:+.1f} ± {Z95 * spread:.1f}" in out

    # A registered bot that never met the other: a record of nothing, no estimate.
    status, _, body = await http_get(port, f"/api/h2h?game={GAME}&a=alice&b=erin")
    assert status == 200 and body["games"] == 0 and body["elo_interval"] is None
    assert body["fitted"] is None and body["score"] is None
    for path, expected in [
        (f"/api/h2h?game={GAME}&a=alice", 400),
        (f"/api/h2h?game={GAME}&a=alice&b=alice", 400),
        ("/api/h2h?game=chess&a=alice&b=bob", 404),
        (f"/api/h2h?game={GAME}&a=alice&b=nobody", 404),
    ]:
        assert (await http_get(port, path))[0] == expected, path
    code = await asyncio.to_thread(arena_main, ["h2h", "alice", "nobody", "--db", db])
    assert code == 2 and "no bot named 'nobody'" in capsys.readouterr().err


async def test_bot_page_has_ratings_history_opponents_and_matches(
    rated_server: ArenaServer, seeded: list[Game], store: Store
) -> None:
    port = rated_server.port
    status, _, page = await http_get(port, "/api/bots/carol")
    assert status == 200 and page["bot"] == "carol" and page["active"] and not page["online"]
    assert [line["game"] for line in page["ratings"]] == [GAME]  # carol played no tic-tac-toe
    line = page["ratings"][0]
    _, _, board = await http_get(port, f"/api/leaderboard?game={GAME}")
    [entry] = [e for e in board["entries"] if e["bot"] == "carol"]
    for key in ("rating", "ci95", "provisional", "rank", "rank_low", "rank_high", "games"):
        assert line[key] == entry[key], key
    assert line["bots"] == len(board["entries"]) and line["group_note"] is None
    assert "elo" not in line and "elo_history" not in line  # one rating

    # History: the fitted rating after the first k games, ending on the board's line.
    history = line["history"]
    counts = [point["games"] for point in history]
    assert counts == sorted(set(counts)) and counts[-1] == line["games"] and len(history) <= 40
    assert (history[-1]["rating"], history[-1]["ci95"]) == (line["rating"], line["ci95"])
    assert history[0]["ci95"] > history[-1]["ci95"]
    stamps = [point["at"] for point in history]
    assert stamps == sorted(stamps)

    # Opponents: the records between the two, with elo_interval of each.
    opponents = {row["bot"]: row for row in line["opponents"]}
    assert set(opponents) == {"alice", "bob", "dave"}
    for name, row in opponents.items():
        wins, draws, losses = record(seeded, "carol", name)
        assert (row["wins"], row["draws"], row["losses"]) == (wins, draws, losses)
        assert row["elo_interval"] == elo_interval((losses, draws, wins)).to_json()
    # The latest matches, newest first, from carol's side.
    recent: list[dict[str, Any]] = page["recent_matches"]
    assert len(recent) == 20
    assert [m["started_at"] for m in recent] == sorted(
        (m["started_at"] for m in recent), reverse=True
    )
    for match in recent:
        seat = match["players"].index("carol")
        assert match["opponent"] == match["players"][1 - seat]
        expected_score = 0.5 if match["winner"] is None else float(match["winner"] == seat)
        assert match["score"] == expected_score

    # A bot with games in two games gets a line for each; unknown names are 404.
    _, _, alice = await http_get(port, "/api/bots/alice")
    assert [line["game"] for line in alice["ratings"]] == [GAME, "tictactoe"]
    _, _, erin = await http_get(port, "/api/bots/erin")
    assert erin["ratings"] == [] and erin["recent_matches"] == []
    assert (await http_get(port, "/api/bots/nobody"))[0] == 404
    # A second visit is served from the cached history: no new fit of any kind.
    fits = rated_server.leaderboards.fits
    assert (await http_get(port, "/api/bots/carol"))[2] == page | {"online": False}
    assert rated_server.leaderboards.fits == fits


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("ws://127.0.0.1:8765", "http://127.0.0.1:8765"),
        ("wss://arena.example/", "https://arena.example"),
        ("http://127.0.0.1:8765/", "http://127.0.0.1:8765"),
        ("https://arena.example/prefix/", "https://arena.example/prefix"),
    ],
)
def test_the_server_address_may_be_a_websocket_or_http_url(given: str, expected: str) -> None:
    assert http_base(given) == expected


def test_a_server_address_of_another_kind_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "arena.db")
    assert arena_main(["leaderboard", "--db", db, "--server", "ftp://127.0.0.1"]) == 2
    assert "expected http://, https://, ws:// or wss://" in capsys.readouterr().err


def arena_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m arena ARGS`` with no ``$ARENA_DB`` (a bot author's machine)."""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_DB"}
    return subprocess.run(
        [sys.executable, "-m", "arena", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


async def test_leaderboard_and_h2h_with_only_a_server_print_what_the_database_does(
    rated_server: ArenaServer, tmp_path: Path
) -> None:
    db = rated_server.store.engine.url.render_as_string(hide_password=False)
    url = f"ws://127.0.0.1:{rated_server.port}"
    for command in (["leaderboard", "--game", GAME], ["h2h", "alice", "bob", "--game", GAME]):
        remote, local = await asyncio.gather(
            asyncio.to_thread(arena_cli, *command, "--server", url),
            asyncio.to_thread(arena_cli, *command, "--server", url, "--db", db),
        )
        assert remote.returncode == 0, remote.stderr
        assert remote.stdout == local.stdout and "alice" in remote.stdout
    # No database read or created where the author runs it; errors are the server's own.
    unknown = await asyncio.to_thread(arena_cli, "h2h", "alice", "nobody", "--server", url)
    assert unknown.returncode == 2 and "no such bot: nobody" in unknown.stderr
    assert "Traceback" not in unknown.stderr and "arena.db" not in unknown.stderr
    gone = await asyncio.to_thread(arena_cli, "leaderboard", "--server", "http://127.0.0.1:9")
    assert gone.returncode == 2 and "cannot reach the server" in gone.stderr
