"""Tournaments on a multi-node arena: real ``arena serve`` nodes on one PostgreSQL database
(a fresh database per session, emptied per test), real ``arena-bot --worker`` processes.

The tournament is created on node a (which runs it); its games are played on whichever
node has workers of both bots free, and each is counted once.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from cluster_process import Node, query, wait_for_rows
from serve_process import add_bots, arena
from test_store_postgres import pg_url, reset  # noqa: F401  (pg_url is a fixture)

from tests.bots.arena_process import start_bot, stop_processes

GAME = "tictactoe"
FINISH_TIMEOUT_S = 120.0


@pytest.fixture
def db(pg_url: str) -> str:  # noqa: F811  (the imported fixture)
    reset(pg_url)
    return pg_url


async def create_on(node: Node, db: str, *settings: str) -> int:
    """Create a tournament of alice and bob with ``settings`` through ``node``'s API (it
    runs it); its id."""
    created = await asyncio.to_thread(
        arena, "tournament", "create", "--db", db, "--game", GAME, "--bots", "alice,bob",
        "--move-ms", "5000", "--openings", "none", *settings,
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert f"on the server at http://127.0.0.1:{node.port}" in created.stdout, created.stdout
    tournament_id = int(created.stdout.split()[2])
    rows = await query(db, "SELECT node_id FROM tournaments WHERE id = $1", tournament_id)
    assert rows[0]["node_id"] == node.node_id
    return tournament_id


async def workers(urls: str, tokens: dict[str, str], count: int) -> list[Any]:
    """``count`` ``arena-bot --worker`` processes of each of alice and bob (one seat each)."""
    return [
        await start_bot(urls, name, tokens[name], "--game", GAME, "--move-ms", "5000",
                        "--strategy", f"random:seed={seed}", "--worker", "--no-seek",
                        "--max-matches", "1")
        for seed, name in enumerate(["alice", "bob"] * count)
    ]  # fmt: skip


async def wait_finished(db: str, tournament_id: int, *nodes: Node) -> None:
    """Poll the tournament's row until it is finished (bounded generously)."""
    sql = "SELECT status FROM tournaments WHERE id = $1"
    try:
        async with asyncio.timeout(FINISH_TIMEOUT_S):
            while (await query(db, sql, tournament_id))[0]["status"] != "finished":
                await asyncio.sleep(0.2)
    except TimeoutError:
        raise AssertionError("\n".join(node.log()[-4000:] for node in nodes)) from None


async def check_counted_once(db: str, tournament_id: int, games: int) -> list[str]:
    """Each slot has exactly one finished match, every one counted; the hosts of those."""
    rows = await query(
        db, "SELECT tournament_pair, player0_id, count(*) AS n FROM matches"
        " WHERE tournament_id = $1 AND status = 'finished' GROUP BY tournament_pair, player0_id",
        tournament_id,
    )  # fmt: skip
    assert len(rows) == games and {row["n"] for row in rows} == {1}, rows
    status = await asyncio.to_thread(
        arena, "tournament", "status", str(tournament_id), "--db", db, "--json"
    )
    assert status.returncode == 0, status.stderr
    assert f'"counted": {games}' in status.stdout
    assert await query(db, "SELECT * FROM tournament_claims WHERE ended = false") == []
    hosts = await query(
        db, "SELECT node_id FROM matches WHERE tournament_id = $1 AND status = 'finished'",
        tournament_id,
    )  # fmt: skip
    return [row["node_id"] for row in hosts]


async def test_games_are_played_on_the_node_the_workers_are_connected_to(
    db: str, tmp_path: Path
) -> None:
    tokens = add_bots(db, tmp_path / "tokens", "alice", "bob")
    async with Node(tmp_path, db, "a") as a:
        tournament_id = await create_on(a, db, "--games-per-pair", "8", "--concurrency", "2")
        async with Node(tmp_path, db, "b") as b:
            procs = await workers(b.url, tokens, count=2)  # connected to b only
            try:
                await wait_finished(db, tournament_id, a, b)
            finally:
                await stop_processes(*procs)
            hosts = await check_counted_once(db, tournament_id, games=8)
            assert set(hosts) == {"b"}
            # a ran it (and finished it): its row says so.
            rows = await query(db, "SELECT node_id FROM tournaments WHERE id = $1", tournament_id)
            assert rows[0]["node_id"] == "a"
            assert "finished: 8 games" in a.log()
            assert await b.stop() == 0
        assert await a.stop() == 0


