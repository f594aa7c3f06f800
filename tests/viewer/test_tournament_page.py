"""The tournament pages in real headless Chromium, against a real server running tournaments.

The bots are ``AutoBot``s (first legal move, or resign): a round robin with one
bot offline at first shows a live, partial crosstable that fills in when the
bot arrives; an SPRT against a bot that always resigns shows its LLR chart
crossing the upper bound. The pages poll the JSON API, so every assertion
waits for the DOM.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect
from viewer_support import PageFactory

from arena.server import ArenaServer
from arena.tournaments.openings import OpeningSuite
from arena.tournaments.settings import TournamentSettings
from tests.tournament_bots import AutoBots


@pytest.fixture
async def autobots(arena: ArenaServer, tokens: dict[str, str]) -> AsyncIterator[AutoBots]:
    bots = AutoBots(arena.port, tokens)
    yield bots
    await bots.close()


async def create(arena: ArenaServer, **values: Any) -> int:
    assert arena.tournaments is not None
    settings = TournamentSettings(**{"game": "tictactoe", "move_ms": 5000, **values})
    return await arena.tournaments.scheduler.create(settings, OpeningSuite("test", ((4,), (0,))))


async def test_a_live_round_robin_fills_its_crosstable_and_links_replays(
    arena: ArenaServer,
    autobots: AutoBots,
    open_page: PageFactory,
    screenshot: Callable[[Page, str], Awaitable[Path]],
) -> None:
    await autobots("alpha")
    await autobots("beta")
    tid = await create(
        arena, format="round-robin", bots=("alpha", "beta", "gamma"), games_per_pair=4,
        name="evening round robin", concurrency=2,
    )  # fmt: skip
    page = await open_page()
    await page.goto(f"http://127.0.0.1:{arena.port}/tournaments/{tid}")
    await expect(page.locator("#tournament-title")).to_have_text("evening round robin")
    # alpha and beta have played their 4 games; gamma is offline, so 8 wait.
    progress = page.locator("#progress")
    await expect(progress).to_have_attribute("value", "4")
    await expect(progress).to_have_attribute("max", "12")
    crosstable = page.locator("#crosstable table")
    await expect(crosstable.locator("tbody tr").nth(0).locator("td").nth(1)).to_have_text("2 / 4")
    await expect(crosstable.locator("tbody tr").nth(0).locator("td").nth(2)).to_have_text("–")
    await expect(page.locator("#tournament")).to_have_attribute("data-status", "running")
    await screenshot(page, "tournament-running")
    await autobots("gamma")
    await expect(page.locator("#tournament")).to_have_attribute(
        "data-status", "finished", timeout=20_000
    )
    await expect(progress).to_have_attribute("value", "12")
    await expect(crosstable.locator("tbody tr").nth(2).locator("td").last).to_have_text("4 / 8")
    await expect(page.locator("#standings tbody tr")).to_have_count(3)
    await expect(page.locator("#meetings tbody tr")).to_have_count(3)
    # Two pairs per meeting: each says "too few games" rather than a number, and no LOS.
    elo_cells = page.locator("#meetings tbody td.elo-interval")
    await expect(elo_cells).to_have_text(["too few games"] * 3)
    await expect(page.locator("#meetings tbody tr").first.locator("td").last).to_have_text("")
    await expect(page.locator("#games tbody tr")).to_have_count(12)
    await screenshot(page, "tournament-finished")
    # Each game links to its replay, which starts from the game's opening.
    link = page.locator("#games tbody tr").first.locator("a")
    match_id = await link.text_content()
    opening = await page.locator("#games tbody tr").first.locator("td.mono").text_content()
    await link.click()
    await expect(page).to_have_url(f"http://127.0.0.1:{arena.port}/matches/{match_id}")
    await expect(page.locator("#moves li").first).to_contain_text(str(opening).split()[0])
    # The list page names it.
    await page.goto(f"http://127.0.0.1:{arena.port}/tournaments")
    row = page.locator(f"tr[data-id='{tid}']")
    await expect(row).to_contain_text("evening round robin")
    await expect(row.locator("td.games")).to_have_text("12")  # finished: the games it played


async def test_an_sprt_page_draws_its_llr_against_the_bounds(
    arena: ArenaServer,
    autobots: AutoBots,
    open_page: PageFactory,
    screenshot: Callable[[Page, str], Awaitable[Path]],
) -> None:
    await autobots("alpha")
    await autobots("beta", resign=True)
    tid = await create(
        arena, format="sprt", bots=("alpha", "beta"), elo0=0.0, elo1=100.0, alpha=0.05,
        beta=0.05, model="normalized", max_games=400, name="is alpha better?",
    )  # fmt: skip
    page = await open_page()
    await page.goto(f"http://127.0.0.1:{arena.port}/tournaments/{tid}")
    await expect(page.locator("#sprt-panel")).to_be_visible()
    await expect(page.locator("#sprt-verdict")).to_contain_text("H1 accepted", timeout=20_000)
    chart = page.locator("svg.sprt-chart")
    await expect(chart.locator("line.bound")).to_have_count(2)
    points = await chart.locator("polyline.llr").get_attribute("points")
    assert points is not None and len(points.split()) >= 5
    # The line ends above the upper bound: its last y is smaller (SVG y grows downwards).
    upper_y = float(await chart.locator("line.bound.upper").get_attribute("y1") or "nan")
    assert float(points.split()[-1].split(",")[1]) <= upper_y
    await screenshot(page, "tournament-sprt")
