"""The viewer's layout in a real headless Chromium at phone, laptop and desktop widths.

A real server holds rated Connect Four games of six bots (one, "solver", with two
games, so its interval is wide) and has run tournaments with ``AutoBot``s: a
finished round robin, an SPRT that accepted H1 and one still waiting for its bots.
At 390, 1024, 1280 and 1440 px every page is measured in the page itself
(``layout_audit.js``): from 1024 px up every table column lies inside its panel;
at 390 px a column may lie beyond the panel's edge only in a box that scrolls it
into view, and the page never scrolls sideways; no column is ever hidden. Every
chart titles both axes, keeps its texts apart and off its lines, and draws the
rating band inside its plot. The tournaments list shows each tournament's leader
or SPRT verdict, the same as the tournament's own status.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect
from viewer_support import PageFactory

from arena.server import ArenaConfig, ArenaServer
from arena.store import Store
from arena.tournaments.openings import OpeningSuite
from arena.tournaments.settings import TournamentSettings
from tests.arena.http_schema import check_route
from tests.arena.rating_data import random_games, seed_results
from tests.tournament_bots import AutoBots

Shot = Callable[[Page, str], Awaitable[Path]]
AUDIT = (Path(__file__).parent / "layout_audit.js").read_text()
WIDTHS = (390, 1024, 1280, 1440)
WIDE = 1024
"""From this width up every column must fit its panel without scrolling."""
SKILL = {"alphabeta": 1800.0, "mcts-heavy": 1750.0, "mcts-2000": 1700.0, "greedy": 1200.0,
         "random": 900.0}  # fmt: skip
PLAYERS = ("mcts-2000", "mcts-heavy", "alphabeta", "greedy")
"""The bots that log in and play the tournaments ("random" and "solver" stay away)."""


@dataclass
class World:
    """The server and what the tests look at on it."""

    arena: ArenaServer
    round_robin: int
    sprt_done: int
    sprt_waiting: int
    replay: str
    """A round robin game's match id."""

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.arena.port}"


async def create(arena: ArenaServer, **values: Any) -> int:
    assert arena.tournaments is not None
    settings = TournamentSettings(**{"game": "tictactoe", "move_ms": 5000, **values})
    return await arena.tournaments.scheduler.create(settings, OpeningSuite("test", ((4,), (0,))))


@pytest.fixture
async def world(store: Store, open_page: PageFactory) -> AsyncIterator[World]:
    tokens = {name: await store.add_bot(name) for name in (*SKILL, "solver")}
    await seed_results(store, "connect4", random_games(list(SKILL), 300, seed=4, skill=SKILL))
    await seed_results(store, "connect4", [("solver", "random", 1.0), ("solver", "greedy", 1.0)])
    arena = ArenaServer(ArenaConfig(host="127.0.0.1", port=0, seed=7), store=store)
    await arena.start()
    bots = AutoBots(arena.port, tokens)
    try:
        for name in PLAYERS:
            await bots(name, resign=name == "greedy")
        sprt = {"format": "sprt", "elo0": 0.0, "elo1": 100.0, "alpha": 0.05, "beta": 0.05,
                "model": "normalized", "max_games": 400}  # fmt: skip
        world = World(
            arena,
            await create(
                arena,
                format="round-robin",
                bots=PLAYERS,
                games_per_pair=2,
                name="evening round robin",
            ),
            await create(arena, bots=("mcts-2000", "greedy"), name="is mcts-2000 better?", **sprt),
            await create(arena, bots=("random", "solver"), name="waiting for its bots", **sprt),
            "",
        )
        page = await open_page()
        for tid in (world.round_robin, world.sprt_done):
            await page.goto(f"{world.base}/tournaments/{tid}")
            await expect(page.locator("#tournament")).to_have_attribute(
                "data-status", "finished", timeout=30_000
            )
        assert arena.tournaments is not None
        status = await arena.tournaments.scheduler.status(world.round_robin)
        world.replay = status["games"][0]["match_id"]
        await page.context.close()
        yield world
    finally:
        await bots.close()
        await arena.shutdown()


def half_up(value: float) -> int:
    """A number as the page rounds it (``Math.round``: halves go up)."""
    return math.floor(value + 0.5)


async def audit(page: Page, check: str, argument: object) -> list[str]:
    """Run one of ``layout_audit.js``'s checks in the page."""
    problems: list[str] = await page.evaluate(f"({AUDIT}).{check}({json.dumps(argument)})")
    return problems


