"""Rated ladder games: balanced openings in colour-swapped pairs (``arena.play.rated_openings``).

Two deterministic bots (alice plays the lowest legal column, bob the
highest) meet again and again on a real server. From the initial position
they repeat the game of each colour assignment over and over; with rated
openings every game is new, and each two form a pair: one opening, colours
swapped. The pair history survives a restart (it is
read from the store).
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from arena.play.lobby import Pairing
from arena.play.rated_openings import RatedOpenings
from arena.server import ArenaServer
from arena.store import MatchRecord, Store
from arena.store.pair_history import PairHistory, PairKey, pair_key
from arena.tournaments.openings import balanced_suite
from protocol.games import Termination
from protocol.messages import MatchEnd, MatchStart, TimeControl, YourTurn

# Annotations only: tests/analysis imports this module without arena's conftest on the path.
if TYPE_CHECKING:
    from tests.arena.conftest import BotFactory, Client, ServerFactory

TC = {"move_ms": 2000, "bank_ms": 0}


async def deterministic(client: Client, pick: Callable[[Iterable[int]], int]) -> str:
    """Play ``pick(legal moves)`` at every turn until the match ends; the match id."""
    start = await client.expect(MatchStart)
    while True:
        message = await client.recv()
        if isinstance(message, YourTurn):
            await client.move(message, pick(message.legal_moves))
        elif isinstance(message, MatchEnd):
            return start.match_id


async def rated_game(alice: Client, bob: Client, store: Store) -> MatchRecord:
    """Both bots seek connect4 and play one game (alice ``min``, bob ``max``); the stored match."""
    for client in (alice, bob):
        await client.send(type="seek", game="connect4", time_control=TC)
    ids = await asyncio.gather(deterministic(alice, min), deterministic(bob, max))
    assert ids[0] == ids[1]
    record = await store.get_match(ids[0])
    assert record is not None and record.rated and record.status == "finished"
    return record


def moves(record: MatchRecord) -> tuple[int, ...]:
    return tuple(move.move for move in record.moves)


async def test_deterministic_bots_repeat_their_games_from_the_initial_position(
    make_server: ServerFactory, bot: BotFactory, store: Store, tokens: dict[str, str]
) -> None:
    # The arena/conftest.py servers run with rated openings off: the problem they solve.
    server: ArenaServer = await make_server()
    alice, bob = await bot("alice", target=server), await bot("bob", target=server)
    games = [await rated_game(alice, bob, store) for _ in range(3)]
    assert all(game.opening == () for game in games)
    # One game per colour assignment: three games, at most two different ones.
    assert len({moves(game) for game in games}) == len({game.players for game in games}) < 3


async def test_return_games_swap_colours_on_one_opening_and_pairs_change_opening(
    make_server: ServerFactory, bot: BotFactory, store: Store, tokens: dict[str, str]
) -> None:
    suite = balanced_suite("connect4").openings
    server: ArenaServer = await make_server(rated_openings=True)
    alice, bob = await bot("alice", target=server), await bot("bob", target=server)
    games = [await rated_game(alice, bob, store)]
    # A restart forgets the cache: the return game comes from the history in the store.
    await alice.close()
    await bob.close()
    await server.shutdown()
    server = await make_server(rated_openings=True)
    alice, bob = await bot("alice", target=server), await bot("bob", target=server)
    games += [await rated_game(alice, bob, store) for _ in range(5)]

    for first, second in zip(games[::2], games[1::2], strict=True):
        assert first.opening in suite and second.opening == first.opening
        assert second.players == first.players[::-1]
        assert moves(first)[: len(first.opening)] == first.opening
    assert len({game.opening for game in games[::2]}) == 3  # each pair a new opening
    assert len({moves(game) for game in games}) == len(games)  # no game repeated
    # The store's history counts all six, the last one first by alice or bob as played.
    # The store's history by bot: every pair that met (carol never played).
    assert await store.bot_pair_histories(["bob", "carol"]) == {
        ("connect4", "alice", "bob"): PairHistory(6, games[-1].opening, games[-1].players[0])
    }
    assert await store.bot_pair_histories(["carol", "nobody"]) == {}


async def test_a_pair_takes_the_next_opening_and_the_cache_counts_its_games() -> None:
    reads: list[set[str]] = []
    # z and x met once in uttt, z moving first from the empty board.
    met = {("uttt", "x", "z"): PairHistory(1, (), "z")}

    async def history(bots: Iterable[str]) -> dict[PairKey, PairHistory]:
        reads.append(set(bots))
        return {key: h for key, h in met.items() if reads[-1] & set(key[1:])}

    openings = RatedOpenings(history, lambda game: balanced_suite(game).openings, cached_pairs=4)
    tc = TimeControl(move_ms=100, bank_ms=0)
    # A pass reads the bots it has not seen in one go; a start without it reads its own.
    await openings.prefetch([Pairing("connect4", ("y", "x"), tc), Pairing("uttt", ("x", "w"), tc)])
    await openings.prefetch([Pairing("connect4", ("x", "y"), tc)])
    chosen = [
        await openings.choose(Pairing("connect4", players, tc))
        for players in [("x", "y"), ("x", "y"), ("y", "x"), ("x", "y"), ("a", "b")]
    ]
    assert reads == [{"x", "y", "w"}, {"a", "b"}]
    # x's history was read: its return game with z needs no read.
    ret = await openings.choose(Pairing("uttt", ("z", "x"), tc))
    assert (ret.players, ret.opening, len(reads)) == (("x", "z"), (), 2)
    suite = balanced_suite("connect4").openings
    first = suite.index(chosen[0].opening)
    second = (first + 1) % len(suite)
    assert [c.opening for c in chosen[:4]] == [suite[first]] * 2 + [suite[second]] * 2
    assert [c.players for c in chosen[:4]] == [("x", "y"), ("y", "x"), ("y", "x"), ("x", "y")]
    # Tic-tac-toe has no suite: the initial position, colours still alternating.
    ttt = [await openings.choose(Pairing("tictactoe", ("x", "y"), tc)) for _ in range(2)]
    assert [(c.opening, c.players) for c in ttt] == [((), ("x", "y")), ((), ("y", "x"))]
    assert len(reads) == 2
    # The cache holds 4 pairs: the oldest (x-y in connect4) goes, and x and y are read again.
    await openings.choose(Pairing("othello", ("v", "u"), tc))
    await openings.choose(Pairing("connect4", ("x", "y"), tc))
    assert reads[2:] == [{"u", "v"}, {"x", "y"}]


async def test_a_store_that_cannot_answer_costs_the_opening_choice_not_the_match() -> None:
    answers: list[dict[PairKey, PairHistory] | None] = [
        None,
        {("connect4", "x", "y"): PairHistory(3, (1, 1), "y")},
    ]

    async def history(bots: Iterable[str]) -> dict[PairKey, PairHistory]:
        answer = answers.pop(0)
        if answer is None:
            raise OSError("disk I/O error")
        return answer

    openings = RatedOpenings(history, lambda game: balanced_suite(game).openings)
    tc = TimeControl(move_ms=100, bank_ms=0)
    await openings.prefetch([Pairing("connect4", ("x", "y"), tc)])  # fails: nothing cached
    # The store answers now: x and y have played 3 games, so this is the return game.
    chosen = await openings.choose(Pairing("connect4", ("y", "x"), tc))
    assert (chosen.players, chosen.opening) == (("x", "y"), (1, 1))
    answers.append(None)
    # A failed read still starts the match (a new pair), and does not count it.
    other = await openings.choose(Pairing("connect4", ("x", "z"), tc))
    assert other.opening in balanced_suite("connect4").openings and other.players == ("x", "z")


async def check_bot_pair_histories(store: Store) -> None:
    """Ladder games counted per pair, the latest one's start kept (SQLite and PostgreSQL)."""
    for name in ("p", "q", "r"):
        await store.add_bot(name)

    async def play(
        players: tuple[str, str], opening: tuple[int, ...], ending: Termination, rated: bool = True
    ) -> None:
        match_id = await store.open_match("connect4", players, 1000, 0, rated, opening=opening)
        await store.finish_match(match_id, 0, ending, None, rated)

    await play(("p", "q"), (3, 3), Termination.RESIGN)
    await play(("q", "p"), (3, 3), Termination.RESIGN)
    await play(("q", "p"), (0, 1), Termination.RESIGN)
    await play(("p", "q"), (2, 2), Termination.RESIGN, rated=False)  # a friendly: not counted
    await play(("p", "q"), (4, 4), Termination.ABORTED)  # taught nothing: not counted
    await play(("r", "p"), (), Termination.RESIGN)
    assert await store.bot_pair_histories(["q"]) == {
        ("connect4", "p", "q"): PairHistory(3, (0, 1), "q")
    }
    assert await store.bot_pair_histories(["p", "nobody"]) == {
        ("connect4", "p", "q"): PairHistory(3, (0, 1), "q"),
        ("connect4", "p", "r"): PairHistory(1, (), "r"),
    }


async def test_the_store_counts_each_pairs_ladder_games(store: Store) -> None:
    await check_bot_pair_histories(store)


async def test_the_cache_keeps_each_history_whole_in_entries_the_collector_does_not_track() -> None:
    # Every game's longest suite opening, a history without a last game, and a two-digit count.
    met = {
        pair_key(game, "p-1", "q_2"): PairHistory(games, max(suite, key=len), "q_2")
        for games, game in enumerate(("connect4", "uttt", "othello"), 11)
        if (suite := balanced_suite(game).openings)
    }
    met[pair_key("tictactoe", "p-1", "q_2")] = PairHistory(0, (), None)

    async def history(bots: Iterable[str]) -> dict[PairKey, PairHistory]:
        return dict(met)

    openings = RatedOpenings(history, lambda game: balanced_suite(game).openings)
    await openings.prefetch([Pairing("connect4", ("p-1", "q_2"), TimeControl(100, 0))])
    assert {key: openings._known(key) for key in met} == met
    assert not any(gc.is_tracked(item) for entry in openings._cache.items() for item in entry)
