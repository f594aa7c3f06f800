"""Every label on the match page says what it shows, in a real headless Chromium.

Search counts are named for what the bot sent (``simulations`` or ``nodes``), only
reported facts are shown, and Connect Four's column labels, move list and bars number
the columns as the protocol's moves do (0-6).
"""

from __future__ import annotations

from playwright.async_api import Page, expect
from viewer_support import BotsFactory, PageFactory, node_analysis

from arena.server import ArenaServer


async def facts(page: Page) -> list[tuple[str, str]]:
    """The telemetry panel's facts as (label, value), labels as written in the page."""
    labels = await page.locator(".telemetry-facts dt").all_text_contents()
    values = await page.locator(".telemetry-facts dd").all_inner_texts()
    return list(zip(labels, values, strict=True))


async def test_search_counts_are_named_for_what_each_bot_reports(
    arena: ArenaServer, start_match: BotsFactory, open_page: PageFactory
) -> None:
    x, o = await start_match("connect4", gated=True, scripts=([3, 3], [2, 4]))
    x.report = node_analysis  # an alpha-beta bot: nodes, no per-move visits
    match_id = x.started.result().match_id
    page = await open_page()
    await page.goto(f"http://127.0.0.1:{arena.port}/matches/{match_id}")
    await expect(page.locator("#match")).to_have_attribute("data-moves", "0")

    x.allow()
    await expect(page.locator("#match")).to_have_attribute("data-moves", "1")
    await expect(page.locator(".telemetry-facts dt")).to_have_count(4)
    shown = await facts(page)
    assert [label for label, _ in shown] == ["Nodes", "Speed", "Value", "Depth"]
    assert shown[1][1].endswith(" nodes/s") and shown[2:] == [("Value", "+0.25"), ("Depth", "9")]
    panel = page.locator("#telemetry")
    await expect(panel).not_to_contain_text("Simulations")
    await expect(page.locator(".telemetry-moves")).to_have_count(0)  # no visits were sent
    # The line it expects, named as the move list names moves: its move, then column 0.
    await expect(page.locator(".telemetry-pv")).to_have_text("Line col 3 col 0")
    await expect(page.locator(".telemetry-facts div").first).to_have_attribute(
        "title", "positions the search visited"
    )

    o.allow()
    await expect(page.locator("#match")).to_have_attribute("data-moves", "2")
    await expect(page.locator(".telemetry-facts dt").first).to_have_text("Simulations")
    shown = await facts(page)
    assert [label for label, _ in shown] == ["Simulations", "Speed", "Value", "Depth"]
    assert shown[1][1].endswith(" sims/s")
    await expect(panel).not_to_contain_text("Nodes")
    await expect(page.locator(".telemetry-pv")).to_have_count(0)  # this bot sent no line
    headers = await page.locator(".telemetry-moves thead th").all_text_contents()
    assert headers == ["Move", "Visits", "Share", "Value"]


async def test_connect4_columns_are_numbered_as_the_moves_are(
    arena: ArenaServer, start_match: BotsFactory, open_page: PageFactory
) -> None:
    x, o = await start_match("connect4", gated=True, scripts=([0, 6], [4, 4]))
    match_id = x.started.result().match_id
    page = await open_page()
    await page.goto(f"http://127.0.0.1:{arena.port}/matches/{match_id}")
    labels = page.locator(".board-connect4 .axis-label")
    await expect(labels).to_have_text([str(column) for column in range(7)])
    for bot, count in ((x, 1), (o, 2), (x, 3)):
        bot.allow()
        await expect(page.locator("#match")).to_have_attribute("data-moves", str(count))
    moves = await page.locator(".move-list .move-name").all_inner_texts()
    assert moves == ["col 0", "col 4", "col 6"]
    # Each disc stands over the label of the column its move names.
    label_x = await labels.evaluate_all("nodes => nodes.map(n => Number(n.getAttribute('x')))")
    for move in (0, 4, 6):
        discs = page.locator(f'circle.piece[cx="{label_x[move]:g}"]')
        await expect(discs).to_have_count(1)
    # The visit bars over the board name their column the same way.
    title = await page.locator(".bars .bar.best title").text_content()
    assert title is not None and title.startswith("column 6:")