async def test_every_table_column_is_shown_or_scrolls_into_view_at_every_width(
    world: World, open_page: PageFactory, screenshot: Shot
) -> None:
    pages = {
        "/": '.tab-panel[data-game="connect4"] tbody tr',
        "/bots/mcts-2000": ".opponents tbody tr",
        "/tournaments": "table.tournaments tbody tr",
        f"/tournaments/{world.round_robin}": "#games tbody tr",
        f"/tournaments/{world.sprt_done}": "#games tbody tr",
        f"/matches/{world.replay}": "#moves li",
    }
    found: dict[str, list[str]] = {}
    for width in WIDTHS:
        page = await open_page(width=width, height=900)
        for path, ready in pages.items():
            await page.goto(world.base + path)
            await page.locator(ready).first.wait_for()
            problems = await audit(page, "tables", width >= WIDE)
            if problems:
                found[f"{path} at {width} px"] = problems
            slug = path.strip("/").replace("/", "-") or "home"
            await screenshot(page, f"layout-{slug}-{width}")
        await page.context.close()
    assert not found, json.dumps(found, indent=1)


async def test_charts_title_their_axes_and_keep_labels_off_lines_and_the_band_whole(
    world: World, open_page: PageFactory
) -> None:
    pages = {
        "/bots/mcts-2000": "svg.rating-chart",
        "/bots/solver": "svg.rating-chart",
        f"/tournaments/{world.sprt_done}": "svg.sprt-chart",
        f"/tournaments/{world.sprt_waiting}": "svg.sprt-chart",
    }
    found: dict[str, list[str]] = {}
    for width in WIDTHS:
        page = await open_page(width=width, height=900)
        for path, chart in pages.items():
            await page.goto(world.base + path)
            await page.locator(chart).first.wait_for()
            problems = await audit(page, "charts", chart)
            if problems:
                found[f"{path} at {width} px"] = problems
        await page.context.close()
    assert not found, json.dumps(found, indent=1)


async def test_the_tournaments_list_shows_each_leader_or_sprt_verdict(
    world: World, open_page: PageFactory, screenshot: Shot
) -> None:
    page = await open_page()
    await page.goto(f"{world.base}/tournaments")
    header = page.locator("table.tournaments thead th").last
    await expect(header).to_have_text("Leader / verdict")

    async def status(tid: int) -> dict[str, Any]:
        data: dict[str, Any] = await page.evaluate(
            f"fetch('/api/tournaments/{tid}').then(r => r.json())"
        )
        return data

    def cell(tid: int) -> Any:
        return page.locator(f"tr[data-id='{tid}'] td.headline")

    # The round robin's leader is its status's leader, with rating ± 95%.
    leader = (await status(world.round_robin))["leader"]
    assert leader is not None
    await expect(cell(world.round_robin)).to_have_attribute("data-leader", leader["bot"])
    points = half_up(abs(leader["rating"]))  # as the page rounds
    sign = "" if points == 0 else "+" if leader["rating"] > 0 else "\u2212"
    await expect(cell(world.round_robin)).to_have_text(
        f"{leader['bot']} {sign}{points} ± {half_up(leader['ci95'])}"
    )
    # The finished SPRT says which hypothesis it accepted and when, as its page does.
    sprt = (await status(world.sprt_done))["sprt"]
    assert sprt["verdict"] == "H1"
    await expect(cell(world.sprt_done)).to_have_attribute("data-verdict", "H1")
    await expect(cell(world.sprt_done)).to_have_text(
        f"H1 accepted after {sprt['verdict_games']} games"
    )
    # Its games are the games it played: it ended with its verdict, not at its max games.
    done = (await status(world.sprt_done))["progress"]["done"]
    games = page.locator(f"tr[data-id='{world.sprt_done}'] td.games")
    await expect(games).to_have_text(str(done))
    # The SPRT whose bots never came is running, its LLR still 0 between the bounds.
    waiting = (await status(world.sprt_waiting))["sprt"]
    await expect(cell(world.sprt_waiting)).to_have_attribute("data-verdict", "running")
    await expect(cell(world.sprt_waiting)).to_have_text(
        f"running, LLR 0.00 in [{waiting['lower']:.2f}, {waiting['upper']:.2f}]"
    )
    planned = (await status(world.sprt_waiting))["progress"]["total"]
    waiting_games = page.locator(f"tr[data-id='{world.sprt_waiting}'] td.games")
    await expect(waiting_games).to_have_text(f"0 / {planned}")
    # The API's list carries the status's own leader and SPRT fields (no second computation).
    listing = await page.evaluate("fetch('/api/tournaments').then(r => r.json())")
    check_route("/api/tournaments", 200, listing)  # the documented body
    listed = {row["id"]: row for row in listing["tournaments"]}
    assert listed[world.round_robin]["leader"] == leader
    assert listed[world.round_robin]["sprt"] is None
    assert listed[world.sprt_done]["sprt"] == {
        key: sprt[key] for key in ("verdict", "verdict_games", "llr", "lower", "upper")
    }
    await screenshot(page, "tournaments-list")
