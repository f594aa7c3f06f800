"""Playing a bot from the web viewer, in a real headless Chromium.

A real ``arena-bot`` process (seeded in-process MCTS, accepting guests by
default) waits for challenges on the real server; a person opens the home
page, presses its Play button, plays a whole Connect Four game on the play
page (the first move by clicking the board, the rest with the move buttons),
sees the bot's search statistics and search tree after each of its moves, and
gets the finished game's replay: stored with the bot's analysis of each of its
moves, replayed at desktop and phone (390 px) widths with the search tree and
the evaluation graph drawn. The game is stored unrated, under the guest account.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from playwright.async_api import Page, expect
from viewer_support import PageFactory, guest_bot

from arena.play.guests import GUEST_ACCOUNT
from arena.server import ArenaServer
from arena.store import Store

PREFERENCE = (3, 2, 4, 1, 5, 0, 6)
"""The person's moves: the most central legal column."""


@pytest.fixture
async def mcts_bot(
    arena: ArenaServer, tokens: dict[str, str], tmp_path: Path
) -> AsyncIterator[str]:
    """``arena-bot`` as alpha: seeded in-process MCTS for Connect Four, taking challenges only."""
    strategy = "mcts:sims=300,workers=0,seed=1"
    async with guest_bot(arena, tokens["alpha"], tmp_path / "alpha.log", "connect4", strategy):
        yield "alpha"


async def play_state(page: Page) -> str:
    """Wait until the play panel waits for the person, or the game is over; return which."""
    panel = page.locator("#play")
    waiting = re.compile("your-turn|over")
    await expect(panel).to_have_attribute("data-state", waiting, timeout=30_000)
    state = await panel.get_attribute("data-state")
    assert state is not None
    return state


async def expect_tree(page: Page) -> None:
    """The search tree of the shown move is drawn, its principal line highlighted."""
    diagram = page.locator("#tree-diagram svg.search-tree")
    await expect(diagram).to_be_visible()
    nodes = int(await diagram.get_attribute("data-nodes") or 0)
    principal = int(await diagram.get_attribute("data-principal") or 0)
    assert nodes >= principal >= 2, (nodes, principal)
    await expect(diagram.locator(".tree-node")).to_have_count(nodes)
    await expect(diagram.locator(".tree-node.principal")).to_have_count(principal)
    await expect(diagram.locator(".edge.principal")).to_have_count(principal)


async def check_replay(
    page: Page,
    href: str,
    analysed: list[int],
    screenshot: Callable[[Page, str], Awaitable[Path]],
    name: str,
) -> None:
    """A stored match's replay: the graph has a point per analysed move and jumps the
    replay when clicked; each analysed move shows its tree, the others none."""
    match = page.locator("#match")
    await expect(match).to_have_attribute("data-status", "finished")
    graph = page.locator("#eval-graph svg.eval-graph")
    await expect(graph).to_be_visible()
    await expect(graph).to_have_attribute("data-points", str(len(analysed)))
    await graph.locator(f'circle.value-dot[data-ply="{analysed[1] + 1}"]').click()
    await expect(match).to_have_attribute("data-ply", str(analysed[1] + 1))
    await expect_tree(page)
    await expect(page.locator("#telemetry")).to_have_attribute("data-state", "shown")
    await screenshot(page, name)
    other = analysed[1] - 1 if analysed[1] - 1 not in analysed else analysed[1] + 1
    await page.locator(f'.move-list button[data-ply="{other + 1}"]').click()
    await expect(match).to_have_attribute("data-ply", str(other + 1))
    await expect(page.locator("#tree")).to_be_hidden()
    await expect(page.locator("#telemetry")).to_contain_text("reported no search statistics")
    assert href.endswith(await match.evaluate("() => location.pathname.split('/').at(-1)"))


