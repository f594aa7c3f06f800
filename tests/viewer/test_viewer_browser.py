"""The web viewer in a real headless Chromium against the real arena server.

Scripted bots play over real websockets (gated move by move where a test needs to look
between moves) and report search analysis with each move; the pages must show the live
board, the telemetry, the clocks, the result, the replay, the home page's live matches and
leaderboards, and must resume the spectator stream after a dropped connection.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from playwright.async_api import Page, WebSocket, expect
from viewer_support import BotsFactory, PageFactory, ScriptedBot

from arena.server import ArenaServer
from protocol.games import GAMES, Termination, game_spec, new_game

Shot = Callable[[Page, str], Awaitable[Path]]


def base_url(arena: ArenaServer) -> str:
    """The viewer's address on the running server."""
    return f"http://127.0.0.1:{arena.port}"


async def wait_moves(page: Page, count: int) -> None:
    """Wait until the match page has received ``count`` moves."""
    await expect(page.locator("#match")).to_have_attribute("data-moves", str(count))


def record_sent_frames(page: Page) -> list[dict[str, Any]]:
    """Collect the JSON messages the page sends over its websockets."""
    sent: list[dict[str, Any]] = []

    def on_socket(ws: WebSocket) -> None:
        ws.on("framesent", lambda payload: sent.append(json.loads(payload)))

    page.on("websocket", on_socket)
    return sent


def drop_spectators(arena: ArenaServer) -> int:
    """Close every spectator connection from the server side, like a network drop."""
    dropped = 0
    for conn in list(arena.gateway.connections):
        if conn.role == "spectator":
            conn.close(1012, "test: dropped")
            dropped += 1
    return dropped


async def play_and_check(page: Page, bot: ScriptedBot, moves_before: int) -> None:
    """Let ``bot`` play one move and wait for the page to show it."""
    bot.allow()
    await wait_moves(page, moves_before + 1)


async def test_live_connect4_board_telemetry_clocks_and_resume(
    arena: ArenaServer, start_match: BotsFactory, open_page: PageFactory, screenshot: Shot
) -> None:
    x, o = await start_match("connect4", gated=True)
    match_id = x.started.result().match_id
    page = await open_page()
    sent = record_sent_frames(page)
    await page.goto(f"{base_url(arena)}/matches/{match_id}")
    await expect(page.locator("#match")).to_have_attribute("data-status", "live")
    await wait_moves(page, 0)
    await expect(page.locator("#connection")).to_have_attribute("data-status", "live")
    players = page.locator(".player")
    await expect(players.nth(0)).to_contain_text(x.name)
    await expect(players.nth(1)).to_contain_text(o.name)
    await expect(players.nth(0)).to_contain_text("1500")  # new bots start at 1500

    # The side to move's clock ticks down locally; the other one stands still.
    clock_x, clock_o = page.locator('.clock[data-seat="0"]'), page.locator('.clock[data-seat="1"]')
    first_x, first_o = float(await clock_x.inner_text()), float(await clock_o.inner_text())
    await page.wait_for_timeout(450)
    assert float(await clock_x.inner_text()) < first_x
    assert float(await clock_o.inner_text()) == first_o == 30.0

    # Each move appears as it arrives, with the mover's visit shares as bars over the columns.
    movers = [x, o, x, o]
    for played, bot in enumerate(movers):
        await play_and_check(page, bot, played)
        await expect(page.locator("circle.piece")).to_have_count(played + 1)
        bars = page.locator(".bars .bar")
        await expect(bars).to_have_count(7)
        best = page.locator(".bars .bar.best")
        board = await page.evaluate("document.querySelectorAll('circle.piece.last').length")
        assert board == 1
        last_move = await page.locator(".move-list li").last.locator(".move-name").inner_text()
        assert await best.get_attribute("data-move") == last_move.removeprefix("col ")
        shares = [
            float(s or 0)
            for s in await bars.evaluate_all("bars => bars.map(b => b.getAttribute('data-share'))")
        ]
        assert abs(sum(shares) - 1.0) < 0.01
    await expect(page.locator(".telemetry-moves tbody tr")).to_have_count(7)
    await expect(page.locator(".telemetry-moves tr.played")).to_have_count(1)
    # The mover's tree beside the board, its principal line (3 plies) highlighted.
    tree = page.locator("#tree-diagram svg.search-tree")
    await expect(tree).to_have_attribute("data-nodes", "4")
    await expect(tree.locator(".tree-node.principal")).to_have_count(3)
    # The graph has each move's value so far.
    await expect(page.locator("#eval-graph svg")).to_have_attribute("data-points", "4")
    await expect(page.locator(".move-list li")).to_have_count(4)
    await screenshot(page, "match-connect4-live")

    # Drop the spectator connection; moves played meanwhile arrive after the resume.
    seen_before_drop = 4
    assert drop_spectators(arena) == 1
    await play_and_check(page, x, 4)
    await play_and_check(page, o, 5)
    await expect(page.locator("circle.piece")).to_have_count(6)
    watches = [m for m in sent if m.get("type") == "watch"]
    assert watches[0] == {"type": "watch", "match_id": match_id}
    assert any(w.get("since") == seen_before_drop for w in watches[1:]), watches
    await expect(page.locator("#connection")).to_have_attribute("data-status", "live")

    # Stepping back while live shows the older position and a way back to live.
    await page.click("#prev")
    await expect(page.locator("#match")).to_have_attribute("data-ply", "5")
    await expect(page.locator("#follow")).to_be_visible()
    await page.click("#follow")
    await expect(page.locator("#match")).to_have_attribute("data-ply", "6")

    # Play out: the page shows the result and stops following.
    x.release()
    o.release()
    end = await asyncio.wait_for(x.ended, 20)
    await expect(page.locator("#match")).to_have_attribute("data-status", "finished")
    result = page.locator("#result")
    await expect(result).to_be_visible()
    await expect(result).to_contain_text(end.result)
    if end.winner is not None:
        await expect(result).to_contain_text(f"{(x, o)[end.winner].name} wins")
        await expect(page.locator(".player.winner")).to_have_count(1)
    # One rating: each player shows the leaderboard's (fitted) rating, no second number.
    await expect(page.locator(".player .rating")).to_have_count(2)
    await expect(page.locator(".player .rating").first).not_to_contain_text("→")
    await screenshot(page, "match-connect4-finished")


