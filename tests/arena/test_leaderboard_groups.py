"""Groups apart: bots that games do not connect are never ranked in one list.

A real ``ArenaApp`` serves a database where two bots only ever played each
other. ``/api/leaderboard``, the websocket reply and ``arena leaderboard`` must
each show the main group and the stray pair as separate tables, ranked on
their own, the pair's ratings relative to its own mean, with the line that
says why.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from arena.app import ArenaApp
from arena.cli.main import main as arena_main
from arena.leaderboard.board import group_note
from arena.stats.ranks import PROVISIONAL_HINT
from arena.store import Store
from protocol.messages import PROTOCOL_VERSION, LeaderboardReply, parse_server_message
from tests.arena.conftest import TEST_CONFIG
from tests.arena.rating_data import expected_fit, random_games, seed_results

GAME = "connect4"
SKILL = {"alice": 1700.0, "bob": 1550.0, "carol": 1400.0, "xavier": 1500.0, "yvonne": 1500.0}
MAIN = ["alice", "bob", "carol"]
PAIR = ["xavier", "yvonne"]


def http_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


async def test_a_stray_pair_is_its_own_table_on_every_channel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "arena.db"
    # xavier beats yvonne 5-1: on one list xavier would sit among the main group's
    # bots, though no game says how either compares with them.
    games = random_games(MAIN, 120, seed=5, skill=SKILL)
    games += [("xavier", "yvonne", 1.0)] * 5 + [("yvonne", "xavier", 1.0)]
    store = await Store.open(f"sqlite+aiosqlite:///{db}")
    try:
        for name in SKILL:
            await store.add_bot(name)
        await seed_results(store, GAME, games)
    finally:
        await store.close()
    fit = expected_fit(games, shown=list(SKILL))
    assert fit.groups == 2
    stray = [fit.get(name) for name in PAIR]
    assert stray[0].rating + stray[1].rating == pytest.approx(3000.0, abs=1e-6)  # own mean
    assert stray[0].ci95 < 300.0  # what six games say, not the prior's ±2000
    expected_groups = [
        {"group": 0, "bots": [line.name for line in fit.ratings if line.group == 0], "note": None},
        {"group": 1, "bots": PAIR, "note": group_note(1, stray[0].games)},
    ]
    assert "not played anyone in the main group" in str(expected_groups[1]["note"])

    config = replace(TEST_CONFIG, db_url=f"sqlite+aiosqlite:///{db}")
    async with ArenaApp(config) as app:
        port = app.server.port
        body = await asyncio.to_thread(
            http_json, f"http://127.0.0.1:{port}/api/leaderboard?game={GAME}"
        )
        async with connect(f"ws://127.0.0.1:{port}/", compression=None) as ws:
            hello = {"type": "hello", "role": "spectator", "version": PROTOCOL_VERSION}
            await ws.send(json.dumps(hello))
            assert parse_server_message(await ws.recv()).type == "welcome"
            await ws.send(json.dumps({"type": "leaderboard", "game": GAME, "id": "lb"}))
            reply = parse_server_message(await asyncio.wait_for(ws.recv(), 5))
            assert isinstance(reply, LeaderboardReply)
        lines = await asyncio.to_thread(
            _cli_lines, capsys, "leaderboard", "--game", GAME, "--db", str(db),
            "--server", f"ws://127.0.0.1:{port}/",
        )  # fmt: skip

    # API: the groups, and rows group by group with ranks starting again at 1.
    assert body["groups"] == expected_groups
    ranks = [(e["bot"], e["group"], e["rank"]) for e in body["entries"]]
    assert ranks == [(line.name, line.group, line.rank) for line in fit.ratings]
    assert [r for r in ranks if r[1] == 1] == [("xavier", 1, 1), ("yvonne", 1, 2)]
    assert [e.to_dict() for e in reply.entries] == body["entries"]
    # CLI: the legend explains "?", then one table per group, the stray one under its note.
    assert PROVISIONAL_HINT in lines[1]
    note = lines.index(str(expected_groups[1]["note"]))
    first_table = [line.split()[2] for line in lines[2:note] if line[:1].isdigit()]
    second_table = [line.split()[2] for line in lines[note:] if line[:1].isdigit()]
    assert first_table == expected_groups[0]["bots"]
    assert second_table == PAIR
    assert lines[note - 1] == ""  # the tables stand apart
    assert [line.split()[0] for line in lines[note:] if line[:1].isdigit()] == ["1", "2"]


def _cli_lines(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert arena_main(list(argv)) == 0
    return capsys.readouterr().out.splitlines()
