"""The log of a real ``arena serve`` process, configured from a TOML file: JSON lines with the
documented fields for logins, connections, match start and end, and the summary."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from serve_process import Bot, ServeProcess, add_bots, pair_up
from websockets.asyncio.client import connect

from protocol.messages import PROTOCOL_VERSION


async def play_tictactoe(url: str, tokens: dict[str, str]) -> str:
    """alice and bob play one game (the first mover wins on the top row); its match id."""
    alice, bob = (
        await Bot.login(url, "alice", tokens["alice"]),
        await Bot.login(url, "bob", tokens["bob"]),
    )
    first, second, turn = await pair_up(alice, bob)
    for ply, cell in enumerate((0, 3, 1, 4, 2)):
        mover = first if ply % 2 == 0 else second
        if ply:
            turn = await mover.expect("your_turn")
        await mover.send(type="move", match_id=turn["match_id"], ply=turn["ply"], move=cell)
    end = await alice.expect("match_end")
    await bob.expect("match_end")
    await alice.ws.close()
    await bob.ws.close()
    return str(end["match_id"])


async def fail_login(url: str) -> None:
    async with connect(url) as ws:
        await ws.send(
            json.dumps(
                {"type": "hello", "role": "bot", "version": PROTOCOL_VERSION, "name": "alice",
                 "token": "wrong"}
            )
        )  # fmt: skip
        await ws.recv()
        await ws.wait_closed()


async def test_json_log_lines_from_a_config_file(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
    tokens = add_bots(db, tmp_path / "tokens", "alice", "bob")
    config = tmp_path / "arena.toml"
    config.write_text('log_format = "json"\nsummary_interval = 0.3\ndb_writer = "inline"\n')
    server = ServeProcess(db, "--config", str(config)).start()
    try:
        await fail_login(server.url)
        match_id = await play_tictactoe(server.url, tokens)
        await asyncio.sleep(0.8)  # at least one summary line after the match
    finally:
        assert server.stop() == 0
    records = [json.loads(line) for line in server.stderr().splitlines()]
    for record in records:
        assert {"time", "level", "logger", "message"} <= set(record), record
        assert record["time"].endswith("+00:00")

    def events(kind: str, **fields: Any) -> list[dict[str, Any]]:
        return [
            r for r in records
            if r.get("event") == kind and all(r.get(k) == v for k, v in fields.items())
        ]  # fmt: skip

    [failed] = events("login_failed")
    assert failed["bot"] == "alice" and failed["remote"] == "127.0.0.1"
    assert failed["level"] == "warning"
    assert len(events("login", role="bot")) == 2
    [started] = events("match_started", match_id=match_id)
    assert started["game"] == "tictactoe" and sorted(started["players"]) == ["alice", "bob"]
    assert started["move_ms"] == 60_000 and started["rated"] is True
    [ended] = events("match_ended", match_id=match_id)
    assert (ended["result"], ended["termination"], ended["plies"]) == ("1-0", "line", 5)
    assert ended["players"] == started["players"] and 0 < ended["duration_s"] < 10
    assert ended["message"].startswith(f"match {match_id} ended: tictactoe, ")
    closed = events("connection_closed")
    assert len(closed) == 3
    [refused] = [c for c in closed if c["role"] is None]
    assert (refused["close_code"], refused["closed_by"]) == (1008, "server")
    assert {(c["bot"], c["close_code"], c["closed_by"]) for c in closed if c["role"]} == {
        ("alice", 1000, "client"),
        ("bob", 1000, "client"),
    }
    summaries = events("summary")
    assert summaries and all(s["store_health"] == "ok" for s in summaries)
    assert {"live_matches", "bots_online", "moves_per_s", "store_commit_median_ms"} <= set(
        summaries[-1]
    )
    assert any(s["moves_per_s"] > 0 for s in summaries)


async def test_text_lines_and_the_log_level(tmp_path: Path) -> None:
    db = f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
    tokens = add_bots(db, tmp_path / "tokens", "alice", "bob")
    server = ServeProcess(db, "--db-writer", "inline").start()
    try:
        match_id = await play_tictactoe(server.url, tokens)
    finally:
        assert server.stop() == 0
    text = server.stderr()
    assert f" INFO arena.matches: match {match_id} ended: tictactoe, " in text
    assert " 1-0 by line after 5 plies in " in text

    quiet = ServeProcess(db, "--db-writer", "inline", "--log-level", "warning").start()
    try:
        await fail_login(quiet.url)
    finally:
        assert quiet.stop() == 0
    lines = quiet.stderr().splitlines()
    assert (
        len(lines) == 1 and " WARNING arena.net.gateway: failed login for bot 'alice'" in lines[0]
    )
