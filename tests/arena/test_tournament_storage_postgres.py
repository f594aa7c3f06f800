"""The tournament tables' SQL on PostgreSQL (SQLite runs it in every other tournament test)."""

from __future__ import annotations

from arena.store import Store
from arena.tournaments import storage
from arena.tournaments.openings import OpeningSuite
from arena.tournaments.settings import TournamentSettings
from protocol.games import Termination
from tests.arena.test_store_postgres import fresh_pg, pg_url  # noqa: F401  (fixtures)


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
