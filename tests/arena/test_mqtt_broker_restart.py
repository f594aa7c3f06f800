"""A broker killed and restarted mid-tournament: no match is lost and the arena republishes.

Real processes throughout: ``arena serve --mqtt`` on a fresh SQLite file, two
``arena-bot`` clients playing continuous rated tic-tac-toe matches, and a real
Mosquitto that is SIGKILLed while they play and started again on the same port.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from mosquitto_fixture import MOSQUITTO, Mosquitto, Received, Recorder

from arena.live import mqtt_topics as topics
from arena.store import Store

pytestmark = pytest.mark.skipif(MOSQUITTO is None, reason="the mosquitto binary is not installed")

GAME = "tictactoe"
BOTS = ("ada", "bea")


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


async def poll(what: str, check: Any, timeout: float = 30.0) -> None:
    """Wait until ``check()`` (blocking HTTP, so run in a thread) holds; else fail with ``what``."""
    try:
        async with asyncio.timeout(timeout):
            while not await asyncio.to_thread(check):
                await asyncio.sleep(0.1)
    except TimeoutError:
        pytest.fail(f"not within {timeout} s: {what}")


def finished_matches(http: str) -> int:
    """Rated matches finished so far: both bots play every one of them."""
    entries = get_json(f"{http}/api/leaderboard?game={GAME}")["entries"]
    return min((e["games"] for e in entries), default=0)


def mqtt_connected(http: str) -> bool:
    return bool(get_json(f"{http}/healthz")["mqtt"]["connected"])


def complete_matches(messages: list[Received]) -> list[list[int]]:
    """The ``seq`` lists of every match whose events ran from 1 to its ``match_end``."""
    by_match: dict[str, list[dict[str, Any]]] = {}
    for message in messages:
        if message.topic.endswith("/events"):
            event = json.loads(message.payload)
            by_match.setdefault(event["match_id"], []).append(event)
    complete = []
    for events in by_match.values():
        if events[0]["seq"] == 1 and events[-1]["kind"] == "match_end":
            complete.append([e["seq"] for e in events])
    return complete


async def test_broker_restart_mid_tournament_loses_no_match_and_republishes(
    tmp_path: Path,
) -> None:
    broker = Mosquitto(tmp_path)
    broker.start()
    db = tmp_path / "arena.db"
    store = await Store.open(f"sqlite+aiosqlite:///{db}")
    try:
        tokens = {name: await store.add_bot(name) for name in BOTS}
    finally:
        await store.close()
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena", "serve", "--port", "0", "--db", str(db),
        "--mqtt", broker.url, "--move-ms", "5000",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    bots: list[asyncio.subprocess.Process] = []
    try:
        assert server.stdout is not None
        ws_url = (await asyncio.wait_for(server.stdout.readline(), 20)).decode().split()[-1]
        http = ws_url.replace("ws://", "http://")
        async with Recorder(broker.port, "arena/v1/#") as before:
            for name in BOTS:
                bots.append(
                    await asyncio.create_subprocess_exec(
                        sys.executable, "-m", "bots.client.cli", "--url", ws_url,
                        "--name", name, "--game", GAME, "--quiet",
                        "--strategy", "mcts:time_ms=40,workers=1,seed=5",
                        env={**os.environ, "ARENA_BOT_TOKEN": tokens[name]},
                        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
                    )
                )
            await before.wait_for(lambda ms: len(complete_matches(ms)) >= 2, timeout=60)
            for seqs in complete_matches(before.messages):
                assert seqs == list(range(1, len(seqs) + 1))  # in order, no gaps

        broker.kill()
        await poll("the arena notices the broker is gone", lambda: not mqtt_connected(http))
        played_before_outage = await asyncio.to_thread(finished_matches, http)
        await poll(
            "matches go on without a broker",
            lambda: finished_matches(http) >= played_before_outage + 3,
        )
        played_in_outage = await asyncio.to_thread(finished_matches, http)

        broker.start()
        await poll("the arena reconnects", lambda: mqtt_connected(http))
        async with Recorder(broker.port, "arena/v1/#") as after:
            # Retained topics come back without anybody publishing anew: the status and
            # a leaderboard that already counts the matches played during the outage.
            board = topics.leaderboard(GAME)

            def republished(ms: list[Received]) -> bool:
                boards = [m for m in ms if m.topic == board]
                return bool(boards) and any(
                    m.topic == topics.STATUS_TOPIC and m.payload == b"online" for m in ms
                )

            await after.wait_for(republished, timeout=15)
            entries = json.loads(after.on(board)[0].payload)["entries"]
            assert {e["bot"] for e in entries} == set(BOTS)
            assert all(e["games"] >= played_in_outage for e in entries)
            # Play goes on, and events flow again: whole matches, in order (those queued
            # during the outage are delivered too).
            played_at_reconnect = await asyncio.to_thread(finished_matches, http)
            await poll(
                "matches go on after the reconnect",
                lambda: finished_matches(http) >= played_at_reconnect + 2,
            )
            await after.wait_for(lambda ms: len(complete_matches(ms)) >= 2, timeout=60)
            for seqs in complete_matches(after.messages):
                assert seqs == list(range(1, len(seqs) + 1))

        for bot in bots:
            bot.send_signal(signal.SIGTERM)
        for bot in bots:
            assert await asyncio.wait_for(bot.wait(), 30) == 0
        server.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(server.wait(), 30) == 0
    finally:
        for proc in (*bots, server):
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        broker.kill()

    # Nothing lost: every match is closed, every finished one has its moves, and the
    # ratings count exactly the finished rated matches.
    with sqlite3.connect(db) as conn:
        statuses = dict(conn.execute("SELECT status, COUNT(*) FROM matches GROUP BY status"))
        assert "live" not in statuses
        finished = statuses["finished"]
        assert finished >= played_at_reconnect + 2
        without_moves = conn.execute(
            "SELECT COUNT(*) FROM matches m WHERE status = 'finished' AND NOT EXISTS "
            "(SELECT 1 FROM moves WHERE match_id = m.id)"
        ).fetchone()[0]
        assert without_moves == 0
        games = [row[0] for row in conn.execute("SELECT games FROM ratings WHERE game = ?",
                                                (GAME,))]
        assert games == [finished, finished]