async def test_finished_match_replays_move_by_move(
    arena: ArenaServer, start_match: BotsFactory, open_page: PageFactory, screenshot: Shot
) -> None:
    x, _ = await start_match("tictactoe", scripts=([0, 1, 2], [3, 4]))
    end = await asyncio.wait_for(x.ended, 10)
    assert end.winner == 0
    match_id = x.started.result().match_id
    await arena.leaderboards.fresh("tictactoe")  # the board the page reads holds this game

    page = await open_page()
    await page.goto(f"{base_url(arena)}/matches/{match_id}")
    match = page.locator("#match")
    await expect(match).to_have_attribute("data-status", "finished")
    await expect(match).to_have_attribute("data-ply", "5")
    await expect(page.locator("#result")).to_contain_text(f"{x.name} wins")
    await expect(page.locator("#result")).to_contain_text("three in a row")
    await expect(page.locator(".cell.win")).to_have_count(3)
    # A stored match shows each player's rating now: the leaderboard's, to the point.
    fitted = {e.bot: e.rating for e in await arena.api.leaderboard_entries("tictactoe")}
    for name in fitted:
        card = page.locator(f'.player[data-player="{name}"] .rating')
        await expect(card).to_have_text(str(math.floor(fitted[name] + 0.5)))
    await expect(page.locator("#play")).to_be_hidden()  # the play page's panel shares the markup

    pieces = page.locator('.cell[data-piece="x"], .cell[data-piece="o"]')
    await page.click("#first")
    await expect(match).to_have_attribute("data-ply", "0")
    await expect(pieces).to_have_count(0)
    await page.click("#next")
    await expect(pieces).to_have_count(1)
    await expect(page.locator('.cell[data-cell="0"]')).to_have_attribute("data-piece", "x")
    await page.keyboard.press("ArrowRight")
    await expect(pieces).to_have_count(2)
    await expect(page.locator('.cell[data-cell="3"]')).to_have_attribute("data-piece", "o")
    await page.locator("#slider").evaluate(
        "(s) => { s.value = '4'; s.dispatchEvent(new Event('input')); }"
    )
    await expect(match).to_have_attribute("data-ply", "4")
    await expect(pieces).to_have_count(4)
    await expect(page.locator(".cell.win")).to_have_count(0)
    await page.locator('.move-list button[data-ply="2"]').click()
    await expect(pieces).to_have_count(2)
    await page.keyboard.press("End")
    await expect(pieces).to_have_count(5)
    await expect(page.locator("#next")).to_be_disabled()
    await screenshot(page, "match-tictactoe-replay")


