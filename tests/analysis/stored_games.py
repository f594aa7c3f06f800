"""Connect Four games written through the real store, and ``arena analyse`` run as a process.

``store_games`` plays nothing: it opens, fills and finishes matches through
the store's public API (the group commit a server uses). A game that did not
end by the rules ends as a resignation of the side to move.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from arena.store import Store
from protocol.games import Connect4State, Termination
from protocol.messages import Analysis

PLAYERS = (("alpha", "beta"), ("beta", "gamma"), ("gamma", "alpha"))
"""Who plays each stored game, in turn."""


async def store_games(
    store: Store,
    games: Sequence[Sequence[int]],
    players: Sequence[tuple[str, str]] = PLAYERS,
    analyses: Sequence[Sequence[Analysis | None]] = (),
) -> list[str]:
    """Write ``games`` (columns from the empty board) as finished rated matches, each move
    with its analysis from ``analyses`` (by game, then ply) if given; their ids."""
    for name in sorted({name for pair in players for name in pair}):
        if await store.get_bot(name) is None:
            await store.add_bot(name)
    ids = []
    for number, moves in enumerate(games):
        match_id = await store.open_match("connect4", players[number % len(players)], 1000, 0)
        state = Connect4State.initial()
        for ply, move in enumerate(moves):
            analysis = analyses[number][ply] if analyses else None
            store.record_move(match_id, ply, ply % 2, move, 10, 1, analysis)
            state = state.play(move)
        ended = state.outcome()
        if ended is None:
            await store.finish_match(match_id, 1 - state.to_move, Termination.RESIGN, None, True)
        else:
            await store.finish_match(match_id, ended.winner, ended.termination, None, True)
        ids.append(match_id)
    return ids


def seed_database(path: Path, games: Sequence[Sequence[int]]) -> tuple[str, list[str]]:
    """A new SQLite database at ``path`` holding ``games``: its URL and the match ids."""
    url = f"sqlite+aiosqlite:///{path}"

    async def write() -> list[str]:
        async with await Store.open(url) as store:
            return await store_games(store, games)

    return url, asyncio.run(write())


def analyse_command(url: str, *args: str) -> list[str]:
    """The ``arena analyse`` command line on ``url``."""
    return [sys.executable, "-m", "arena", "analyse", "--db", url, *args]


def run_analyse(url: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``arena analyse`` to the end; its exit status and output."""
    return subprocess.run(
        analyse_command(url, *args), capture_output=True, text=True, timeout=timeout, check=False
    )
