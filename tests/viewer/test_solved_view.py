"""Blunders, solved values and the evaluation graph in a real headless Chromium, after a
real analysis.

A Connect Four game written through the store (random quiet play to 28
stones, then best and random moves: ``tests.analysis.perfect_play``) is
analysed by ``arena.analysis.runner.Analyser`` with its solver processes; the
replay must mark exactly the stored blunders and, at every position from 28
stones on, say the value that plain negamax in this test finds, in moves
(``win in N``: the side to move's own moves; ``loss in N``: the opponent's).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from playwright.async_api import Page, expect
from viewer_support import PageFactory

from arena.analysis.runner import Analyser
from arena.server import ArenaConfig, ArenaServer
from arena.store import Store
from bots import make_strategy
from bots.client.choosing import analysis_from
from protocol.games import Connect4State
from protocol.messages import Analysis
from tests.analysis.perfect_play import (
    ENDGAME_STONES,
    Perfect,
    endgame_games,
    move_value,
    perfect_value,
)
from tests.analysis.stored_games import store_games

Shot = Callable[[Page, str], Awaitable[Path]]
GAME = endgame_games(seed=5, count=1)[0]


def expected_words(value: Perfect) -> str:
    if value.outcome == 0:
        return "draw"
    word = "win" if value.outcome > 0 else "loss"
    return f"{word} in {(value.plies + 1) // 2}"


def searched(moves: tuple[int, ...]) -> list[Analysis | None]:
    """What a real MCTS (seeded, in process) reports about each position of the game."""
    reports: list[Analysis | None] = []
    with make_strategy("mcts", game="connect4", simulations=300, workers=0, seed=1) as bot:
        state = Connect4State.initial()
        for move in moves:
            bot.choose_move(state)
            reports.append(analysis_from(bot.last_search))
            state = state.play(move)
    return reports


@pytest.fixture
async def analysed_arena(store: Store, tokens: dict[str, str]) -> AsyncIterator[ArenaServer]:
    [match_id] = await store_games(store, [GAME], analyses=[searched(GAME)])
    summary = await Analyser(store, budget_ms=50, jobs=1).run([match_id])
    assert summary.games == 1
    server = ArenaServer(ArenaConfig(host="127.0.0.1", port=0, seed=7), store=store)
    await server.start()
    server.match_id = match_id  # type: ignore[attr-defined]
    try:
        yield server
    finally:
        await server.shutdown()


async def test_the_replay_marks_blunders_and_says_each_solved_value(
    analysed_arena: ArenaServer, store: Store, open_page: PageFactory, screenshot: Shot
) -> None:
    match_id: str = analysed_arena.match_id  # type: ignore[attr-defined]
    base = f"http://127.0.0.1:{analysed_arena.port}"
    rows = await store.match_analysis(match_id)
    blunders = [row.ply for row in rows if row.blunder]
    assert blunders, "the seeded game must hold a blunder"
    page = await open_page()
    await page.goto(f"{base}/matches/{match_id}")
    match = page.locator("#match")
    await expect(match).to_have_attribute("data-status", "finished")
    marked = page.locator(".move-list .move.blunder")
    await expect(marked).to_have_count(len(blunders))
    for index, ply in enumerate(blunders):
        await expect(marked.nth(index)).to_have_attribute("data-ply", str(ply + 1))
        row = rows[ply]
        words = {1: "win", 0: "draw", -1: "loss"}
        title = f"blunder: {words[row.outcome_before]} → {words[row.outcome_after]}"
        await expect(marked.nth(index)).to_have_attribute("title", f"{title}; thought 10 ms")
        await expect(marked.nth(index).locator(".blunder-mark")).to_have_text("??")

    # The evaluation graph has a solved point per move whose outcome is known; one jumps there.
    known = [row.ply for row in rows if row.outcome_after is not None]
    graph = page.locator("#eval-graph svg.eval-graph")
    await expect(graph).to_have_attribute("data-solved-points", str(len(known)))
    await expect(graph.locator("circle.solved-dot")).to_have_count(len(known))
    await graph.locator(f'circle.solved-dot[data-ply="{known[0] + 1}"]').click()
    await expect(match).to_have_attribute("data-ply", str(known[0] + 1))
    await page.click("#last")

    # Each candidate's share of the search beside its solved value (the mover's side).
    ply = ENDGAME_STONES + 1
    await page.locator(f'.move-list button[data-ply="{ply + 1}"]').click()
    table = page.locator(".telemetry-moves.with-solved")
    await expect(table).to_be_visible()
    position = Connect4State.initial().play_all(GAME[:ply])
    memo2: dict[tuple[int, int], Perfect] = {}
    lines = table.locator("tbody tr")
    assert await lines.count() >= 2
    for index in range(await lines.count()):
        move = int(await lines.nth(index).get_attribute("data-move") or -1)
        expected = expected_words(move_value(position, move, memo2))
        await expect(lines.nth(index).locator(".solved-cell")).to_have_text(expected)
    await screenshot(page, "solved-candidates")
    await page.click("#last")

    # The final position (a completed line or a full board) has no value to show.
    solved = page.locator("#solved")
    await expect(solved).to_be_hidden()
    memo: dict[tuple[int, int], Perfect] = {}
    state = Connect4State.initial().play_all(GAME[:ENDGAME_STONES])
    for ply in range(ENDGAME_STONES, len(GAME)):
        await page.locator(f'.move-list button[data-ply="{ply}"]').click()
        await expect(match).to_have_attribute("data-ply", str(ply))
        await expect(solved).to_be_visible()
        await expect(solved).to_have_attribute(
            "data-value", expected_words(perfect_value(state, memo))
        )
        player = "alpha" if ply % 2 == 0 else "beta"
        await expect(solved).to_contain_text(f"{player} to move: ")
        state = state.play(GAME[ply])
        if ply == ENDGAME_STONES + 1:
            await screenshot(page, "solved-blunder")
    # The empty board is beyond the budget: shown as unknown.
    await page.click("#first")
    await expect(solved).to_have_attribute("data-value", "unknown")

    # The bot page shows each figure with its interval and counts.
    counts = {c.bot: c for c in await store.accuracy_counts(game="connect4")}
    await page.goto(f"{base}/bots/alpha")
    await expect(page.locator("#bot")).to_have_attribute("data-status", "ready")
    panel = page.locator("#bot-accuracy")
    await expect(panel).to_be_visible()
    alpha = counts["alpha"]
    value = f"{100 * alpha.kept / alpha.judged:.1f}%"
    await expect(panel.locator(".accuracy-value")).to_have_text(value)
    await expect(panel).to_contain_text(
        f"of {alpha.judged} judged moves ({alpha.moves} analysed)"
    )
    await expect(panel).to_contain_text(f"({alpha.blunders} in 1 game)")
    await expect(panel.locator(".ci").first).to_contain_text("95%:")
    await screenshot(page, "bot-accuracy")