async def test_workers_on_both_nodes_share_the_games_within_the_concurrency(
    db: str, tmp_path: Path
) -> None:
    tokens = add_bots(db, tmp_path / "tokens", "alice", "bob")
    # Paced moves make games last a while, so both nodes play some of them.
    async with Node(tmp_path, db, "a", "--pace-ms", "60") as a:
        tournament_id = await create_on(a, db, "--games-per-pair", "16", "--concurrency", "3")
        async with Node(tmp_path, db, "b", "--pace-ms", "60") as b:
            procs = [*await workers(a.url, tokens, count=2), *await workers(b.url, tokens, count=2)]
            try:
                # The live games never exceed the concurrency, across both nodes.
                most = 0
                sql = "SELECT status FROM tournaments WHERE id = $1"
                live = "SELECT count(*) FROM matches WHERE tournament_id = $1 AND status = 'live'"
                async with asyncio.timeout(FINISH_TIMEOUT_S):
                    while (await query(db, sql, tournament_id))[0]["status"] != "finished":
                        most = max(most, (await query(db, live, tournament_id))[0][0])
                        await asyncio.sleep(0.05)
            finally:
                await stop_processes(*procs)
            hosts = await check_counted_once(db, tournament_id, games=16)
            assert set(hosts) == {"a", "b"}, hosts
            assert 1 <= most <= 3
            assert await b.stop() == 0
        assert await a.stop() == 0


async def test_a_killed_node_s_games_are_aborted_and_played_again_elsewhere(
    db: str, tmp_path: Path
) -> None:
    tokens = add_bots(db, tmp_path / "tokens", "alice", "bob")
    # Paced moves keep games live long enough to kill b in the middle of one.
    async with Node(tmp_path, db, "a", "--pace-ms", "100") as a:
        tournament_id = await create_on(a, db, "--games-per-pair", "6", "--concurrency", "2")
        b = await Node(tmp_path, db, "b", "--pace-ms", "100").start()
        procs = await workers(f"{b.url},{a.url}", tokens, count=2)  # b first, a to fail over to
        try:
            live = "SELECT id FROM matches WHERE node_id = 'b' AND status = 'live'"
            killed = {row["id"] for row in await wait_for_rows(db, live)}
            await b.kill()
            await wait_finished(db, tournament_id, a)
        finally:
            await stop_processes(*procs)
        hosts = await check_counted_once(db, tournament_id, games=6)
        assert "a" in hosts  # the games left (the killed ones among them) were played on a
        aborted = await query(
            db, "SELECT id, fault FROM matches WHERE tournament_id = $1 AND status = 'aborted'",
            tournament_id,
        )  # fmt: skip
        assert killed <= {row["id"] for row in aborted}
        assert {row["fault"] for row in aborted} == {"infrastructure"}
        assert "finished: 6 games" in a.log()
        assert await a.stop() == 0


async def test_an_sprt_played_on_another_node_is_judged_and_finished_once(
    db: str, tmp_path: Path
) -> None:
    tokens = add_bots(db, tmp_path / "tokens", "alice", "bob")
    async with Node(tmp_path, db, "a") as a:
        sprt = ("--format", "sprt", "--elo0", "0", "--elo1", "5", "--max-games", "8")
        tournament_id = await create_on(a, db, *sprt, "--concurrency", "2")
        async with Node(tmp_path, db, "b") as b:
            procs = await workers(b.url, tokens, count=2)
            try:
                await wait_finished(db, tournament_id, a, b)
            finally:
                await stop_processes(*procs)
            hosts = await check_counted_once(db, tournament_id, games=8)
            assert set(hosts) == {"b"}
            row = await query(
                db, "SELECT verdict, verdict_games FROM tournaments WHERE id = $1", tournament_id
            )
            assert (row[0]["verdict"], row[0]["verdict_games"]) == ("max-games", 8)
            finished = f"tournament {tournament_id} finished"
            assert a.log().count(finished) == 1 and finished not in b.log()
            assert await b.stop() == 0
        assert await a.stop() == 0
