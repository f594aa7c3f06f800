"""Othello in the web viewer, in headless Chromium against the real arena server.

A person plays a real ``arena-bot`` (greedy) by clicking the board's cells
(and the pass button when that is the only move) to the end. A live match
between scripted bots: the board shows the discs turned by each
move and the side to move's legal cells; once over, the result, and a replay
move by move. The viewer's JavaScript rules replay random games to exactly
the positions ``protocol.games.othello`` encodes, passes included.
"""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

from playwright.async_api import expect
from test_viewer_browser import Shot, base_url, wait_moves
from viewer_support import BotsFactory, PageFactory, guest_bot

from arena.server import ArenaServer
from arena.store import Store
from protocol.games import new_game
from protocol.games.othello import PASS


async def test_live_othello_board_turns_discs_then_replays(
    arena: ArenaServer, start_match: BotsFactory, open_page: PageFactory, screenshot: Shot
) -> None:
    # Black plays d3 (19), turning d4; white answers c3 (18), turning d4 back.
    x, o = await start_match("othello", gated=True, scripts=([19], [18]))
    match_id = x.started.result().match_id
    page = await open_page()
    await page.goto(f"{base_url(arena)}/matches/{match_id}")
    await expect(page.locator("#match")).to_have_attribute("data-status", "live")
    await wait_moves(page, 0)
    black = page.locator('.cell[data-piece="x"]')
    white = page.locator('.cell[data-piece="o"]')
    hints = page.locator('.cell[data-piece="hint"]')
    await expect(black).to_have_count(2)
    await expect(white).to_have_count(2)
    await expect(hints).to_have_count(4)  # black's four opening moves

    x.allow()
    await wait_moves(page, 1)
    await expect(black).to_have_count(4)
    await expect(white).to_have_count(1)
    await expect(page.locator('.cell[data-cell="27"]')).to_have_attribute("data-piece", "x")
    await expect(page.locator('.cell[data-cell="19"]')).to_have_class("cell piece p0 last")
    await expect(hints).to_have_count(3)  # white's answers: c3, e3, c5

    o.allow()
    await wait_moves(page, 2)
    await expect(page.locator('.cell[data-cell="27"]')).to_have_attribute("data-piece", "o")
    await screenshot(page, "match-othello-live")

    x.release()
    o.release()
    end = await asyncio.wait_for(x.ended, 20)
    plies = x.played + o.played
    match = page.locator("#match")
    await expect(match).to_have_attribute("data-status", "finished")
    result = page.locator("#result")
    if end.winner is None:
        await expect(result).to_contain_text("Draw")
    else:
        await expect(result).to_contain_text("more discs")
    await page.click("#first")
    await expect(match).to_have_attribute("data-ply", "0")
    await expect(black).to_have_count(2)
    await page.click("#next")
    await expect(black).to_have_count(4)
    await page.keyboard.press("End")
    await expect(match).to_have_attribute("data-ply", str(plies))
    await expect(hints).to_have_count(0)  # nobody can move at the end
    await screenshot(page, "match-othello-replay")


async def test_othello_rules_in_javascript_match_the_python_rules(
    arena: ArenaServer, open_page: PageFactory
) -> None:
    rng = random.Random(33)
    games = []
    passes = 0
    for _ in range(40):
        state = new_game("othello")
        moves, positions = [], [state.encode()]
        while state.outcome() is None:
            move = rng.choice(state.legal_moves())
            passes += move == PASS
            state = state.play(move)
            moves.append(move)
            positions.append(state.encode())
        games.append({"moves": moves, "positions": positions})
    assert passes > 0  # the replays went through passes
    page = await open_page()
    await page.goto(base_url(arena) + "/")
    mismatches = await page.evaluate(
        """async (games) => {
            const { gameFor, positionsAfter } = await import('/static/js/boards/index.js');
            const othello = gameFor('othello');
            const bad = [];
            for (const g of games) {
                const got = positionsAfter(othello, g.moves);
                const at = got.findIndex((p, i) => p !== g.positions[i]);
                if (at >= 0) bad.push([at, got[at], g.positions[at]]);
            }
            const names = [othello.formatMove(0), othello.formatMove(19), othello.formatMove(64)];
            return { bad, names };
        }""",
        games,
    )
    assert mismatches == {"bad": [], "names": ["a1", "d3", "pass"]}


async def test_a_person_plays_othello_against_a_bot_by_clicking_cells(
    arena: ArenaServer,
    store: Store,
    tokens: dict[str, str],
    tmp_path: Path,
    open_page: PageFactory,
    screenshot: Shot,
) -> None:
    log = tmp_path / "alpha.log"
    async with guest_bot(arena, tokens["alpha"], log, "othello", "greedy:seed=1"):
        page = await open_page()
        await page.goto(f"{base_url(arena)}/play/alpha?game=othello")
        panel = page.locator("#play")
        match = page.locator("#match")
        clicked = passed = 0
        while True:
            await expect(panel).to_have_attribute(
                "data-state", re.compile("your-turn|over"), timeout=30_000
            )
            if await panel.get_attribute("data-state") == "over":
                break
            moves = int(await match.get_attribute("data-moves") or 0)
            legal = await page.locator("#play-moves .play-move").evaluate_all(
                "buttons => buttons.map(b => Number(b.dataset.move))"
            )
            assert legal, "your turn, but no move offered"
            if legal == [PASS]:
                await page.locator(f'#play-moves .play-move[data-move="{PASS}"]').click()
                passed += 1
            else:
                assert PASS not in legal
                # The dotted cells are exactly the legal placements.
                hints = await page.locator('#board .cell[data-piece="hint"]').evaluate_all(
                    "cells => cells.map(c => Number(c.dataset.cell))"
                )
                assert sorted(hints) == sorted(legal)
                await page.locator(f'#board .cell[data-cell="{legal[0]}"]').click()
                clicked += 1
            await expect(match).to_have_attribute(
                "data-moves", re.compile(rf"^({moves + 1}|{moves + 2})$")
            )
            if clicked == 3:
                await screenshot(page, "play-othello")
        status = await page.locator("#play-status").text_content()
        assert status is not None and any(word in status for word in ("won", "draw"))
        href = await page.locator("#replay-link").get_attribute("href")
        assert href is not None
        record = await store.get_match(href.rsplit("/", 1)[-1])
        assert record is not None and record.game == "othello" and record.rated is False
        assert clicked >= 10
        final = new_game("othello").play_all([m.move for m in record.moves])
        assert final.is_over()
