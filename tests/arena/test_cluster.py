"""One arena on several nodes: real ``arena serve`` processes on one PostgreSQL database (a
fresh database per session, emptied per test) and a private Mosquitto, real ``arena-bot``s.

Skipped, with the reason, where PostgreSQL is unreachable (``pg_url``).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from cluster_process import Node, Spectator, query, wait_for_rows
from mosquitto_fixture import MOSQUITTO, Mosquitto
from serve_process import Bot, add_bots, pair_up
from test_store_postgres import pg_url, reset  # noqa: F401  (pg_url is a fixture)
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from protocol.games import new_game
from protocol.messages import PROTOCOL_VERSION, CloseCode
from tests.bots.arena_process import start_bot, stop_processes

BOT_TIMEOUT_S = 60.0


@pytest.fixture
def db(pg_url: str) -> str:  # noqa: F811  (the imported fixture)
    reset(pg_url)
    return pg_url


async def play(
    bots: list[tuple[str, str, str, str]], tokens: dict[str, str], games: int
) -> dict[str, str]:
    """Run ``arena-bot`` NAME GAME on URLS (home first) with random moves for ``games`` matches;
    every bot must exit 0. Returns each bot's log."""
    procs = {
        name: await start_bot(urls, name, tokens[name], "--game", game, "--strategy", "random",
                              "--games", str(games), "--move-ms", move_ms)
        for name, game, urls, move_ms in bots
    }  # fmt: skip
    try:
        async with asyncio.timeout(BOT_TIMEOUT_S):
            logs = {}
            for name, proc in procs.items():
                _, err = await proc.communicate()
                logs[name] = err.decode()
                assert proc.returncode == 0, logs[name]
    finally:
        await stop_processes(*procs.values())
    for log in logs.values():
        assert f"{games} matches:" in log, log
    return logs


async def check_stored(db: str, expected: int) -> list[str]:
    """Every match finished, its moves replay to its result, its ratings changed once; the
    seek queue is empty. Returns the nodes that hosted them."""
    matches = await query(db, "SELECT id, game, result, node_id FROM matches ORDER BY started_at")
    assert len(matches) == expected
    for match in matches:
        moves = await query(db, "SELECT ply, move FROM moves WHERE match_id = $1 ORDER BY ply",
                            match["id"])  # fmt: skip
        assert [m["ply"] for m in moves] == list(range(len(moves)))
        outcome = new_game(match["game"]).play_all([m["move"] for m in moves]).outcome()
        assert outcome is not None and outcome.result == match["result"], match
        changes = await query(db, "SELECT count(*) FROM rating_history WHERE match_id = $1",
                              match["id"])  # fmt: skip
        assert changes[0][0] == 2
    assert await query(db, "SELECT * FROM seek_queue") == []
    return [match["node_id"] for match in matches]


async def test_bots_on_two_nodes_pair_across_them_and_every_match_is_stored_once(
    db: str, tmp_path: Path
) -> None:
    tokens = add_bots(db, tmp_path / "tokens", "a1", "a2", "b1", "b2")
    async with Node(tmp_path, db, "a") as a, Node(tmp_path, db, "b") as b:
        ab, ba = f"{a.url},{b.url}", f"{b.url},{a.url}"
        # One game per pair of nodes, so every match pairs a bot of node a with one of b.
        bots = [("a1", "connect4", ab, "2000"), ("b1", "connect4", ba, "2000"),
                ("a2", "tictactoe", ab, "2000"), ("b2", "tictactoe", ba, "2000")]  # fmt: skip
        logs = await play(bots, tokens, games=3)
        hosts = await check_stored(db, expected=6)
        assert set(hosts) <= {"a", "b"}
        # The first match of each pair moved one of its players to the hosting node (where
        # it stays, so their later matches need no move).
        for pair in (("a1", "b1"), ("a2", "b2")):
            assert any("redirected to ws://" in logs[name] for name in pair), logs
        status = [(await node.health())["cluster"] for node in (a, b)]
        assert [s["node"] for s in status] == ["a", "b"] and status[0]["public_url"] == a.url
        assert sum(s["redirected"] for s in status) >= 2
        assert not any(s["queued_seeks"] for s in status)
        assert await a.stop() == 0 and await b.stop() == 0
    assert await query(db, "SELECT id FROM nodes") == []  # both left cleanly


