"""The Store against a real SQLite file and, where reachable, a real PostgreSQL database."""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import event, func, select, text
from sqlalchemy.engine import Connection
from test_store_postgres import pg_url, reset  # noqa: F401  (pg_url is a fixture)

from arena.errors import (
    BotExistsError,
    DatabaseOpenError,
    MatchAlreadyFinishedError,
    NoSuchBotError,
    NoSuchMatchError,
    StoreError,
)
from arena.store import (
    LeaderboardRow,
    MoveRecord,
    RatingChange,
    RatingHistoryEntry,
    Store,
)
from arena.store.models import Move
from arena.store.searches import STORED_MOVES, STORED_TEXT_BYTES, search_text
from arena.store.tokens import random_text
from protocol.games import Fault, Termination
from protocol.messages import Analysis, MoveStat, TreeNode, parse_client_message
from protocol.messages import Move as MoveMessage
from protocol.messages.codes import MAX_ANALYSIS_MOVES, MAX_COUNT, MAX_MOVE, MAX_PLY
from protocol.messages.search import MAX_TREE_NODES

GAME = "connect4"


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database: a SQLite file, or the session's PostgreSQL database emptied."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"
        return
    url = request.getfixturevalue("pg_url")
    reset(url)
    yield url


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    """An open store with its default group-commit settings."""
    opened = await Store.open(db_url)
    yield opened
    await opened.close()


@pytest.fixture
async def slow_store(db_url: str) -> AsyncIterator[Store]:
    """A store whose flusher never fires on its own during a test."""
    opened = await Store.open(db_url, flush_interval=60.0)
    yield opened
    await opened.close()


async def add_bots(store: Store, *names: str) -> dict[str, str]:
    return {name: await store.add_bot(name) for name in names}


async def stored_moves(store: Store, match_id: str | None = None) -> int:
    """Moves actually in the database (not in the buffer)."""
    query = select(func.count()).select_from(Move)
    if match_id is not None:
        query = query.where(Move.match_id == match_id)
    async with store.engine.connect() as connection:
        return int((await connection.execute(query)).scalar_one())


async def play(store: Store, match_id: str, plies: int) -> None:
    for ply in range(plies):
        store.record_move(match_id, ply, ply % 2, ply % 7, 10 + ply, 2)


# Bots ------------------------------------------------------------------------


async def test_add_and_authenticate(store: Store) -> None:
    tokens = await add_bots(store, "alpha", "beta")
    assert tokens["alpha"] != tokens["beta"]
    assert len(tokens["alpha"]) >= 43
    bot = await store.authenticate("alpha", tokens["alpha"])
    assert bot is not None
    assert (bot.name, bot.active) == ("alpha", True)
    assert await store.authenticate("alpha", tokens["beta"]) is None
    assert await store.authenticate("nobody", tokens["alpha"]) is None
    assert [b.name for b in await store.list_bots()] == ["alpha", "beta"]


async def test_authenticate_caches_the_bots_ratings(db_url: str, store: Store) -> None:
    tokens = await add_bots(store, "alpha", "beta")
    match_id = await store.create_match(GAME, ("alpha", "beta"), 1000, 0)
    await play(store, match_id, 7)
    await store.finish_match(match_id, 0, Termination.LINE, None, True)
    # A second store over the same database (a restarted server) knows nothing yet.
    fresh = await Store.open(db_url)
    try:
        assert fresh.cached_rating("alpha", GAME) == (False, None)
        assert await fresh.authenticate("alpha", tokens["beta"]) is None
        assert fresh.cached_rating("alpha", GAME) == (False, None)  # a failed login reads none
        assert await fresh.authenticate("alpha", tokens["alpha"]) is not None
        assert fresh.cached_rating("alpha", GAME) == (True, 1516.0)
        assert fresh.cached_rating("alpha", "tictactoe") == (True, None)  # not rated there
        assert fresh.cached_rating("beta", GAME) == (False, None)
    finally:
        await fresh.close()


async def test_duplicate_and_bad_names(store: Store) -> None:
    await store.add_bot("alpha")
    with pytest.raises(BotExistsError):
        await store.add_bot("alpha")
    for bad in ("", " padded ", "x" * 65):
        with pytest.raises(ValueError):
            await store.add_bot(bad)


