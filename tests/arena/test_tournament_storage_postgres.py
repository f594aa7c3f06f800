"""The tournament tables' SQL on PostgreSQL (SQLite runs it in every other tournament test)."""

from __future__ import annotations

from arena.store import Store
from arena.tournaments import storage
from arena.tournaments.openings import OpeningSuite
from arena.tournaments.settings import TournamentSettings
from protocol.games import Termination
from tests.arena.test_store_postgres import fresh_pg, pg_url, two_nodes  # noqa: F401  (fixtures)


async def test_a_tournament_round_trips_through_postgres(fresh_pg: str) -> None:  # noqa: F811
    store = await Store.open(fresh_pg)
    try:
        node = await store.claim_node()
        for name in ("alice", "bob", "carol"):
            await store.add_bot(name)
        settings = TournamentSettings(
            game="connect4", format="round-robin", bots=("alice", "bob", "carol"),
            games_per_pair=2, openings="test",
        )  # fmt: skip
        tables = store.tournaments
        tid = await storage.insert_tournament(
            tables, settings, OpeningSuite("test", ((3,), (3, 3)))
        )
        adopted = await tables.adopt(tid, node)
        assert adopted is not None and adopted.row.status == "running"
        state = await storage.load_state(tables, tid)
        assert state.status == "running" and state.started_at is not None
        pair = state.pairs[0]
        first, second = (settings.bots[s] for s in pair.seats(0))
        opening = state.openings[pair.opening]
        match_id = await store.open_match(
            "connect4", (first, second), 1000, 0, opening=opening, tournament=(tid, pair.number)
        )
        for ply, move in enumerate(opening):  # the opening, as the referee records it
            store.record_move(match_id, ply, ply % 2, move, 0, 0)
        await store.finish_match(match_id, 0, Termination.LINE, None, True, "test")
        await store.remove_bot("carol")
        assert await tables.remove_inactive(tid) == [2]
        assert await tables.remove_inactive(tid) == []
        assert await tables.change_status(tid, "pause") == "paused"
        state = await storage.load_state(tables, tid)
        listed = await storage.list_tournaments(tables)
        exported = await storage.export_games(tables, tid)
        assert state.results[(pair.number, 0)].match_id == match_id
        assert state.results[(pair.number, 0)].score_a == 1.0
        assert state.removed == [False, False, True] and state.status == "paused"
        assert listed[0]["games"] == 1 and listed[0]["total"] == 6
        assert exported[0]["moves"] == list(opening)
        assert exported[0]["opening"] == " ".join(map(str, opening))
    finally:
        await store.close()


async def test_adopting_is_one_transaction_that_another_live_node_cannot_take(
    two_nodes: tuple[Store, Store],  # noqa: F811
) -> None:
    """``TournamentTables.adopt``: the node that claims a tournament also marks its removed
    bots and starts it; another live node gets None and changes nothing."""
    first, second = two_nodes
    node_a = await first.claim_node("node-a", allow_multi_node=True)
    node_b = await second.claim_node("node-b", allow_multi_node=True)
    for name in ("alice", "bob", "carol"):
        await first.add_bot(name)
    settings = TournamentSettings(
        game="connect4", format="round-robin", bots=("alice", "bob", "carol"),
        games_per_pair=2, openings="test",
    )  # fmt: skip
    tid = await storage.insert_tournament(
        first.tournaments, settings, OpeningSuite("test", ((3,),))
    )
    await first.remove_bot("carol")
    adopted = await second.tournaments.adopt(tid, node_b)
    assert adopted is not None
    assert adopted.row.status == "running" and adopted.row.started_at is not None
    assert [seat.removed for seat in adopted.seats] == [False, False, True]
    assert await first.tournaments.adopt(tid, node_a) is None
    state = await storage.load_state(first.tournaments, tid)
    assert state.status == "running" and state.removed == [False, False, True]
    assert state.started_at == storage.state_of(adopted).started_at
    # The node that holds it adopts it again (a restart's reload): nothing restarts.
    again = await second.tournaments.adopt(tid, node_b)
    assert again is not None and again.row.started_at == adopted.row.started_at


async def test_claims_keep_a_slot_to_one_node_hold_the_concurrency_and_are_collected(
    two_nodes: tuple[Store, Store],  # noqa: F811
) -> None:
    """``claim_slot``, ``release_slot``, ``collect_claims`` and ``finish`` between two nodes."""
    first, second = two_nodes
    node_a = await first.claim_node("node-a", allow_multi_node=True)
    node_b = await second.claim_node("node-b", allow_multi_node=True)
    assert first.shared and second.shared
    for name in ("alice", "bob"):
        await first.add_bot(name)
    settings = TournamentSettings(
        game="connect4", format="round-robin", bots=("alice", "bob"), games_per_pair=4,
        concurrency=2, openings="test",
    )  # fmt: skip
    a, b = first.tournaments, second.tournaments
    tid = await storage.insert_tournament(a, settings, OpeningSuite("test", ((3,),)))
    assert await b.claim_slot(tid, 0, 0, 0, node_b) is None  # pending: not running yet
    assert await a.adopt(tid, node_a) is not None
    state = await storage.load_state(a, tid)
    first_seat = {key: state.pairs[key[0]].seats(key[1])[0] for key in ((0, 0), (0, 1), (1, 0))}
    on_b = await b.claim_slot(tid, 0, 0, first_seat[(0, 0)], node_b)
    assert on_b is not None
    assert await a.claim_slot(tid, 0, 0, first_seat[(0, 0)], node_a) is None  # b holds it
    on_a = await a.claim_slot(tid, 0, 1, first_seat[(0, 1)], node_a)
    assert on_a is not None
    assert await b.claim_slot(tid, 1, 0, first_seat[(1, 0)], node_b) is None  # concurrency 2
    read = await a.collect_claims(tid, node_a)
    assert read.elsewhere == [(0, 0)] and read.ended == []
    assert not await a.finish(tid, node_a)  # b plays a game of it
    # b plays its game (a finished match of the slot) and hands the claim back.
    players = state.players((0, 0))
    match_id = await second.open_match("connect4", players, 1000, 0, tournament=(tid, 0))
    await second.finish_match(match_id, 0, Termination.LINE, None, True, "test")
    await b.release_slot(on_b, ended=True)
    assert await b.claim_slot(tid, 0, 0, first_seat[(0, 0)], node_b) is None  # finished there
    read = await a.collect_claims(tid, node_a)
    assert read.elsewhere == [] and [game.match_id for game in read.ended] == [match_id]
    assert (await a.collect_claims(tid, node_a)).ended == []  # collected once
    await a.release_slot(on_a, ended=False)
    assert await a.finish(tid, node_a, ended_at=storage.now())
    assert (await storage.load_state(a, tid)).status == "finished"
    assert await b.claim_slot(tid, 1, 0, first_seat[(1, 0)], node_b) is None  # finished