async def test_a_killed_node_s_matches_end_aborted_once_and_its_bots_play_on_elsewhere(
    db: str, tmp_path: Path
) -> None:
    tokens = add_bots(db, tmp_path / "tokens", "a1", "a2", "b1", "b2")
    # Paced moves keep matches live long enough to kill a node in the middle of one.
    async with (
        Node(tmp_path, db, "a", "--pace-ms", "120") as a,
        Node(tmp_path, db, "b", "--pace-ms", "120") as b,
        Node(tmp_path, db, "c", "--pace-ms", "120") as c,
    ):
        urls = {"a": f"{a.url},{b.url},{c.url}", "b": f"{b.url},{c.url},{a.url}"}
        bots = [(name, "connect4", urls[name[0]], "2000") for name in tokens]
        # a's bots first, so that they play each other on a; then b's.
        on_a = asyncio.ensure_future(play(bots[:2], tokens, games=2))
        live = "SELECT id FROM matches WHERE node_id = 'a' AND status = 'live'"
        killed = [row["id"] for row in await wait_for_rows(db, live)]
        on_b = asyncio.ensure_future(play(bots[2:], tokens, games=2))
        await a.kill()
        logs = {**await on_a, **await on_b}
        aborted = await query(
            db, "SELECT id, termination, fault, rated, reason FROM matches WHERE status = 'aborted'"
        )
        assert {row["id"] for row in aborted} >= set(killed)
        assert all(row["id"] not in killed or row["fault"] == "infrastructure" for row in aborted)
        assert all(not row["rated"] and row["termination"] == "aborted" for row in aborted)
        history = await query(db, "SELECT match_id FROM rating_history")
        assert not {row["match_id"] for row in history} & {row["id"] for row in aborted}
        # Exactly once: the two survivors' sweeps ended each of a's live matches once between them.
        ended = [int(n) for node in (b, c) for n in re.findall(r"ended (\d+) matches", node.log())]
        assert sum(ended) == len(aborted), (b.log(), c.log())
        # a's bots failed over and played their games on b and c.
        for name in ("a1", "a2"):
            assert f"connection to {a.url} failed or dropped" in logs[name]
        after = await query(
            db, "SELECT count(*) FROM matches WHERE status = 'finished' AND node_id <> 'a' "
            "AND started_at > (SELECT max(ended_at) FROM matches WHERE status = 'aborted')"
        )  # fmt: skip
        assert after[0][0] >= 1


@pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed")
async def test_a_spectator_on_one_node_watches_and_resumes_a_match_hosted_by_another(
    db: str, tmp_path: Path
) -> None:
    tokens = add_bots(db, tmp_path / "tokens", "x", "o")
    broker = Mosquitto(tmp_path)
    broker.start()
    try:
        async with (
            Node(tmp_path, db, "a", "--pace-ms", "100", "--mqtt", broker.url) as a,
            Node(tmp_path, db, "b", "--mqtt", broker.url) as b,
        ):
            bots = [(name, "connect4", a.url, "2000") for name in tokens]  # both play on a
            playing = asyncio.ensure_future(play(bots, tokens, games=1))
            rows = await wait_for_rows(db, "SELECT id FROM matches WHERE status = 'live'")
            match_id = rows[0]["id"]
            # On b: the snapshot from the broker's retained state, then a's numbered events.
            on_b = await Spectator.watch(b.url, match_id)
            snapshot = await on_b.next()
            assert snapshot["type"] == "snapshot" and snapshot["match_id"] == match_id
            seen = snapshot["last_event"]
            for _ in range(2):
                event = await on_b.next()
                assert event["type"] == "event" and event["seq"] == seen + 1
                seen = event["seq"]
            await on_b.close()
            # Resumed on a, the host, after the last event seen on b; then on b again.
            for node in (a, b):
                spectator = await Spectator.watch(node.url, match_id, since=seen)
                event = await spectator.next()
                assert event["type"] == "event" and event["seq"] == seen + 1, event
                seen = event["seq"]
                if node is b:
                    while event["kind"] != "match_end":
                        event = await spectator.next()
                        assert event["seq"] == seen + 1
                        seen = event["seq"]
                await spectator.close()
            await playing
    finally:
        broker.kill()