async def test_token_is_stored_only_as_its_hash(store: Store) -> None:
    token = await store.add_bot("alpha")
    async with store.engine.connect() as connection:
        rows = (await connection.execute(text("SELECT * FROM bots"))).all()
    assert len(rows) == 1
    values = [str(value) for value in rows[0]]
    assert not any(token in value for value in values)
    assert hashlib.sha256(token.encode()).hexdigest() in values


def test_tokens_and_match_ids_never_start_with_a_dash() -> None:
    # argparse would read "--token -x..." or "arena watch -x..." as an option.
    # One token_urlsafe draw in 64 starts with "-": in 20,000 draws the old
    # code fails this with certainty (the chance of no "-" is about 1e-137).
    first = {random_text(1)[0] for _ in range(20_000)}
    assert "-" not in first
    assert len(first) == 63  # every other URL-safe character still occurs
    assert len(random_text(32)) == 43


async def test_remove_bot_disables_but_keeps_history(store: Store) -> None:
    tokens = await add_bots(store, "alpha", "beta", "gamma")
    match_id = await store.create_match(GAME, ("alpha", "beta"), 1000, 10_000)
    await store.finish_match(match_id, 0, Termination.LINE, None, True)
    assert await store.remove_bot("alpha") is True
    assert await store.remove_bot("alpha") is False
    assert await store.remove_bot("nobody") is False
    assert await store.authenticate("alpha", tokens["alpha"]) is None
    assert [b.name for b in await store.list_bots()] == ["beta", "gamma"]
    everyone = await store.list_bots(include_inactive=True)
    assert [(b.name, b.active) for b in everyone] == [
        ("alpha", False),
        ("beta", True),
        ("gamma", True),
    ]
    assert [row.bot for row in await store.leaderboard(GAME)] == ["beta"]
    assert len(await store.rating_history("alpha", GAME)) == 1
    match = await store.get_match(match_id)
    assert match is not None
    assert match.players == ("alpha", "beta")
    with pytest.raises(NoSuchBotError):
        await store.create_match(GAME, ("alpha", "gamma"), 1000, 10_000)
    with pytest.raises(BotExistsError):
        await store.add_bot("alpha")


# Matches and moves -----------------------------------------------------------


async def test_create_match(store: Store) -> None:
    await add_bots(store, "alpha", "beta")
    with pytest.raises(NoSuchBotError):
        await store.create_match(GAME, ("alpha", "nobody"), 1000, 10_000)
    ids = {await store.create_match(GAME, ("alpha", "beta"), 1000, 10_000) for _ in range(30)}
    assert len(ids) == 30
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{8,16}", match_id) for match_id in ids)
    match = await store.get_match(ids.pop())
    assert match is not None
    assert (match.status, match.rated, match.winner, match.result) == ("live", True, None, None)
    assert (match.move_ms, match.bank_ms, match.ended_at) == (1000, 10_000, None)
    assert await store.get_match("no-such-id") is None


async def test_moves_wait_for_group_commit_then_flush(slow_store: Store) -> None:
    await add_bots(slow_store, "alpha", "beta")
    match_id = await slow_store.create_match(GAME, ("alpha", "beta"), 1000, 10_000)
    played_from = datetime.now(UTC)
    await play(slow_store, match_id, 10)
    assert await stored_moves(slow_store) == 0
    # Readers still see the buffered moves.
    match = await slow_store.get_match(match_id)
    assert match is not None
    assert [m.ply for m in match.moves] == list(range(10))
    await slow_store.flush()
    assert await stored_moves(slow_store, match_id) == 10
    match = await slow_store.get_match(match_id)
    assert match is not None
    assert match.moves[3] == MoveRecord(ply=3, player=1, move=3, think_ms=13, rtt_ms=2)
    # The buffer keeps a plain timestamp; the row gets it as the time the move was played.
    async with slow_store.engine.connect() as connection:
        played = (await connection.execute(select(Move.played_at))).scalars().all()
    assert len(played) == 10
    for at in played:
        at = at if at.tzinfo else at.replace(tzinfo=UTC)  # SQLite keeps no zone
        assert played_from - timedelta(seconds=1) <= at <= datetime.now(UTC)


