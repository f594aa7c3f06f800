"""``arena serve --mqtt`` as a real process with a real Mosquitto: health, viewer, leaderboards.

Two scripted bots play one rated tic-tac-toe match through the server; an MQTT
subscriber sees the result and the republished (retained) leaderboard, and
``/healthz`` reports the broker link. SIGTERM then stops the server cleanly,
and it says ``offline`` on the status topic.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from mosquitto_fixture import MOSQUITTO, Mosquitto, Recorder
from websockets.asyncio.client import ClientConnection, connect

from arena.cli import main as arena_main
from arena.live import mqtt_topics as topics
from arena.store import Store
from protocol.messages import PROTOCOL_VERSION
from tests.arena.rating_data import expected_fit

pytestmark = pytest.mark.skipif(MOSQUITTO is None, reason="the mosquitto binary is not installed")

GAME = "tictactoe"
X_WINS = (0, 3, 1, 4, 2)


def get(url: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.headers["Content-Type"], response.read()


async def hello(url: str, name: str, token: str) -> ClientConnection:
    ws = await connect(url, compression=None)
    await ws.send(
        json.dumps(
            {
                "type": "hello",
                "role": "bot",
                "version": PROTOCOL_VERSION,
                "name": name,
                "token": token,
            }
        )
    )
    assert json.loads(await ws.recv())["type"] == "welcome"
    await ws.send(
        json.dumps({"type": "seek", "game": GAME, "time_control": {"move_ms": 2000, "bank_ms": 0}})
    )
    return ws


async def play_scripted(ws: ClientConnection, moves: dict[int, int]) -> dict[str, Any]:
    """Answer each ``your_turn`` from ``moves`` (ply -> move); return the ``match_end``."""
    async with asyncio.timeout(10):
        while True:
            message = json.loads(await ws.recv())
            if message["type"] == "your_turn":
                move = moves[message["ply"]]
                await ws.send(
                    json.dumps(
                        {
                            "type": "move",
                            "match_id": message["match_id"],
                            "ply": message["ply"],
                            "move": move,
                        }
                    )
                )
            elif message["type"] == "match_end":
                return message


async def next_of_type(ws: ClientConnection, kind: str) -> dict[str, Any]:
    """The next message of type ``kind`` (others skipped)."""
    async with asyncio.timeout(10):
        while True:
            message: dict[str, Any] = json.loads(await ws.recv())
            if message["type"] == kind:
                return message


async def test_serve_with_mqtt_publishes_results_and_leaderboards_and_reports_health(
    tmp_path: Path,
) -> None:
    broker = Mosquitto(tmp_path)
    broker.start()
    db = str(tmp_path / "serve.db")
    store = await Store.open(f"sqlite+aiosqlite:///{db}")
    try:
        tokens = {name: await store.add_bot(name) for name in ("alice", "bob")}
    finally:
        await store.close()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena", "serve", "--port", "0", "--db", db,
        "--mqtt", broker.url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        ws_url = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode().split()[-1]
        http = ws_url.replace("ws://", "http://")
        async with Recorder(broker.port, "arena/v1/#") as recorder:
            for _ in range(50):  # the publisher connects in the background
                health = json.loads((await asyncio.to_thread(get, f"{http}/healthz"))[1])
                if health["mqtt"]["connected"]:
                    break
                await asyncio.sleep(0.1)
            assert health["mqtt"]["connected"] and health["mqtt"]["broker"] == broker.url
            content_type, page = await asyncio.to_thread(get, f"{http}/")
            assert content_type.startswith("text/html") and b"<html" in page.lower()

            alice = await hello(ws_url, "alice", tokens["alice"])
            bob = await hello(ws_url, "bob", tokens["bob"])
            # Either may move first: each answers the plies of its seat from the same script.
            ends = await asyncio.gather(
                play_scripted(alice, dict(enumerate(X_WINS))),
                play_scripted(bob, dict(enumerate(X_WINS))),
            )
            assert ends[0]["result"] == "1-0" and ends[0]["rated"]
            board_topic = topics.leaderboard(GAME)

            def rated_board(messages: list[Any]) -> bool:
                return any(
                    m.topic == board_topic and json.loads(m.payload)["entries"] for m in messages
                )

            await recorder.wait_for(rated_board)
            entries = json.loads(recorder.on(board_topic)[-1].payload)["entries"]
            # The board ranks by the fitted rating (one win: the prior keeps it finite
            # and wide); both players are told their rows of it, and MQTT has them too.
            reports = [await next_of_type(ws, "rating") for ws in (alice, bob)]
            assert reports[0] == reports[1] and reports[0]["match_id"] == ends[0]["match_id"]
            winner, loser = (e["bot"] for e in entries)
            fit = expected_fit([(winner, loser, 1.0)])
            assert [(e["bot"], e["rating"], e["ci95"]) for e in entries] == [
                (line.name, round(line.rating, 1), round(line.ci95, 1)) for line in fit.ratings
            ]
            assert all(e["provisional"] for e in entries) and "elo" not in entries[0]
            ratings_topic = topics.ratings(GAME)
            await recorder.wait_for(lambda ms: any(m.topic == ratings_topic for m in ms))
            published = json.loads(recorder.on(ratings_topic)[-1].payload)
            assert published == reports[0]
            assert {e["bot"]: e["rating"] for e in published["entries"]} == {
                e["bot"]: e["rating"] for e in entries
            }
            assert recorder.on(topics.results(GAME))
            await alice.close()
            await bob.close()

            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), 20) == 0
            await recorder.wait_for(
                lambda ms: any(
                    m.topic == topics.STATUS_TOPIC and m.payload == b"offline" for m in ms
                )
            )
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        broker.kill()


def test_serve_refuses_a_bad_broker_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "x.db")
    assert arena_main(["serve", "--port", "0", "--db", db, "--mqtt", "http://nope"]) == 2
    assert "--mqtt" in capsys.readouterr().err
