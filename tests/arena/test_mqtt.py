"""The MQTT publisher against a real Mosquitto (started per test) and real aiomqtt subscribers."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from mosquitto_fixture import MOSQUITTO, Mosquitto, Received, Recorder, free_port

from arena.live import mqtt_topics as topics
from arena.live.mqtt import MqttEventSink, MqttPublisher
from protocol.games import new_game
from protocol.messages import Clocks, Event, MatchEnd, Moved, Snapshot, TimeControl

pytestmark = pytest.mark.skipif(MOSQUITTO is None, reason="the mosquitto binary is not installed")

GAME = "connect4"
FAST_RETRY: dict[str, Any] = {"reconnect_min_s": 0.05, "reconnect_max_s": 0.2}


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    """A private broker on a free port, killed at the end of the test."""
    mosquitto = Mosquitto(tmp_path)
    mosquitto.start()
    try:
        yield mosquitto
    finally:
        mosquitto.kill()


@pytest.fixture
async def publisher(broker: Mosquitto) -> AsyncIterator[MqttPublisher]:
    """A started publisher, connected to ``broker``."""
    pub = MqttPublisher(broker.url, client_id="arena-test", **FAST_RETRY)
    await pub.start()
    assert await pub.wait_connected(5)
    try:
        yield pub
    finally:
        await pub.stop(timeout=2)


def scripted_match(seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """A seeded random Connect Four game: its events, the state after each, and the result."""
    rng = random.Random(seed)
    state = new_game(GAME)
    events: list[dict[str, Any]] = []
    states: list[dict[str, Any]] = []
    while (outcome := state.outcome()) is None:
        move = rng.choice(state.legal_moves())
        player = state.to_move
        state = state.play(move)
        seq = len(events) + 1
        events.append(
            {
                "type": "event",
                "match_id": "m1",
                "seq": seq,
                "kind": "moved",
                "moved": {"ply": seq - 1, "player": player, "move": move},
            }
        )
        states.append({"match_id": "m1", "moves": list(state.moves), "last_event": seq})
    result = {"match_id": "m1", "result": outcome.result, "termination": outcome.termination.value}
    return events, states, result


def payloads(messages: list[Received]) -> list[Any]:
    return [json.loads(m.payload) for m in messages]


# URLs and topics --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "host", "port"),
    [
        ("mqtt://127.0.0.1:1883", "127.0.0.1", 1883),
        ("mqtt://broker.example", "broker.example", 1883),
        ("mqtt://[::1]:2883/", "::1", 2883),
    ],
)
def test_broker_url_is_parsed(url: str, host: str, port: int) -> None:
    assert topics.parse_broker_url(url) == topics.BrokerAddress(host, port)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:1883",
        "mqtts://host",
        "127.0.0.1:1883",
        "mqtt://",
        "mqtt://h:0",
        "mqtt://h:99999",
        "mqtt://u:p@h",
        "mqtt://h/topic",
        "tcp://h:1883",
    ],
)
def test_other_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError, match="MQTT broker URL"):
        MqttPublisher(url)


def test_topics_are_versioned_and_refuse_wildcards() -> None:
    assert topics.match_events("uttt", "42") == "arena/v1/uttt/matches/42/events"
    assert topics.leaderboard("tictactoe") == "arena/v1/tictactoe/leaderboard"
    for bad in ("", "a/b", "+", "x#", "server"):
        with pytest.raises(ValueError):
            topics.match_state(bad, "1")


def test_a_bad_call_is_counted_not_raised() -> None:
    pub = MqttPublisher("mqtt://127.0.0.1:1")
    pub.move("no/such/game", "1", {"seq": 1})
    pub.leaderboard(GAME, [{"bad": float("nan")}])
    assert pub.status()["rejected"] == 2
    assert pub.status()["queued"] == 0


# A whole match ------------------------------------------------------------------------


async def test_subscriber_sees_a_whole_match_in_order_then_the_result(
    broker: Mosquitto, publisher: MqttPublisher
) -> None:
    events, states, result = scripted_match(seed=7)
    events_topic = topics.match_events(GAME, "m1")
    async with Recorder(broker.port, f"arena/v1/{GAME}/#") as rec:
        publisher.match_started(GAME, "m1", {"match_id": "m1", "moves": []})
        for event, state in zip(events, states, strict=True):
            publisher.move(GAME, "m1", event, state)
        publisher.match_ended(GAME, "m1", result)
        cleared = topics.match_state(GAME, "m1")
        await rec.wait_for(lambda _: bool(rec.on(cleared)) and rec.on(cleared)[-1].payload == b"")

    seqs = [e["seq"] for e in payloads(rec.on(events_topic))]
    assert seqs == list(range(1, len(events) + 1))
    assert payloads(rec.on(topics.match_result(GAME, "m1"))) == [result]
    assert payloads(rec.on(topics.results(GAME))) == [result]
    state_messages = rec.on(topics.match_state(GAME, "m1"))
    assert json.loads(state_messages[-2].payload) == states[-1]
    assert state_messages[-1].payload == b""  # the clear
    status = publisher.status()
    assert status["connected"] is True
    assert status["dropped"] == 0
    assert status["published"] >= 2 * len(events) + 4


async def test_late_subscriber_gets_live_state_and_leaderboard_then_no_state_after_the_end(
    broker: Mosquitto, publisher: MqttPublisher
) -> None:
    events, states, result = scripted_match(seed=3)
    board = [
        {"rank": 1, "bot": "alice", "rating": 1516.0},
        {"rank": 2, "bot": "bob", "rating": 1484.0},
    ]
    publisher.match_started(GAME, "m1", {"match_id": "m1", "moves": []})
    for event, state in zip(events[:5], states[:5], strict=True):
        publisher.move(GAME, "m1", event, state)
    groups = [{"group": 0, "bots": ["alice", "bob"], "note": None}]
    publisher.leaderboard(GAME, board, groups)
    state_topic = topics.match_state(GAME, "m1")
    board_topic = topics.leaderboard(GAME)
    assert await publisher.flush(5)

    async with Recorder(broker.port, "arena/v1/#") as late:
        await late.wait_for(lambda _: bool(late.on(state_topic) and late.on(board_topic)))
        assert [m.retain for m in late.on(state_topic)] == [True]
        assert payloads(late.on(state_topic)) == [states[4]]
        assert payloads(late.on(board_topic)) == [
            {"game": GAME, "entries": board, "groups": groups}
        ]
        assert late.on(topics.STATUS_TOPIC) == [Received(topics.STATUS_TOPIC, b"online", True)]

    async with Recorder(broker.port, state_topic) as watcher:
        await watcher.wait_for(lambda m: len(m) == 1)  # the retained state
        publisher.match_ended(GAME, "m1", result)
        await watcher.wait_for(lambda m: len(m) == 2)
        assert watcher.messages[-1].payload == b""
    async with Recorder(broker.port, "arena/v1/#") as later:
        await later.wait_for(lambda _: bool(later.on(board_topic)))
        messages = await later.quiet()
    assert not [m for m in messages if m.topic == state_topic], "the state was not cleared"


async def test_sink_turns_hub_messages_into_events_state_and_result(
    broker: Mosquitto, publisher: MqttPublisher
) -> None:
    clocks = Clocks(time_left_ms=(1000, 1000), bank_ms=(0, 0))
    snapshot = Snapshot(
        match_id="s1",
        game="tictactoe",
        players=("alice", "bob"),
        ratings=(1500.0, 1500.0),
        time_control=TimeControl(move_ms=1000),
        moves=(),
        position=new_game("tictactoe").encode(),
        clocks=clocks,
        status="live",
        last_event=0,
        end=None,
    )
    sink = MqttEventSink(publisher)
    state = new_game("tictactoe")
    async with Recorder(broker.port, "arena/v1/tictactoe/#") as rec:
        sink.publish(snapshot)
        for seq, move in enumerate((4, 0, 2), start=1):
            player = state.to_move
            state = state.play(move)
            moved = Moved(
                match_id="s1",
                ply=seq - 1,
                player=player,
                move=move,
                position=state.encode(),
                think_ms=5,
                clocks=clocks,
            )
            sink.publish(Event(match_id="s1", seq=seq, kind="moved", moved=moved))
        end = MatchEnd(
            match_id="s1",
            winner=None,
            result="*",
            termination="aborted",
            fault="infrastructure",
            faulty_player=None,
            rated=False,
            reason="test",
        )
        sink.publish(Event(match_id="s1", seq=4, kind="match_end", end=end))
        cleared = topics.match_state("tictactoe", "s1")
        await rec.wait_for(lambda _: bool(rec.on(cleared)) and rec.on(cleared)[-1].payload == b"")

    assert [e["seq"] for e in payloads(rec.on(topics.match_events("tictactoe", "s1")))] == [
        1,
        2,
        3,
        4,
    ]
    states = rec.on(topics.match_state("tictactoe", "s1"))
    last_state = Snapshot.from_dict(json.loads(states[-2].payload))
    assert last_state.moves == (4, 0, 2)
    assert last_state.position == state.encode()
    assert last_state.last_event == 3
    assert states[-1].payload == b""
    (result,) = payloads(rec.on(topics.results("tictactoe")))
    assert result == {**end.to_dict(), "game": "tictactoe", "players": ["alice", "bob"]}


# Status and will --------------------------------------------------------------------


async def test_status_is_online_while_connected_and_offline_after_stop(broker: Mosquitto) -> None:
    pub = MqttPublisher(broker.url, **FAST_RETRY)
    async with pub:
        assert await pub.wait_connected(5)
        async with Recorder(broker.port, topics.STATUS_TOPIC) as rec:
            await rec.wait_for(lambda m: len(m) == 1)
            assert rec.messages == [Received(topics.STATUS_TOPIC, b"online", True)]
    assert pub.status()["connected"] is False
    async with Recorder(broker.port, topics.STATUS_TOPIC) as after:
        await after.wait_for(lambda m: len(m) == 1)
        assert after.messages == [Received(topics.STATUS_TOPIC, b"offline", True)]


CHILD = """
import asyncio, sys
from arena.live.mqtt import MqttPublisher