async def test_background_flusher_writes_within_the_interval(db_url: str) -> None:
    store = await Store.open(db_url, flush_interval=0.02)
    try:
        await add_bots(store, "alpha", "beta")
        match_id = await store.create_match(GAME, ("alpha", "beta"), 1000, 10_000)
        await play(store, match_id, 7)
        async with asyncio.timeout(5):
            while await stored_moves(store) < 7:
                await asyncio.sleep(0.01)
    finally:
        await store.close()


async def test_full_batch_is_written_without_waiting_for_the_interval(db_url: str) -> None:
    store = await Store.open(db_url, flush_interval=60.0, flush_batch=8)
    try:
        await add_bots(store, "alpha", "beta")
        match_id = await store.create_match(GAME, ("alpha", "beta"), 1000, 10_000)
        await play(store, match_id, 8)
        async with asyncio.timeout(5):
            while await stored_moves(store) < 8:
                await asyncio.sleep(0.01)
    finally:
        await store.close()


async def test_close_writes_pending_moves(db_url: str) -> None:
    store = await Store.open(db_url, flush_interval=60.0)
    await add_bots(store, "alpha", "beta")
    match_id = await store.create_match(GAME, ("alpha", "beta"), 1000, 10_000)
    await play(store, match_id, 5)
    await store.close()
    with pytest.raises(StoreError):
        store.record_move(match_id, 5, 1, 0, 1, 1)
    reopened = await Store.open(db_url)
    try:
        assert await stored_moves(reopened, match_id) == 5
    finally:
        await reopened.close()


async def test_moves_of_an_unknown_match_do_not_block_the_others(slow_store: Store) -> None:
    await add_bots(slow_store, "alpha", "beta")
    match_id = await slow_store.create_match(GAME, ("alpha", "beta"), 1000, 10_000)
    slow_store.record_move("no-such-match", 0, 0, 1, 1, 1)
    await play(slow_store, match_id, 4)
    await slow_store.flush()
    assert await stored_moves(slow_store) == 4


async def test_a_moves_analysis_is_stored_with_it_bounded(slow_store: Store) -> None:
    await add_bots(slow_store, "alpha", "beta")
    match_id = await slow_store.create_match(GAME, ("alpha", "beta"), 1000, 0)
    # More candidates than are kept: the most visited ones stay, in the bot's order.
    stats = tuple(MoveStat(move=m % 7, visits=(m * 37) % 20, value=0.5) for m in range(20))
    tree = (TreeNode(3, 9, 0.25), TreeNode(2, 4, -0.5, parent=0))
    analysis = Analysis(simulations=100, value=0.125, moves=stats, tree=tree)
    slow_store.record_move(match_id, 0, 0, 3, 10, 1, analysis)
    slow_store.record_move(match_id, 1, 1, 4, 10, 1)
    kept = sorted(stats, key=lambda s: -s.visits)[:STORED_MOVES]
    want = {**analysis.to_dict(), "moves": [s.to_dict() for s in kept]}
    for stored in (False, True):  # from the buffer, then from the database
        assert await stored_moves(slow_store, match_id) == (2 if stored else 0)
        record = await slow_store.get_match(match_id)
        assert record is not None
        assert [m.analysis for m in record.moves] == [want, None]
        await slow_store.flush()


def sent_analysis(report: str) -> Analysis:
    """The analysis of a compact move frame carrying ``report``, as the server parses it."""
    frame = f'{{"type":"move","match_id":"m1","ply":0,"move":3,"analysis":{report}}}'
    move = parse_client_message(frame)
    assert isinstance(move, MoveMessage) and move.analysis is not None
    return move.analysis


def test_a_compact_report_is_stored_as_sent_and_any_other_written_bounded() -> None:
    # A JavaScript bot's 1 for 1.0: kept as sent, not decoded and written again.
    sent = '{"simulations":9,"value":1,"moves":[{"move":3,"visits":9,"value":1}]}'
    assert search_text(sent_analysis(sent)) == sent
    # Digits beyond a float's: valid, parsed, but longer than a stored text may be.
    padded = sent.replace('"value":1,', '"value":0.' + "1" * STORED_TEXT_BYTES + ",", 1)
    written = search_text(sent_analysis(padded))
    assert written is not None and len(written) < 200
    assert written.startswith('{"simulations":9,"value":0.1111111111111111,"moves"')
    # Over the candidate cap: trimmed, so written again whatever came in.
    stats = ",".join(f'{{"move":{m},"visits":{m}}}' for m in range(STORED_MOVES + 4))
    trimmed = search_text(sent_analysis(f'{{"moves":[{stats}]}}'))
    assert trimmed is not None and trimmed.count('"move"') == STORED_MOVES
    assert '"visits":0}' not in trimmed