async def test_home_lists_live_matches_leaderboards_and_results(
    arena: ArenaServer, start_match: BotsFactory, open_page: PageFactory, screenshot: Shot
) -> None:
    # A finished rated tic-tac-toe match fills a leaderboard and the recent results.
    done_x, _ = await start_match("tictactoe", names=("alpha", "beta"))
    await asyncio.wait_for(done_x.ended, 10)
    finished_id = done_x.started.result().match_id
    # A live ultimate tic-tac-toe match, held between moves.
    x, o = await start_match("uttt", names=("gamma", "delta"), gated=True)
    live_id = x.started.result().match_id

    page = await open_page()
    await page.goto(base_url(arena) + "/")
    card = page.locator(f'.match-card[data-match-id="{live_id}"]')
    await expect(card).to_be_visible()
    await expect(card).to_contain_text("Ultimate Tic-Tac-Toe")
    await expect(card).to_contain_text("gamma")
    await expect(card).to_contain_text("delta")
    assert await card.get_attribute("href") == f"/matches/{live_id}"
    await expect(page.locator("#connection")).to_have_attribute("data-status", "live")

    # The mini board follows the game live.
    x.allow()
    await expect(card.locator('.cell[data-piece="x"]')).to_have_count(1)
    o.allow()
    await expect(card.locator('.cell[data-piece="o"]')).to_have_count(1)
    await expect(card).to_contain_text("move 2")

    # Leaderboards per game behind tabs.
    await page.click('.tab[data-game="tictactoe"]')
    rows = page.locator('.tab-panel[data-game="tictactoe"] tbody tr')
    await expect(rows).to_have_count(2)
    await expect(rows.nth(0)).to_contain_text("1")
    fitted = {e.bot: e for e in await arena.api.leaderboard_entries("tictactoe")}
    await expect(page.locator(".leaderboard .elo")).to_have_count(0)  # one rating, no Elo column
    for row in await arena.store.leaderboard("tictactoe"):
        line = page.locator(f'.leaderboard tr[data-bot="{row.bot}"]')
        # Rounded half up, as the page's Math.round does.
        rating = fitted[row.bot].rating
        await expect(line.locator(".rating")).to_have_text(str(math.floor(rating + 0.5)))
        await expect(line).to_have_attribute("data-provisional", "true")  # one game each
    await page.click('.tab[data-game="connect4"]')
    await expect(page.locator(".tab-panel")).to_contain_text("No rated games yet")

    recent = page.locator(f'.recent li[data-match-id="{finished_id}"]')
    await expect(recent).to_be_visible()
    await expect(recent).to_contain_text("Tic-Tac-Toe")
    await screenshot(page, "home")

    # The same page on a phone, dark: readable and no sideways scrolling.
    phone = await open_page(width=390, height=844, dark=True)
    await phone.goto(base_url(arena) + "/")
    await expect(phone.locator(f'.match-card[data-match-id="{live_id}"]')).to_be_visible()
    # The leaderboard opens on the first game with rated games, not an empty table.
    await expect(phone.locator('.tab[data-game="tictactoe"]')).to_have_attribute(
        "aria-selected", "true"
    )
    await expect(phone.locator(".leaderboard tbody tr")).to_have_count(2)
    assert await phone.evaluate("document.documentElement.scrollWidth <= innerWidth")
    background = await phone.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(14, 17, 23)", background
    await screenshot(phone, "home-phone-dark")

    # When the live match ends its card says how, and the results list gains it.
    x.release()
    o.release()
    end = await asyncio.wait_for(x.ended, 20)
    await expect(card).to_have_class(re.compile(r"\bended\b"))
    await expect(card).to_contain_text("wins" if end.winner is not None else "Draw")
    await expect(page.locator(f'.recent li[data-match-id="{live_id}"]')).to_be_visible()


