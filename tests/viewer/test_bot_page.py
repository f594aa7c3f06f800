"""The leaderboard's intervals and the bot page's rating chart in a real headless Chromium.

The arena serves a store seeded with rated Connect Four results (three regulars,
one newcomer); the home page's table must show each fitted rating with its
interval, rank range and provisional mark, link every bot to its page, and the
page must draw the rating history from the API's numbers.
"""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from playwright.async_api import Page, expect
from viewer_support import PageFactory

from arena.leaderboard.board import group_note
from arena.server import ArenaConfig, ArenaServer
from arena.stats.ranks import PROVISIONAL_HINT
from arena.store import Store
from tests.arena.rating_data import random_games, seed_results

Shot = Callable[[Page, str], Awaitable[Path]]
GAME = "connect4"
SKILL = {"alpha": 1650.0, "beta": 1500.0, "gamma": 1400.0}


def half_up(value: float) -> str:
    """A number as the page rounds it (``Math.round``: halves go up)."""
    return str(math.floor(value + 0.5))


@pytest.fixture
async def rated_arena(store: Store, tokens: dict[str, str]) -> AsyncIterator[ArenaServer]:
    await seed_results(store, GAME, random_games(list(SKILL), 150, seed=4, skill=SKILL))
    await seed_results(store, GAME, [("delta", "alpha", 0.0), ("beta", "delta", 0.5)])
    server = ArenaServer(ArenaConfig(host="127.0.0.1", port=0, seed=7), store=store)
    await server.start()
    try:
        yield server
    finally:
        await server.shutdown()


async def test_leaderboard_intervals_link_to_a_bot_page_with_its_rating_chart(
    rated_arena: ArenaServer, open_page: PageFactory, screenshot: Shot
) -> None:
    base = f"http://127.0.0.1:{rated_arena.port}"
    entries = await rated_arena.api.leaderboard_json(GAME)
    page = await open_page()
    await page.goto(base + "/")
    rows = page.locator('.tab-panel[data-game="connect4"] tbody tr')
    await expect(rows).to_have_count(4)
    for index, entry in enumerate(entries):
        row = rows.nth(index)
        await expect(row).to_have_attribute("data-bot", entry["bot"])
        await expect(row.locator(".rating")).to_have_text(half_up(entry["rating"]))
        await expect(row.locator(".ci")).to_have_text(f" ± {half_up(entry['ci95'])}")
        await expect(row.locator(".provisional")).to_have_count(1 if entry["provisional"] else 0)
        if entry["provisional"]:  # the "?" explains itself on hover
            await expect(row.locator(".provisional")).to_have_attribute("title", PROVISIONAL_HINT)
        ranks = row.locator(".rank-range")
        if entry["rank_low"] == entry["rank_high"]:
            await expect(ranks).to_have_count(0)
        else:
            await expect(ranks).to_have_text(f"{entry['rank_low']}–{entry['rank_high']}")
    assert [e["bot"] for e in entries if e["provisional"]] == ["delta"]
    await screenshot(page, "leaderboard-intervals")

    # The bot's name leads to its page.
    await rows.nth(0).locator("a.bot-link").click()
    top = entries[0]["bot"]
    await expect(page).to_have_url(f"{base}/bots/{top}")
    await expect(page.locator("#bot")).to_have_attribute("data-status", "ready")
    profile = (await page.evaluate(f"fetch('/api/bots/{top}').then(r => r.json())"))["ratings"][0]
    section = page.locator('.bot-game[data-game="connect4"]')
    await expect(section.locator(".bot-facts .rating")).to_have_text(half_up(profile["rating"]))
    chart = section.locator("svg.rating-chart")
    await expect(chart).to_be_visible()
    await expect(chart).to_have_attribute("data-points", str(len(profile["history"])))
    # One rating: the chart draws the fitted rating only, no incremental Elo beside it.
    await expect(chart).to_have_attribute("data-elo-points", "0")
    assert "elo_history" not in profile and "elo" not in profile
    # One band with an upper and a lower edge over every history point, the lines on top.
    band = await chart.locator("path.band").get_attribute("d")
    assert band is not None and band.endswith("Z")
    assert len(re.findall(r"[ML]", band)) == 2 * len(profile["history"])
    fit_line = await chart.locator("path.fit-line").get_attribute("d")
    assert fit_line is not None and len(re.findall(r"[ML]", fit_line)) == len(profile["history"])
    await expect(chart.locator("path.elo-line")).to_have_count(0)
    # The line runs left to right in time and its last point is the board's rating:
    # the y of the last point lies inside the band's last vertical span.
    xs = [float(x) for x in re.findall(r"[ML]([\d.]+),", fit_line)]
    assert xs == sorted(xs) and xs[-1] > xs[0]
    box = await chart.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    await expect(section.locator(".opponents tbody tr")).to_have_count(len(profile["opponents"]))
    await expect(page.locator("#bot-matches .recent li")).to_have_count(20)
    await screenshot(page, "bot-page")

    # On a phone in dark mode: no sideways scrolling; an unknown bot says so.
    phone = await open_page(width=390, height=844, dark=True, expect_errors="404")
    await phone.goto(f"{base}/bots/{top}")
    await expect(phone.locator("svg.rating-chart")).to_be_visible()
    assert await phone.evaluate("document.documentElement.scrollWidth <= innerWidth")
    await screenshot(phone, "bot-page-phone-dark")
    await phone.goto(f"{base}/bots/nobody")
    await expect(phone.locator("#bot")).to_have_attribute("data-status", "missing")
    await expect(phone.locator("#bot-games")).to_contain_text("No bot is called nobody")