def test_no_valid_report_is_written_longer_than_a_text_kept_as_sent() -> None:
    # Every field present and every number at its longest: the bound of a stored text.
    longest = -0.12345678901234567e-300
    stats = tuple(MoveStat(MAX_MOVE, MAX_COUNT, longest) for _ in range(STORED_MOVES + 1))
    tree = tuple(
        TreeNode(MAX_MOVE, MAX_COUNT, longest, MAX_TREE_NODES - 1 if i else None)
        for i in range(MAX_TREE_NODES)
    )
    pv = (MAX_MOVE,) * MAX_ANALYSIS_MOVES
    big = 1.2345678901234567e300
    analysis = Analysis(MAX_COUNT, big, longest, MAX_PLY, stats, MAX_COUNT, big, pv, tree)
    written = search_text(analysis)
    assert written is not None and 8000 < len(written) <= STORED_TEXT_BYTES


# Finishing -------------------------------------------------------------------


async def test_finish_commits_moves_result_and_ratings(slow_store: Store) -> None:
    await add_bots(slow_store, "alpha", "beta")
    match_id = await slow_store.create_match(GAME, ("alpha", "beta"), 1000, 10_000)
    await play(slow_store, match_id, 7)
    changes = await slow_store.finish_match(
        match_id, 0, Termination.LINE, None, True, reason="four in a row"
    )
    assert changes == [RatingChange("alpha", 1500.0, 1516.0), RatingChange("beta", 1500.0, 1484.0)]
    assert changes[0].delta == 16.0
    # The pending moves went in with the result, not with a later flush.
    assert await stored_moves(slow_store, match_id) == 7
    match = await slow_store.get_match(match_id)
    assert match is not None
    assert (match.status, match.winner, match.result) == ("finished", 0, "1-0")
    assert (match.termination, match.fault, match.reason) == ("line", None, "four in a row")
    assert match.ended_at is not None and match.ended_at >= match.started_at
    assert match.rating_changes == changes
    assert len(match.moves) == 7
    board = await slow_store.leaderboard(GAME)
    assert [(r.rank, r.bot, r.rating, r.games, r.wins, r.draws, r.losses) for r in board] == [
        (1, "alpha", 1516.0, 1, 1, 0, 0),
        (2, "beta", 1484.0, 1, 0, 0, 1),
    ]
    history = await slow_store.rating_history("beta", GAME)
    assert [(h.match_id, h.before, h.after) for h in history] == [(match_id, 1500.0, 1484.0)]


async def test_second_finish_raises_and_changes_nothing(store: Store) -> None:
    await add_bots(store, "alpha", "beta")
    match_id = await store.create_match(GAME, ("alpha", "beta"), 1000, 10_000)
    await store.finish_match(match_id, 1, Termination.TIMEOUT, Fault.BOT, True)
    with pytest.raises(MatchAlreadyFinishedError):
        await store.finish_match(match_id, 0, Termination.LINE, None, True)
    with pytest.raises(NoSuchMatchError):
        await store.finish_match("no-such-match", 0, Termination.LINE, None, True)
    with pytest.raises(ValueError):
        await store.finish_match(match_id, 2, Termination.LINE, None, True)
    assert [(r.bot, r.games) for r in await store.leaderboard(GAME)] == [("beta", 1), ("alpha", 1)]
    match = await store.get_match(match_id)
    assert match is not None
    assert (match.winner, match.result, match.fault) == (1, "0-1", "bot")


async def test_concurrent_finishes_rate_exactly_once(db_url: str, store: Store) -> None:
    other = await Store.open(db_url)
    try:
        await add_bots(store, "alpha", "beta")
        for _ in range(4):
            match_id = await store.create_match(GAME, ("alpha", "beta"), 1000, 10_000)
            await play(store, match_id, 3)
            outcomes = await asyncio.gather(
                store.finish_match(match_id, None, Termination.DRAW, None, True),
                store.finish_match(match_id, None, Termination.DRAW, None, True),
                other.finish_match(match_id, None, Termination.DRAW, None, True),
                return_exceptions=True,
            )
            assert sum(isinstance(o, MatchAlreadyFinishedError) for o in outcomes) == 2
            assert sum(isinstance(o, list) for o in outcomes) == 1
            # When the other node wins, this node's buffered moves follow with its next flush.
            await store.flush()
            assert await stored_moves(store, match_id) == 3
        board = await store.leaderboard(GAME)
        assert [(r.games, r.draws) for r in board] == [(4, 4), (4, 4)]
        assert len(await store.rating_history("alpha", GAME)) == 4
    finally:
        await other.close()


