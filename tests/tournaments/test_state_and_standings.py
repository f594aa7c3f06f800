"""``TournamentState`` bookkeeping and the status object, on hand-made results."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from arena.stats import elo_interval, fit_ratings, sprt
from arena.stats.rating_fit import tally_pairs
from arena.tournaments.schedule import build_schedule
from arena.tournaments.settings import TournamentSettings
from arena.tournaments.standings import build_status
from arena.tournaments.state import MAX_NO_SHOWS, GameResult, TournamentState

T0 = datetime(2026, 12, 1, tzinfo=UTC)


def make_state(settings: TournamentSettings, rounds: int, openings: int = 2) -> TournamentState:
    return TournamentState(
        id=1,
        settings=settings,
        status="running",
        openings=tuple((k,) for k in range(openings)),
        pairs=build_schedule(settings.format, len(settings.bots), rounds, openings, seed=3),
        removed=[False] * len(settings.bots),
        created_at=T0,
    )


def result(state: TournamentState, pair: int, game: int, score_a: float, k: int) -> GameResult:
    return GameResult(pair, game, score_a, f"m{pair}-{game}", "line", T0 + timedelta(seconds=k))


RR = TournamentSettings(game="connect4", format="round-robin", bots=("a", "b", "c"))


def test_a_slot_counts_once_and_pairs_complete_with_their_second_game() -> None:
    state = make_state(RR, rounds=2)
    assert state.total_games == 12
    assert not state.record(result(state, 0, 0, 1.0, 0))
    assert not state.record(result(state, 0, 0, 0.0, 1))  # the same slot again: ignored
    assert state.record(result(state, 0, 1, 0.5, 2))
    assert state.completed == [0]
    assert state.results[(0, 0)].score_a == 1.0
    assert (0, 0) not in set(state.pending()) and (1, 0) in set(state.pending())


def test_no_shows_make_a_slot_void_and_it_is_not_played_again() -> None:
    state = make_state(RR, rounds=1)
    for _ in range(MAX_NO_SHOWS - 1):
        state.record_no_show((1, 0))
    assert (1, 0) in set(state.pending())
    state.record_no_show((1, 0))
    assert (1, 0) not in set(state.pending())
    assert state.done_games == 1
    assert not state.record(result(state, 1, 0, 1.0, 0))  # a void slot never counts


def test_tally_counts_a_result_a_no_show_or_nothing_and_each_match_once() -> None:
    state = make_state(RR, rounds=1)
    ids = iter(range(100))

    def ended() -> dict[str, Any]:
        return {"match_id": f"m{next(ids)}", "ended_at": T0}

    # Seat b moved first in game 1: seat 0's win is a loss for the pair's seat a.
    assert not state.tally((0, 1), winner=0, termination="line", fault=None, **ended())
    assert (state.results[(0, 1)].score_a, state.results[(0, 1)].termination) == (0.0, "line")
    assert state.tally((0, 0), winner=None, termination="draw", fault=None, **ended())
    assert state.results[(0, 0)].score_a == 0.5
    # An abort by the infrastructure counts nothing; one without a fault is a no-show.
    for _ in range(MAX_NO_SHOWS):
        state.tally((1, 0), winner=None, termination="aborted", fault="infrastructure", **ended())
    assert state.no_shows[(1, 0)] == 0 and (1, 0) in set(state.pending())
    # A match seen twice (live, then in the rows another node left) is tallied once.
    again = ended()
    for _ in range(MAX_NO_SHOWS):
        assert not state.tally((1, 0), winner=None, termination="aborted", fault=None, **again)
    assert state.no_shows[(1, 0)] == 1 and (1, 0) in set(state.pending())
    for _ in range(MAX_NO_SHOWS - 1):
        assert not state.tally((1, 0), winner=None, termination="aborted", fault=None, **ended())
    assert state.no_shows[(1, 0)] == MAX_NO_SHOWS and (1, 0) not in set(state.pending())


def test_a_removed_bot_forfeits_what_is_left_in_points_never_in_statistics() -> None:
    state = make_state(RR, rounds=1)
    pair_ab = next(p for p in state.pairs if {p.seat_a, p.seat_b} == {0, 1})
    state.record(result(state, pair_ab.number, 0, 0.5, 0))
    state.removed[1] = True  # b leaves: its other game with a, and both with c, are forfeits
    assert all(1 not in (state.pairs[k[0]].seat_a, state.pairs[k[0]].seat_b)
               for k in state.pending())  # fmt: skip
    status = build_status(state)
    assert status["progress"]["forfeits"] == 3
    assert status["progress"]["done"] == 4
    cross = status["crosstable"]["cells"]
    assert cross[0][1] == {"points": 1.5, "games": 2}  # a draw played, a win by forfeit
    assert cross[1][0] == {"points": 0.5, "games": 2}
    assert cross[2][1] == {"points": 2.0, "games": 2}
    meeting = next(m for m in status["meetings"] if m["bots"] == ["a", "b"])
    assert (meeting["wins"], meeting["draws"], meeting["losses"]) == (0, 1, 0)
    assert [row["removed"] for row in status["standings"] if row["bot"] == "b"] == [True]


def test_meetings_count_pairs_pentanomially_and_match_elo_interval() -> None:
    state = make_state(TournamentSettings(game="connect4", format="gauntlet", bots=("x", "y")), 6)
    rng = random.Random(5)
    k = 0
    pair_scores = []
    for pair in state.pairs:
        scores = [rng.choice((0.0, 0.5, 1.0)) for _ in range(2)]
        for game, score_a in enumerate(scores):
            state.record(result(state, pair.number, game, score_a, k))
            k += 1
        total_a = sum(scores)
        pair_scores.append(total_a if pair.seat_a == 0 else 2.0 - total_a)
    penta = [0] * 5
    for score in pair_scores:
        penta[int(2 * score)] += 1
    meeting = build_status(state)["meetings"][0]
    assert meeting["pentanomial"] == penta
    assert meeting["elo_interval"] == elo_interval(penta).to_json()


def test_standings_are_the_rating_fit_of_the_games() -> None:
    state = make_state(RR, rounds=3)
    rng = random.Random(11)
    games = []
    for k, pair in enumerate(state.pairs):
        for game in (0, 1):
            score_a = rng.choice((0.0, 0.5, 1.0))
            state.record(result(state, pair.number, game, score_a, 2 * k + game))
            first, second = pair.seats(game)
            score_first = score_a if first == pair.seat_a else 1.0 - score_a
            games.append((RR.bots[first], RR.bots[second], score_first))
    fit = fit_ratings(tally_pairs(games), bots=RR.bots, anchor_rating=0.0)
    standings = build_status(state)["standings"]
    assert [row["bot"] for row in standings] == [line.name for line in fit.ratings]
    for row, line in zip(standings, fit.ratings, strict=True):
        assert row["rating"] == pytest.approx(line.rating)
        assert row["ci95"] == pytest.approx(line.ci95)
    assert sum(row["points"] for row in standings) == len(games)


def test_sprt_stops_at_the_first_bound_and_later_pairs_do_not_change_the_verdict() -> None:
    settings = TournamentSettings(
        game="connect4", format="sprt", bots=("new", "old"), elo0=0.0, elo1=50.0,
        alpha=0.05, beta=0.05, model="normalized", max_games=200,
    )  # fmt: skip
    state = make_state(settings, rounds=100)
    assert state.sprt is not None
    k = 0
    verdict_at = None
    for pair in state.pairs:
        for game in (0, 1):
            score_a = 1.0 if pair.seat_a == 0 else 0.0  # the new bot wins every game
            state.record(result(state, pair.number, game, score_a, k))
            k += 1
        if state.sprt.verdict is not None:
            verdict_at = pair.number
            break
    assert state.sprt.verdict == "H1"
    assert verdict_at is not None
    pairs_done = verdict_at + 1
    # The same counts, judged directly: not yet one pair earlier, H1 now.
    assert sprt((0, 0, 0, 0, pairs_done - 1), 0.0, 50.0).verdict is None
    assert sprt((0, 0, 0, 0, pairs_done), 0.0, 50.0).verdict == "H1"
    assert state.sprt.verdict_games == 2 * pairs_done
    assert list(state.pending()) == []  # nothing new starts after the verdict
    # A pair that was in flight at the verdict is recorded and leaves the verdict alone.
    late = state.pairs[verdict_at + 1]
    state.record(result(state, late.number, 0, 0.0, k))
    state.record(result(state, late.number, 1, 1.0, k + 1))
    assert state.sprt.verdict == "H1" and state.sprt.verdict_games == 2 * pairs_done
    status = build_status(state)["sprt"]
    assert status["verdict"] == "H1"
    assert status["history"][-1][0] == 2 * pairs_done


@pytest.mark.parametrize(("bots", "concurrency"), [(6, 2), (9, 4), (12, 6)])
def test_next_slot_is_the_first_pending_slot_whose_bots_are_free(
    bots: int, concurrency: int
) -> None:
    """Against a scan of every pending slot, through a whole seeded tournament."""
    names = tuple(f"b{k}" for k in range(bots))
    state = make_state(TournamentSettings(game="connect4", format="round-robin", bots=names), 3)
    rng = random.Random(bots)
    busy: dict[tuple[int, int], tuple[int, int]] = {}
    free = set(range(bots))
    played = 0
    while True:
        while len(busy) < concurrency:
            key = state.next_slot(free)
            candidates = [
                k for k in state.pending() if set(state.pairs[k[0]].seats(k[1])) <= free
            ]
            assert key == (min(candidates) if candidates else None)
            if key is None:
                break
            state.playing.add(key)
            busy[key] = state.pairs[key[0]].seats(key[1])
            free.difference_update(busy[key])
        if not busy:
            break
        done = rng.choice(sorted(busy))
        free.update(busy.pop(done))
        state.playing.discard(done)
        state.record(result(state, done[0], done[1], rng.choice((0.0, 0.5, 1.0)), played))
        played += 1
    assert played == state.total_games and state.is_complete()