async def test_bots_no_games_connect_get_a_table_of_their_own(
    store: Store, tokens: dict[str, str], open_page: PageFactory, screenshot: Shot
) -> None:
    # alpha, beta and gamma play each other; delta and omega only ever played each other.
    await store.add_bot("omega")
    await seed_results(store, GAME, random_games(list(SKILL), 90, seed=4, skill=SKILL))
    await seed_results(store, GAME, [("delta", "omega", 1.0)] * 4 + [("omega", "delta", 1.0)])
    server = ArenaServer(ArenaConfig(host="127.0.0.1", port=0, seed=7), store=store)
    await server.start()
    try:
        board = await server.leaderboards.board(GAME)
        groups = board.groups()
        assert [g["bots"] for g in groups][1] == ["delta", "omega"]
        pair = [board.shown.get(name) for name in ("delta", "omega")]
        page = await open_page()
        await page.goto(f"http://127.0.0.1:{server.port}/")
        panel = page.locator('.tab-panel[data-game="connect4"]')
        tables = panel.locator(".leaderboard-group")
        await expect(tables).to_have_count(2)
        main, stray = tables.nth(0), tables.nth(1)
        await expect(main.locator(".group-note")).to_have_count(0)
        await expect(stray.locator(".group-note")).to_have_text(str(group_note(1, pair[0].games)))
        await expect(stray.locator(".group-note")).to_contain_text("not played anyone in the main")
        main_rows = await main.locator("tbody tr").all()
        main_bots = [await row.get_attribute("data-bot") for row in main_rows]
        assert main_bots == groups[0]["bots"]
        stray_rows = stray.locator("tbody tr")
        await expect(stray_rows).to_have_count(2)
        for index, line in enumerate(pair):
            row = stray_rows.nth(index)
            await expect(row).to_have_attribute("data-bot", line.name)
            await expect(row.locator(".rank")).to_contain_text(str(index + 1))  # ranked apart
            await expect(row.locator(".rating")).to_have_text(half_up(line.rating))
        await screenshot(page, "leaderboard-groups")
        # The bot page ranks delta within its pair, and says why.
        await page.goto(f"http://127.0.0.1:{server.port}/bots/delta")
        facts = page.locator('.bot-game[data-game="connect4"] .bot-facts')
        await expect(facts).to_contain_text("1 of 2")
        await expect(facts.locator(".group-note")).to_have_text(str(group_note(1, pair[0].games)))
    finally:
        await server.shutdown()