async def main() -> None:
    pub = MqttPublisher(sys.argv[1], client_id="doomed")
    await pub.start()
    assert await pub.wait_connected(5)
    print("ready", flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""


async def test_the_will_says_offline_when_the_arena_process_dies(broker: Mosquitto) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, broker.url],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert child.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 20)
        assert line.strip() == "ready"
        async with Recorder(broker.port, topics.STATUS_TOPIC) as rec:
            await rec.wait_for(lambda m: len(m) == 1)
            os.kill(child.pid, signal.SIGKILL)  # no DISCONNECT: the broker must use the will
            await rec.wait_for(lambda m: len(m) == 2)
        assert [m.payload for m in rec.messages] == [b"online", b"offline"]
    finally:
        child.kill()
        child.wait()


# Broker outages ---------------------------------------------------------------------


async def test_broker_restart_calls_stay_fast_and_retained_topics_come_back(
    broker: Mosquitto,
) -> None:
    events, states, _ = scripted_match(seed=11)
    pub = MqttPublisher(broker.url, queue_size=100, **FAST_RETRY)
    async with pub:
        assert await pub.wait_connected(5)
        pub.leaderboard(GAME, [{"rank": 1, "bot": "alice"}])
        pub.match_started(GAME, "m1", {"match_id": "m1", "moves": []})
        pub.move(GAME, "m1", events[0], states[0])

        broker.kill()
        async with asyncio.timeout(5):
            while pub.status()["connected"]:
                await asyncio.sleep(0.01)
        assert pub.status()["last_error"]

        durations = []
        for i in range(300):
            event, state = events[i % len(events)], states[i % len(states)]
            started = time.perf_counter()
            pub.move(GAME, "m1", event, state)
            durations.append(time.perf_counter() - started)
            if i % 50 == 0:
                await asyncio.sleep(0.01)  # let the reconnect attempts run meanwhile
        # A call that waited on the broker would take its connect timeout (seconds); the
        # bounds are generous for a busy machine.
        assert statistics.median(durations) < 0.1, "a call waited on the broker"
        assert max(durations) < 0.5
        pub.move(GAME, "m1", events[-1], states[-1])
        status = pub.status()
        assert status["connected"] is False
        # The 100 newest messages, plus the two retained topics whose latest value was dropped.
        assert status["queued"] == 102
        assert status["dropped"] >= 500

        broker.start()  # a fresh broker: nothing retained any more
        async with asyncio.timeout(5):
            while not pub.status()["connected"]:
                await asyncio.sleep(0.01)
        assert pub.status()["reconnects"] == 1
        async with Recorder(broker.port, "arena/v1/#") as rec:
            state_topic = topics.match_state(GAME, "m1")
            await rec.wait_for(
                lambda _: (
                    bool(rec.on(state_topic) and rec.on(topics.leaderboard(GAME)))
                    and json.loads(rec.on(state_topic)[-1].payload) == states[-1]
                )
            )
            assert rec.on(topics.STATUS_TOPIC) == [Received(topics.STATUS_TOPIC, b"online", True)]
            assert payloads(rec.on(topics.leaderboard(GAME))) == [
                {"game": GAME, "entries": [{"rank": 1, "bot": "alice"}], "groups": []}
            ]


