"""The user docs say what the server does: their JSON examples validate against the schemas,
their numbers are the server's, and what they promise happens on a real server."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from http_schema import WIRE_SCHEMA, check, check_def
from jsonschema import Draft202012Validator
from test_server_http import http_get

from arena.cli.serve import OPTIONS
from arena.net import limits
from arena.play.clock import MAX_RTT_ALLOWANCE_MS
from arena.play.lobby import TimeLimits
from arena.play.referee import DEFAULT_GRACE_S
from arena.play.roundtrip import ROUND_TRIP_WINDOW_S
from arena.server import ArenaConfig, ArenaServer
from arena.store.searches import STORED_MOVES
from protocol.games import GAMES
from protocol.messages import (
    HELLO_TIMEOUT_S,
    MAX_BOT_MESSAGE_BYTES,
    MAX_SPECTATOR_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    RATE_LIMIT_BURST,
    RATE_LIMIT_PER_S,
    Event,
    MatchEnd,
    MatchStart,
    Moved,
    Snapshot,
    TimeControl,
    Welcome,
    YourTurn,
)
from protocol.messages.codes import MAX_ANALYSIS_MOVES, MAX_NESTING_DEPTH, MAX_PLY
from protocol.messages.search import MAX_TREE_NODES
from protocol.messages.values import (
    BOT_NAME_PATTERN,
    BOT_NAME_RULE,
    GAME_NAME_PATTERN,
    NEW_BOT_NAME_PATTERN,
)

DOCS = Path(__file__).parents[2] / "docs"
PROTOCOL_DOC = (DOCS / "protocol.md").read_text("utf-8")
WIRE = Draft202012Validator(WIRE_SCHEMA)


def json_examples(name: str) -> list[Any]:
    """The ```json blocks of ``docs/NAME``, parsed."""
    text = (DOCS / name).read_text("utf-8")
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", text, re.DOTALL)]


@pytest.mark.parametrize("example", json_examples("protocol.md"))
def test_every_protocol_example_validates_against_the_schema(example: Any) -> None:
    WIRE.validate(example)


def test_every_other_json_example_validates_against_its_schema() -> None:
    health, leaderboard, page, match, play = json_examples("http.md")
    check_def("GuestOpponents", play)
    check_def("Health", health)
    check_def("Leaderboard", leaderboard)
    check_def("MatchPage", page)
    check_def("Match", match)
    [record] = json_examples("export.md")
    check_def("ExportRecord", record)
    [h2h] = json_examples("ratings.md")
    check_def("HeadToHead", h2h)
    mqtt_status, snapshot, moved, ended, result, board, rating, tournament_event = json_examples(
        "mqtt.md"
    )
    check_def("MqttStatus", mqtt_status)
    for message in (snapshot, moved, ended):
        WIRE.validate(message)
    # A result is the match_end plus the game and the players.
    WIRE.validate({k: v for k, v in result.items() if k not in ("game", "players")})
    check({"$ref": "#/$defs/Leaderboard"}, board)
    WIRE.validate(rating)
    check_def("TournamentEvent", tournament_event)


def spaced(n: int) -> str:
    """``600 000``: thousands separated by spaces, as the docs write them."""
    return f"{n:,}".replace(",", " ")


def test_documented_limits_are_the_servers() -> None:
    config = ArenaConfig()
    tl = TimeLimits(TimeControl(1000))
    kib, spectator_kib = MAX_BOT_MESSAGE_BYTES // 1024, MAX_SPECTATOR_MESSAGE_BYTES // 1024
    phrases = [
        f"| bot message (and any `hello`) | {kib} KiB ({MAX_BOT_MESSAGE_BYTES} bytes) per frame",
        f"| spectator message after `hello` | {spectator_kib} KiB ({MAX_SPECTATOR_MESSAGE_BYTES}"
        " bytes)",
        f"| JSON nesting | {MAX_NESTING_DEPTH} levels",
        f"| `hello` deadline | {HELLO_TIMEOUT_S:g} s after connecting",
        f"token bucket: {RATE_LIMIT_PER_S:g} messages/s sustained, bursts of {RATE_LIMIT_BURST}",
        f"| bad messages | after {config.max_protocol_errors} protocol errors",
        f"after {limits.FREE_FAILURES} failed `hello`s within a minute, the address must wait"
        f" {limits.BASE_DELAY_S:g} s",
        f"up to {limits.MAX_DELAY_S / 60:g} minutes",
        f"bot names `{BOT_NAME_PATTERN}`; game names `{GAME_NAME_PATTERN}`",
        f"registered only under `{NEW_BOT_NAME_PATTERN}` ({BOT_NAME_RULE})",
        f"at most {MAX_PLY} plies per game",
        f"| analysis | at most {MAX_ANALYSIS_MOVES} `moves` entries and {MAX_TREE_NODES} `tree`"
        " nodes per `move` |",
        f"with the {STORED_MOVES} most visited `moves` kept",
        f"`move_ms` {tl.min_move_ms} – {spaced(tl.max_move_ms)} (10 minutes), `bank_ms` 0 –"
        f" {spaced(tl.max_bank_ms)} (one hour)",
        f"`move_ms` integer {tl.min_move_ms} – {spaced(tl.max_move_ms)} (required), `bank_ms`"
        f" integer\n0 – {spaced(tl.max_bank_ms)} (default 0)",
        f"grace period ({DEFAULT_GRACE_S:g} s by default",
        f"round trip (websocket ping, at most {MAX_RTT_ALLOWANCE_MS:g} ms)",
        f"again every {config.ping_interval_s:g} s",
        f"measured over the last\n{ROUND_TRIP_WINDOW_S:g} s",
        f"or no pong to the server's pings for {config.ping_timeout_s:g} s",
        f"this document is version {PROTOCOL_VERSION}",
    ]
    missing = [phrase for phrase in phrases if phrase not in PROTOCOL_DOC]
    assert not missing, missing


def test_every_game_is_described_in_the_protocol_and_mqtt_docs() -> None:
    mqtt = (DOCS / "mqtt.md").read_text("utf-8")
    for game in GAMES:
        assert f"- **{game}** — " in PROTOCOL_DOC
        assert f"`{game}`" in mqtt


def test_documented_serve_options_exist() -> None:
    known = {f"--{o.name}" for o in OPTIONS} | {"--config", "--help", "--verbose"}
    known |= {f"--no-{o.name}" for o in OPTIONS if o.kind is bool}
    for doc in DOCS.glob("*.md"):
        for command in re.findall(r"arena serve[^`\n]*", doc.read_text("utf-8")):
            for option in re.findall(r"--[a-z][a-z-]*", command):
                assert option in known, f"{doc.name}: arena serve {option} does not exist"
    assert "prefix option" not in (DOCS / "mqtt.md").read_text("utf-8")


