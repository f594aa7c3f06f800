"""Tournament state and events on MQTT: a real ``ArenaApp`` publishing to a private Mosquitto."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from http_schema import check_def
from mosquitto_fixture import MOSQUITTO, Mosquitto, Recorder

from arena.app import ArenaApp
from arena.live import mqtt_topics as topics
from arena.server import ArenaConfig
from arena.stats import elo_interval
from arena.tournaments.openings import OpeningSuite
from arena.tournaments.settings import TournamentSettings
from tests.tournament_bots import AutoBot

pytestmark = pytest.mark.skipif(MOSQUITTO is None, reason="the mosquitto binary is not installed")


async def test_a_tournament_retains_its_state_and_publishes_each_game(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path)
    broker.start()
    config = ArenaConfig(port=0, db_url=f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}")
    app = ArenaApp(config, mqtt_url=broker.url)
    bots: list[AutoBot] = []
    try:
        await app.start()
        store = app.server.store
        for name in ("alice", "bob"):
            bots.append(await AutoBot.login(app.server.port, name, await store.add_bot(name)))
        assert app.server.tournaments is not None
        settings = TournamentSettings(
            game="tictactoe", format="round-robin", bots=("alice", "bob"), games_per_pair=4
        )
        state_topic, events_topic = topics.tournament_state(1), topics.tournament_events(1)
        assert (state_topic, events_topic) == (
            "arena/v1/tournament/1/state", "arena/v1/tournament/1/events"
        )  # fmt: skip
        async with Recorder(broker.port, "arena/v1/tournament/#") as recorder:
            tid = await app.server.tournaments.scheduler.create(
                settings, OpeningSuite("test", ((4,),))
            )
            assert tid == 1

            def finished(_: object) -> bool:
                states = [json.loads(m.payload) for m in recorder.on(state_topic)]
                return bool(states) and states[-1]["status"] == "finished"

            await recorder.wait_for(finished, timeout=20)
            events = [json.loads(m.payload) for m in recorder.on(events_topic)]
        games = [e for e in events if e["type"] == "game"]
        assert len(games) == 4 and all(e["tournament"] == 1 for e in games)
        assert sum(e["pair_complete"] for e in games) == 2
        assert {"type": "status", "status": "finished", "tournament": 1} in events
        for event in events:
            check_def("TournamentEvent", event)
        async with Recorder(broker.port, state_topic) as late:
            retained = await late.wait_for(lambda m: len(m) == 1)
        assert retained[0].retain
        state = json.loads(retained[0].payload)
        assert state["progress"]["counted"] == 4
        check_def("TournamentStatus", state)
        # The meeting's Elo is elo_interval of its pairs: 2 pairs are "too few games".
        [meeting] = state["meetings"]
        assert meeting["elo_interval"] == elo_interval(meeting["pentanomial"]).to_json()
        assert meeting["elo_interval"]["too_few"]
    finally:
        for bot in bots:
            await bot.close()
        await app.stop()
        broker.kill()