async def test_unrated_aborted_and_self_play_change_no_rating(store: Store) -> None:
    await add_bots(store, "alpha", "beta")
    unrated = await store.create_match(GAME, ("alpha", "beta"), 1000, 10_000, rated=False)
    assert await store.finish_match(unrated, 0, Termination.LINE, None, True) == []
    demoted = await store.create_match(GAME, ("alpha", "beta"), 1000, 10_000)
    assert (
        await store.finish_match(demoted, 0, Termination.DISCONNECT, Fault.INFRASTRUCTURE, False)
        == []
    )
    aborted = await store.create_match(GAME, ("alpha", "beta"), 1000, 10_000)
    assert (
        await store.finish_match(aborted, 1, Termination.ABORTED, Fault.INFRASTRUCTURE, True) == []
    )
    mirror = await store.create_match(GAME, ("alpha", "alpha"), 1000, 10_000)
    assert await store.finish_match(mirror, 0, Termination.LINE, None, True) == []
    assert await store.leaderboard(GAME) == []
    record = await store.get_match(aborted)
    assert record is not None
    assert (record.status, record.winner, record.result, record.rated) == (
        "aborted",
        None,
        "*",
        False,
    )
    record = await store.get_match(demoted)
    assert record is not None
    assert (record.status, record.rated, record.result) == ("finished", False, "1-0")


async def test_many_concurrent_matches_on_two_stores(db_url: str, store: Store) -> None:
    other = await Store.open(db_url)
    try:
        names = [f"bot{i}" for i in range(6)]
        await add_bots(store, *names)
        rng = random.Random(7)
        pairs = [tuple(rng.sample(names, 2)) for _ in range(40)]

        async def one_match(index: int, pair: tuple[str, str]) -> None:
            node = (store, other)[index % 2]
            match_id = await node.create_match(GAME, pair, 1000, 10_000)
            for ply in range(12):
                node.record_move(match_id, ply, ply % 2, ply % 7, 1, 1)
                await asyncio.sleep(0)
            await node.finish_match(match_id, index % 2, Termination.LINE, None, True)

        await asyncio.gather(*(one_match(i, (p[0], p[1])) for i, p in enumerate(pairs)))
        assert await stored_moves(store) == 40 * 12
        assert sum(r.games for r in await other.leaderboard(GAME)) == 80
        assert len(await store.list_matches(status="finished", limit=100)) == 40
    finally:
        await other.close()


# Crash recovery --------------------------------------------------------------

CRASHING_SERVER = textwrap.dedent(
    """
    import asyncio, os, sys
    from arena.store import Store

    async def main(url):
        store = await Store.open(url, flush_interval=60.0)
        match_id = await store.create_match("connect4", ("alpha", "beta"), 1000, 10000)
        for ply in range(4):
            store.record_move(match_id, ply, ply % 2, 3, 5, 1)
        await store.flush()
        store.record_move(match_id, 4, 0, 2, 5, 1)  # still buffered at the crash
        print(match_id, flush=True)
        os._exit(3)

    asyncio.run(main(sys.argv[1]))
    """
)


async def test_crash_leaves_flushed_moves_and_the_orphan_cleanup_closes_the_match(
    db_url: str, store: Store
) -> None:
    await add_bots(store, "alpha", "beta")
    finished = await store.create_match(GAME, ("alpha", "beta"), 1000, 10_000)
    await store.finish_match(finished, 0, Termination.LINE, None, True)
    await store.close()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CRASHING_SERVER, db_url, stdout=asyncio.subprocess.PIPE
    )
    output, _ = await process.communicate()
    assert process.returncode == 3
    crashed = output.decode().strip()

    restarted = await Store.open(db_url)
    try:
        live = await restarted.list_matches(status="live")
        assert [m.id for m in live] == [crashed]
        assert await restarted.abort_orphans() == 1  # its server recorded no node: gone
        assert await restarted.abort_orphans() == 0
        match = await restarted.get_match(crashed)
        assert match is not None
        assert (match.status, match.fault, match.rated, match.result) == (
            "aborted",
            "infrastructure",
            False,
            "*",
        )
        assert [m.ply for m in match.moves] == [0, 1, 2, 3]
        still = await restarted.get_match(finished)
        assert still is not None and still.status == "finished"
        assert sum(r.games for r in await restarted.leaderboard(GAME)) == 2
    finally:
        await restarted.close()