async def test_uttt_and_tictactoe_shade_candidate_cells(
    arena: ArenaServer, start_match: BotsFactory, open_page: PageFactory, screenshot: Shot
) -> None:
    x, o = await start_match("uttt", names=("alpha", "beta"), gated=True)
    ttt_x, ttt_o = await start_match("tictactoe", names=("gamma", "delta"), gated=True)
    page = await open_page(width=1100, height=900, dark=True)
    await page.goto(f"{base_url(arena)}/matches/{x.started.result().match_id}")
    await wait_moves(page, 0)
    for played, bot in enumerate([x, o, x]):
        await play_and_check(page, bot, played)
    # The mover's candidates are shaded; the chosen one is the best and is marked.
    candidates = page.locator(".candidates .candidate")
    assert await candidates.count() >= 2
    best = page.locator(".candidates .candidate.best")
    await expect(best).to_have_count(1)
    last_cell = await page.locator(".cell.last").get_attribute("data-cell")
    assert await best.get_attribute("data-move") == last_cell
    # After a move the opponent is sent to one local board (unless it is closed).
    await expect(page.locator(".local.playable")).to_have_count(1)
    await screenshot(page, "match-uttt-live-dark")

    phone = await open_page(width=390, height=844)
    await phone.goto(f"{base_url(arena)}/matches/{ttt_x.started.result().match_id}")
    await wait_moves(phone, 0)
    await play_and_check(phone, ttt_x, 0)
    await expect(phone.locator(".candidates .candidate")).to_have_count(9)
    await play_and_check(phone, ttt_o, 1)
    await expect(phone.locator(".candidates .candidate")).to_have_count(8)
    await expect(phone.locator(".candidate-share").first).to_contain_text("%")
    assert await phone.evaluate("document.documentElement.scrollWidth <= innerWidth")
    await screenshot(phone, "match-tictactoe-phone")


async def test_missing_match_says_so(arena: ArenaServer, open_page: PageFactory) -> None:
    page = await open_page(expect_errors="404 (Not Found)")  # the API's answer, logged
    await page.goto(f"{base_url(arena)}/matches/does-not-exist")
    await expect(page.locator("#match")).to_have_attribute("data-status", "missing")
    await expect(page.locator("#board")).to_contain_text("There is no match does-not-exist")


async def test_board_rules_in_javascript_match_the_python_rules(
    arena: ArenaServer, open_page: PageFactory
) -> None:
    """Replays rebuild positions in JS; they must equal protocol.games' encodings.

    The viewer draws every registered game, the registry's list served to it,
    and words each game's rules endings as its spec does.
    """
    rng = random.Random(2024)
    games = []
    for name in GAMES:
        for _ in range(25):
            state = new_game(name)
            moves, positions = [], [state.encode()]
            while state.outcome() is None:
                move = rng.choice(state.legal_moves())
                state = state.play(move)
                moves.append(move)
                positions.append(state.encode())
            games.append({"game": name, "moves": moves, "positions": positions})
    page = await open_page()
    await page.goto(base_url(arena) + "/")
    mismatches, names, words = await page.evaluate(
        """async (games) => {
            const { GAME_NAMES, gameFor, positionsAfter } = await import(
                '/static/js/boards/index.js');
            const { describeTermination } = await import('/static/js/dom.js');
            const bad = [];
            for (const g of games) {
                const got = positionsAfter(gameFor(g.game), g.moves);
                const at = got.findIndex((p, i) => p !== g.positions[i]);
                if (at >= 0) bad.push([g.game, at, got[at], g.positions[at]]);
            }
            const words = GAME_NAMES.map((name) => ["line", "draw", "timeout"].map(
                (end) => describeTermination(end, name)));
            return [bad, GAME_NAMES, words];
        }""",
        games,
    )
    assert mismatches == []
    assert names == list(GAMES)
    assert words == [
        [game_spec(name).termination_text(Termination(end)) for end in ("line", "draw")]
        + ["time ran out"]
        for name in GAMES
    ]