async def test_a_bot_that_says_hello_to_another_node_is_redirected_to_its_match(
    db: str, tmp_path: Path
) -> None:
    tokens = add_bots(db, tmp_path / "tokens", "x", "o")
    async with Node(tmp_path, db, "a") as a, Node(tmp_path, db, "b") as b:
        x, o = [await Bot.login(a.url, name, tokens[name]) for name in ("x", "o")]
        await pair_up(x, o, game="connect4")
        [row] = await wait_for_rows(db, "SELECT id, node_id FROM matches WHERE status = 'live'")
        assert row["node_id"] == "a"
        await o.ws.close()
        # On b, o's hello is answered with where its match is, and the connection closed.
        ws = await connect(b.url)
        await ws.send(json.dumps({"type": "hello", "role": "bot", "version": PROTOCOL_VERSION,
                                  "name": "o", "token": tokens["o"]}))  # fmt: skip
        redirect = json.loads(await ws.recv())
        assert redirect["type"] == "redirect", redirect
        assert (redirect["url"], redirect["match_id"]) == (a.url, row["id"])
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == CloseCode.REDIRECTED
        # There, the match goes on.
        again = await Bot.login(a.url, "o", tokens["o"])
        assert (await again.expect("match_start"))["match_id"] == row["id"]
        await again.ws.close()
        await x.ws.close()


async def test_no_bot_is_redirected_to_a_node_whose_heartbeat_is_late(
    db: str, tmp_path: Path
) -> None:
    tokens = add_bots(db, tmp_path / "tokens", "x", "o")
    async with Node(tmp_path, db, "a") as a, Node(tmp_path, db, "b") as b:
        x, o = [await Bot.login(a.url, name, tokens[name]) for name in ("x", "o")]
        await pair_up(x, o, game="connect4")
        await wait_for_rows(db, "SELECT id FROM matches WHERE status = 'live' AND node_id = 'a'")
        await o.ws.close()
        a.pause()  # on this machine a stopped process keeps its lease: only its heartbeat says
        try:
            late = "SELECT id FROM nodes WHERE id = 'a' AND heartbeat_at < clock_timestamp()"
            await wait_for_rows(db, f"{late} - interval '6.5 seconds'", timeout=30)
            # On b, o is welcomed (it may play there), not sent to a node that may be dead.
            again = await Bot.login(b.url, "o", tokens["o"])
            await again.ws.close()
            assert "not redirecting o to node a: its heartbeat is late" in b.log()
        finally:
            a.resume()
        await x.ws.close()


@pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto is not installed")
async def test_spectators_elsewhere_see_a_dead_node_s_match_end_aborted(
    db: str, tmp_path: Path
) -> None:
    tokens = add_bots(db, tmp_path / "tokens", "x", "o")
    broker = Mosquitto(tmp_path)
    broker.start()
    try:
        async with (
            Node(tmp_path, db, "a", "--pace-ms", "150", "--mqtt", broker.url) as a,
            Node(tmp_path, db, "b", "--mqtt", broker.url) as b,
        ):
            bots = [(name, "connect4", f"{a.url},{b.url}", "2000") for name in tokens]
            playing = asyncio.ensure_future(play(bots, tokens, games=1))
            rows = await wait_for_rows(db, "SELECT id FROM matches WHERE status = 'live'")
            spectator = await Spectator.watch(b.url, rows[0]["id"])
            assert (await spectator.next())["type"] == "snapshot"
            seen = (await spectator.next())["seq"]  # a move, then the host dies
            await a.kill()
            while (event := await spectator.next(timeout=15.0))["kind"] == "moved":
                seen = event["seq"]  # published just before it died
            assert event["type"] == "event" and event["kind"] == "match_end", event
            assert event["seq"] == seen + 1 and event["end"]["termination"] == "aborted"
            assert event["end"]["fault"] == "infrastructure" and not event["end"]["rated"]
            await spectator.close()
            await playing  # the bots play their match on b instead
    finally:
        broker.kill()