# Queries and rebuild ---------------------------------------------------------


async def test_list_matches_filters_and_orders(store: Store) -> None:
    await add_bots(store, "alpha", "beta")
    c4 = [await store.create_match(GAME, ("alpha", "beta"), 1000, 10_000) for _ in range(3)]
    ttt = await store.create_match("tictactoe", ("beta", "alpha"), 500, 5000)
    await store.finish_match(c4[0], None, Termination.DRAW, None, True)
    assert [m.id for m in await store.list_matches()] == [ttt, c4[2], c4[1], c4[0]]
    assert [m.id for m in await store.list_matches(status="live", game=GAME)] == [c4[2], c4[1]]
    assert [m.id for m in await store.list_matches(status="finished")] == [c4[0]]
    assert len(await store.list_matches(limit=2)) == 2
    assert (await store.list_matches(game="tictactoe"))[0].players == ("beta", "alpha")
    with pytest.raises(NoSuchBotError):
        await store.rating_history("nobody", GAME)


async def test_rebuild_reproduces_incremental_ratings_exactly(store: Store) -> None:
    rng = random.Random(20261122)
    names = [f"bot{i}" for i in range(7)]
    await add_bots(store, *names)
    games = ("connect4", "tictactoe")
    rated = 0
    for _ in range(30):
        # Ten at a time, so finishes that share bots interleave.
        batch = []
        for _ in range(10):
            game = rng.choice(games)
            pair = rng.sample(names, 2)
            match_id = await store.create_match(game, (pair[0], pair[1]), 1000, 10_000)
            winner = rng.choice([0, 1, None])
            kind = rng.random()
            termination = (
                Termination.ABORTED
                if kind < 0.05
                else Termination.LINE
                if winner is not None
                else Termination.DRAW
            )
            is_rated = kind >= 0.1
            rated += termination is not Termination.ABORTED and is_rated
            batch.append(store.finish_match(match_id, winner, termination, None, is_rated))
        await asyncio.gather(*batch)

    async def snapshot() -> tuple[list[list[LeaderboardRow]], list[list[RatingHistoryEntry]]]:
        boards = [await store.leaderboard(game) for game in games]
        histories = [await store.rating_history(n, g) for n in names for g in games]
        return (boards, histories)

    incremental = await snapshot()
    assert sum(r.games for r in incremental[0][0]) + sum(r.games for r in incremental[0][1]) == (
        2 * rated
    )
    assert await store.rebuild_ratings() == rated
    assert await snapshot() == incremental
    # And again, from a rebuilt state.
    assert await store.rebuild_ratings() == rated
    assert await snapshot() == incremental


# SQLite specifics ------------------------------------------------------------


async def test_sqlite_uses_wal_and_begin_immediate_for_writes(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}")
    statements: list[str] = []

    def remember(_conn: Connection, _cursor: object, statement: str, *_: object) -> None:
        statements.append(statement)

    event.listen(store.engine.sync_engine, "before_cursor_execute", remember)
    try:
        async with store.engine.connect() as connection:
            mode = (await connection.exec_driver_sql("PRAGMA journal_mode")).scalar_one()
            timeout = (await connection.exec_driver_sql("PRAGMA busy_timeout")).scalar_one()
        assert (mode, timeout) == ("wal", 5000)
        statements.clear()
        await store.add_bot("alpha")
        assert statements[0] == "BEGIN IMMEDIATE"
        statements.clear()
        await store.list_bots()
        assert statements[0] == "BEGIN DEFERRED"
    finally:
        await store.close()


async def test_sqlite_memory_database_is_refused() -> None:
    with pytest.raises(DatabaseOpenError, match="not memory"):
        await Store.open("sqlite+aiosqlite:///:memory:")

