"""The JavaScript example bot (``examples/js-bot``) against a real arena server.

It is written from ``docs/protocol.md`` alone, so this also checks that the document
is enough to write a working client. Skipped, with the reason, where Node.js or the
bot's ``ws`` package is missing (``./test.sh`` installs both).
"""

from __future__ import annotations

import asyncio
import json
import random
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from arena.server import ArenaConfig, ArenaServer
from arena.store import Store
from protocol.messages import PROTOCOL_VERSION

BOT_DIR = Path(__file__).resolve().parents[2] / "examples" / "js-bot"
NODE = shutil.which("node") or shutil.which("nodejs")
MATCHES = 3

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="Node.js is not installed (./test.sh installs it)"),
    pytest.mark.skipif(
        not (BOT_DIR / "node_modules" / "ws").is_dir(),
        reason="the bot's ws package is not installed: run npm ci in examples/js-bot",
    ),
]


@pytest.fixture
async def server(store: Store) -> AsyncIterator[ArenaServer]:
    """A real arena server on port 0."""
    config = ArenaConfig(host="127.0.0.1", port=0, pairing_window_s=0.01, seed=7)
    arena = ArenaServer(config, store=store)
    await arena.start()
    try:
        yield arena
    finally:
        await arena.shutdown()


async def start_js_bot(server: ArenaServer, token: str, *args: str) -> asyncio.subprocess.Process:
    assert NODE is not None
    return await asyncio.create_subprocess_exec(
        NODE, "bot.js", "--name", "js-bot", "--url", f"ws://127.0.0.1:{server.port}/", *args,
        cwd=BOT_DIR,
        env={"ARENA_BOT_TOKEN": token, "PATH": "/usr/bin:/bin"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def random_opponent(url: str, token: str, matches: int, seed: int) -> list[str]:
    """A Python bot playing seeded random moves; per match, who won: js-bot, rnd or draw."""
    rng = random.Random(seed)
    seats: dict[str, int] = {}
    results: list[str] = []
    async with connect(url) as ws:
        await send(ws, type="hello", role="bot", version=PROTOCOL_VERSION, name="rnd", token=token)
        async for frame in ws:
            message = json.loads(frame)
            kind = message["type"]
            if kind == "match_start":
                seats[message["match_id"]] = message["you"]
            elif kind == "your_turn":
                move = rng.choice(message["legal_moves"])
                await send(ws, type="move", match_id=message["match_id"], ply=message["ply"],
                           move=move)  # fmt: skip
            elif kind == "match_end":
                # Every match must end by the rules: no illegal move, timeout or refusal.
                assert message["termination"] in ("line", "draw"), message
                winner = message["winner"]
                mine = seats[message["match_id"]]
                results.append("draw" if winner is None else "rnd" if winner == mine else "js-bot")
                if len(results) == matches:
                    return results
            if kind in ("welcome", "match_end"):
                await send(ws, type="seek", game="connect4", time_control={"move_ms": 1000})
    return results


async def send(ws: ClientConnection, **message: Any) -> None:
    await ws.send(json.dumps(message))


async def test_the_js_bot_plays_whole_matches_and_beats_random_moves(
    server: ArenaServer, store: Store
) -> None:
    js_token, random_token = await store.add_bot("js-bot"), await store.add_bot("rnd")
    bot = await start_js_bot(server, js_token, "--games", str(MATCHES))
    results = await asyncio.wait_for(
        random_opponent(f"ws://127.0.0.1:{server.port}/", random_token, MATCHES, seed=3), 60
    )
    out, err = await asyncio.wait_for(bot.communicate(), 10)
    assert bot.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert lines[0].startswith("logged in as js-bot") and len(lines) == 1 + 2 * MATCHES
    assert results.count("js-bot") >= MATCHES - 1, results  # one-ply lookahead beats random
    # After each rated match it logs its rating as the refitted leaderboard has it; the
    # report after the last game is the leaderboard's row now, to the point.
    ratings = [line for line in lines if ": rating " in line]
    assert len(ratings) == MATCHES
    [row] = [e for e in await server.api.leaderboard_entries("connect4") if e.bot == "js-bot"]
    assert row.ci95 is not None
    last = f"rating {row.rating:.1f} ± {row.ci95:.1f}"
    final = [line for line in ratings if line.endswith(f", {MATCHES} rated games")]
    assert final and final == [line for line in ratings if last in line]
    matches = await store.list_matches(game="connect4")
    assert [m.status for m in matches] == ["finished"] * MATCHES


async def test_the_js_bot_stops_with_status_3_when_refused(server: ArenaServer) -> None:
    bot = await start_js_bot(server, "not-the-token", "--games", "1")
    _, err = await asyncio.wait_for(bot.communicate(), 10)
    assert bot.returncode == 3
    assert "server error auth_failed" in err.decode()
