"""The bot page prints ``elo_interval`` as every other channel does, in a real headless Chromium.

Its opponents table must show the API's interval for a record of 12 games
(``+120 [−93, +366]``, LOS) and "too few games" for a record of two.
"""

from __future__ import annotations

from playwright.async_api import expect
from viewer_support import PageFactory

from arena.server import ArenaConfig, ArenaServer
from arena.stats import elo_interval
from arena.stats.interval import format_elo
from arena.store import Store
from tests.arena.rating_data import seed_results, tally_games

GAME = "connect4"
TALLY = (3, 2, 7)


async def test_the_opponents_table_shows_the_interval_or_too_few_games(
    store: Store, tokens: dict[str, str], open_page: PageFactory
) -> None:
    await seed_results(store, GAME, tally_games(TALLY, "alpha", "beta"))
    await seed_results(store, GAME, [("alpha", "gamma", 1.0)] * 2)
    server = ArenaServer(ArenaConfig(host="127.0.0.1", port=0, seed=7), store=store)
    await server.start()
    try:
        page = await open_page()
        await page.goto(f"http://127.0.0.1:{server.port}/bots/alpha")
        await expect(page.locator("#bot")).to_have_attribute("data-status", "ready")
        interval = elo_interval(TALLY)
        data = interval.to_json()
        # The page's figures: the JSON's, with a typographic minus.
        elo, low, high = (
            format_elo(data[key]).replace("-", "\u2212") for key in ("elo", "low", "high")
        )
        beta = page.locator('.opponents tr[data-bot="beta"]')
        await expect(beta.locator(".elo-interval")).to_have_text(f"{elo} [{low}, {high}]")
        await expect(beta.locator("td").nth(3)).to_have_text(f"{100 * interval.los:.1f}%")
        gamma = page.locator('.opponents tr[data-bot="gamma"]')
        await expect(gamma.locator(".elo-interval")).to_have_text("too few games")
        await expect(gamma.locator("td").nth(3)).to_have_text("")
    finally:
        await server.shutdown()