async def test_a_full_queue_drops_the_oldest_and_keeps_the_latest_state(
    broker: Mosquitto,
) -> None:
    # Not started yet is, for the queue, the same as a broker that is down.
    pub = MqttPublisher(broker.url, queue_size=50, **FAST_RETRY)
    pub.match_started(GAME, "m1", {"match_id": "m1", "moves": []})
    for seq in range(1, 201):
        pub.move(GAME, "m1", {"seq": seq})
    assert pub.status()["dropped"] == 151
    assert pub.status()["queued"] == 51  # the 50 newest events + the state to repair

    async with Recorder(broker.port, "arena/v1/#") as rec, pub:
        events_topic = topics.match_events(GAME, "m1")
        await rec.wait_for(lambda _: len(rec.on(events_topic)) == 50)
        assert [e["seq"] for e in payloads(rec.on(events_topic))] == list(range(151, 201))
        assert payloads(rec.on(topics.match_state(GAME, "m1"))) == [{"match_id": "m1", "moves": []}]
        assert pub.status()["queued"] == 0


async def test_without_a_broker_the_publisher_keeps_accepting_and_says_why(tmp_path: Path) -> None:
    pub = MqttPublisher(f"mqtt://127.0.0.1:{free_port()}", queue_size=10, **FAST_RETRY)
    async with pub:
        assert not await pub.wait_connected(0.3)
        for seq in range(1, 31):
            pub.move(GAME, "m1", {"seq": seq})
        status = pub.status()
    assert status["connected"] is False
    assert status["last_error"]
    assert status["queued"] == 10
    assert status["dropped"] == 20
    assert status["published"] == 0


def test_after_a_reconnect_a_retained_topic_never_goes_back_in_time() -> None:
    """The backlog queued while the broker was down must not resend older retained values."""
    from arena.live.mqtt import _Outbox, _Outgoing

    outbox = _Outbox(maxsize=100)
    board = "arena/v1/connect4/leaderboard"
    events = "arena/v1/connect4/matches/m/events"
    for version in range(1, 4):  # three leaderboards and a move event each, broker down
        outbox.put(_Outgoing(board, f"board v{version}".encode(), 1, True))
        outbox.put(_Outgoing(events, f"e{version}".encode(), 0, False))
    outbox.resend_retained()  # the reconnect
    sent = []
    while (item := outbox.next()) is not None:
        sent.append(item.payload.decode())
    boards = [p for p in sent if p.startswith("board")]
    assert boards[0] == "board v3"  # the latest first, for subscribers arriving now
    assert set(boards) == {"board v3"}  # and never an older one after it
    assert [p for p in sent if p.startswith("e")] == ["e1", "e2", "e3"]  # events all, in order