@pytest.mark.parametrize(
    ("move_ms", "bank_ms", "accepted"),
    [
        (49, 0, False),
        (50, 0, True),
        (600_000, 0, True),
        (600_001, 0, False),
        (1000, 3_600_000, True),
        (1000, 3_600_001, False),
    ],
)
async def test_the_documented_time_control_range_is_enforced(
    server: ArenaServer, bot: Any, move_ms: int, bank_ms: int, accepted: bool
) -> None:
    alice = await bot("alice")
    tc = {"move_ms": move_ms, "bank_ms": bank_ms}
    await alice.send(type="seek", game="connect4", time_control=tc, id="s")
    await alice.send(type="games", id="g")  # a round trip: the seek has been handled
    reply = await alice.recv()
    if accepted:
        assert reply.type == "games" and [s.bot for s in server.lobby.seeks] == ["alice"]
    else:
        assert reply.type == "error" and reply.code == "bad_value" and reply.ref == "s"


async def test_a_malformed_hello_gets_an_error_and_the_socket_stays_open(
    server: ArenaServer, connect_client: Any, tokens: dict[str, str]
) -> None:
    client = await connect_client()
    await client.send(type="hello", role="bot", name="alice", token=tokens["alice"])
    await client.expect_error("missing_field")
    await client.send(
        type="hello", role="bot", version=PROTOCOL_VERSION, name="alice", token=tokens["alice"]
    )
    assert isinstance(await client.recv(), Welcome)


async def test_an_internal_error_is_told_before_the_1011_close(
    server: ArenaServer, bot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = await bot("alice")

    def broken(*args: Any) -> None:
        raise RuntimeError("a bug")

    # Looked up at each message: the next one the connection delivers fails.
    monkeypatch.setattr(server.gateway, "_receive", broken)
    await alice.send(type="games")
    await alice.expect_error("internal")
    assert await alice.closed() == 1011


async def test_a_seek_starts_one_match_then_the_bot_seeks_again(
    server: ArenaServer, start_match: Any
) -> None:
    pair = await start_match(game="tictactoe")
    await pair.x.send(type="resign", match_id=pair.match_id)
    await pair.x.expect(MatchEnd)
    await pair.o.expect(MatchEnd)
    assert not server.lobby.seeks and len(server.registry) == 0
    await asyncio.sleep(0.1)  # several pairing windows: nothing starts by itself
    assert len(server.registry) == 0
    tc = {"move_ms": 2000, "bank_ms": 0}
    await pair.x.send(type="seek", game="tictactoe", time_control=tc)
    await pair.o.send(type="seek", game="tictactoe", time_control=tc)
    again = await pair.x.expect(MatchStart)
    assert again.match_id != pair.match_id


async def test_a_first_move_never_made_aborts_the_match_unrated(
    server: ArenaServer, start_match: Any
) -> None:
    pair = await start_match(game="connect4", move_ms=50)
    await pair.x.expect(YourTurn)  # and never answered
    end = await pair.o.expect(MatchEnd)
    assert (end.termination, end.result, end.fault, end.faulty_player, end.rated) == (
        "aborted",
        "*",
        None,
        None,
        False,
    )
    assert end.reason == f"{pair.names[0]} ran out of time before its first move; match aborted"


async def test_analysis_is_shown_live_and_stored_with_its_move(
    server: ArenaServer, start_match: Any, spectator: Any
) -> None:
    pair = await start_match(game="connect4")
    watcher = await spectator()
    await watcher.send(type="watch", match_id=pair.match_id)
    await watcher.expect(Snapshot)
    tree = [{"move": 3, "visits": 60, "value": 0.25}, {"move": 2, "visits": 30, "parent": 0}]
    analysis = {"simulations": 100, "value": 0.25, "tree": tree}
    await pair.x.move(await pair.x.expect(YourTurn), 3, analysis=analysis)
    await pair.o.expect(Moved)
    event = await watcher.expect(Event)
    assert event.analysis is not None and event.analysis.simulations == 100
    assert event.analysis.tree is not None and event.analysis.tree[1].parent == 0
    await pair.o.move(await pair.o.expect(YourTurn), 3)
    await pair.x.send(type="resign", match_id=pair.match_id)
    await pair.x.expect(MatchEnd)
    _, _, record = await http_get(server.port, f"/api/matches/{pair.match_id}")
    assert [m["move"] for m in record["moves"]] == [3, 3]
    assert [m["analysis"] for m in record["moves"]] == [{**analysis, "moves": []}, None]