async def test_a_person_plays_a_real_bot_from_the_home_page_to_the_replay(
    arena: ArenaServer,
    store: Store,
    mcts_bot: str,
    open_page: PageFactory,
    screenshot: Callable[[Page, str], Awaitable[Path]],
) -> None:
    page = await open_page()
    await page.goto(f"http://127.0.0.1:{arena.port}/")
    play = page.locator('#play-bots a.play-button[data-bot="alpha"][data-game="connect4"]')
    await expect(play).to_have_text("Play Connect Four")
    await screenshot(page, "play-home")
    await play.click()
    await page.wait_for_url("**/play/alpha?game=connect4")
    await expect(page.locator("#play-bot")).to_have_text("alpha")
    await expect(page.locator("#players .you")).to_have_text(" (you)")
    you = page.locator("#players .player", has=page.locator(".you"))
    assert (await you.get_attribute("data-player") or "").startswith("guest.")
    first = True
    seats_seen = set()
    while (state := await play_state(page)) == "your-turn":
        moves = int(await page.locator("#match").get_attribute("data-moves") or 0)
        seats_seen.add(moves % 2)  # the person always moves with the same parity
        if moves:
            # The bot just moved: its search report is on screen, named for what it counts.
            telemetry = page.locator("#telemetry")
            await expect(telemetry).to_have_attribute("data-state", "shown")
            await expect(telemetry.locator(".telemetry-who")).to_contain_text("alpha")
            await expect(telemetry.locator("dt").first).to_have_text("Simulations")
            await expect_tree(page)
            if moves in (3, 4):
                await screenshot(page, "play-your-turn")
        legal = [
            int(move)
            for move in await page.locator("#play-moves .play-move").evaluate_all(
                "buttons => buttons.map(b => b.dataset.move)"
            )
        ]
        assert legal, "your turn, but no move offered"
        column = next(c for c in PREFERENCE if c in legal)
        if first:
            # Click the board itself: any hole of the column drops a disc there.
            await page.locator(f'#board [data-cell="{column}"]').click()
            first = False
        else:
            await page.locator(f'#play-moves .play-move[data-move="{column}"]').click()
        # The person's move reaches the board (and the bot's reply may follow at once).
        await expect(page.locator("#match")).to_have_attribute(
            "data-moves", re.compile(rf"^({moves + 1}|{moves + 2})$")
        )
    assert len(seats_seen) == 1
    assert state == "over"
    status = await page.locator("#play-status").text_content()
    assert status is not None and any(word in status for word in ("won", "draw"))
    await expect(page.locator("#match")).to_have_attribute("data-status", "finished")
    await expect(page.locator("#result")).to_be_visible()
    replay = page.locator("#replay-link")
    await expect(replay).to_be_visible()
    await screenshot(page, "play-over")
    href = await replay.get_attribute("href")
    assert href is not None and href.startswith("/matches/")
    match_id = href.rsplit("/", 1)[-1]
    record = await store.get_match(match_id)
    assert record is not None and record.rated is False and record.rating_changes == []
    assert GUEST_ACCOUNT in record.players and "alpha" in record.players
    total = len(record.moves)
    # The replay: the match's own page, stepping back through the stored moves.
    await replay.click()
    await page.wait_for_url(f"**{href}")
    await expect(page.locator("#match")).to_have_attribute("data-status", "finished")
    await expect(page.locator("#slider")).to_have_attribute("max", str(total))
    await page.locator("#first").click()
    await expect(page.locator("#match")).to_have_attribute("data-ply", "0")
    await page.locator("#next").click()
    await expect(page.locator("#match")).to_have_attribute("data-ply", "1")
    # The bot's analyses are stored with its moves, the guest's moves have none.
    bot_seat = record.players.index("alpha")
    analysed = [m.ply for m in record.moves if m.analysis is not None]
    assert analysed == [m.ply for m in record.moves if m.player == bot_seat]
    assert all(record.moves[ply].analysis["tree"] for ply in analysed)  # type: ignore[index]
    await check_replay(page, href, analysed, screenshot, "replay-desktop")
    phone = await open_page(width=390, height=844)
    await phone.goto(f"http://127.0.0.1:{arena.port}{href}")
    await check_replay(phone, href, analysed, screenshot, "replay-phone")
    width = await phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the replay is {width} px wide on a 390 px screen"
    assert await store.rating("alpha", "connect4") is None  # a guest game rates no one
    answer = await page.request.get(f"http://127.0.0.1:{arena.port}/api/play")
    body = await answer.json()
    assert body["bots"] == [{"bot": "alpha", "games": ["connect4"], "busy": False}]


async def test_the_play_page_says_when_a_bot_does_not_accept_guests(
    arena: ArenaServer, open_page: PageFactory
) -> None:
    page = await open_page()
    await page.goto(f"http://127.0.0.1:{arena.port}/play/beta?game=connect4")
    await expect(page.locator("#play")).to_have_attribute("data-state", "refused")
    await expect(page.locator("#play-status")).to_have_text(
        "beta is not online, or does not accept guests."
    )
    await page.goto(f"http://127.0.0.1:{arena.port}/")
    await expect(page.locator("#play-bots")).to_have_text("No bot online accepts guests right now.")
