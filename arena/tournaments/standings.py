"""Where a tournament stands, as one JSON object: ``GET /api/tournaments/ID``, the MQTT state,
the viewer's page and ``arena tournament status`` all show this.

- ``progress``: games done (counted, forfeited or void) of the total, and playing now;
- ``crosstable``: points of each row bot against each column bot, forfeits included;
- ``meetings``: per two bots, W/D/L of real games, the pentanomial counts of their
  complete game pairs, and ``elo_interval`` (95%, LOS) of those pairs (of the
  single games while no pair is complete);
- ``standings``: one Bradley–Terry fit over the tournament's games (``fit_ratings``),
  rating ± 95% and the honest rank range, with points and W/D/L. Ratings are
  relative: the field's mean is 0;
- ``sprt``: the LLR, its bounds, the verdict and the LLR after each pair.

``headline`` picks from a status what the tournaments list shows of it: the
leader, or for an SPRT its verdict and LLR.

Forfeits count as points for the opponent but in no statistic: no game was played.
"""

from __future__ import annotations

from typing import Any

from arena.stats import (
    elo_interval,
    fit_ratings,
    match_counts,
    pentanomial_counts,
    trinomial_counts,
)
from arena.stats.rating_fit import tally_pairs
from arena.tournaments.openings import format_opening
from arena.tournaments.state import TournamentState, games_to_show

MAX_LISTED_GAMES = 500
"""The status lists at most this many games (the latest), each with its match id."""
MAX_CHART_POINTS = 400
"""The SPRT chart's LLR history is thinned to about this many points."""


def build_status(state: TournamentState, openings_source: str | None = None) -> dict[str, Any]:
    """The status object of ``state`` (see the module docstring)."""
    s = state.settings
    names = list(s.bots)
    void = state.void_slots()
    forfeits = [
        key
        for pair in state.pairs
        for key in ((pair.number, 0), (pair.number, 1))
        if key not in void and state.forfeit_loser(key) is not None
    ]
    status: dict[str, Any] = {
        "id": state.id,
        "name": s.name,
        "game": s.game,
        "format": s.format,
        "status": state.status,
        "settings": s.to_json(),
        "bots": [
            {"seat": seat, "name": name, "removed": state.removed[seat]}
            for seat, name in enumerate(names)
        ],
        "openings": {"source": openings_source or s.openings, "count": len(state.openings)},
        "progress": {
            "done": state.done_games,
            "total": games_to_show(state.status, state.done_games, state.total_games),
            "counted": len(state.results),
            "forfeits": len(forfeits),
            "void": len(void),
            "playing": len(state.playing) + len(state.elsewhere),
            "pairs_complete": len(state.completed),
        },
        "created_at": state.created_at.isoformat(),
        "started_at": state.started_at.isoformat() if state.started_at else None,
        "ended_at": state.ended_at.isoformat() if state.ended_at else None,
    }
    status["crosstable"] = _crosstable(state, forfeits)
    status["meetings"] = _meetings(state)
    status["standings"] = _standings(state, status["crosstable"])
    status["leader"] = status["standings"][0] if state.results else None
    status["sprt"] = _sprt(state)
    status["games"] = _games(state)
    return status


SPRT_HEADLINE = ("verdict", "verdict_games", "llr", "lower", "upper")
"""The fields of ``sprt`` the tournaments list shows (not the chart's history)."""


def headline(status: dict[str, Any]) -> dict[str, Any]:
    """What the tournaments list shows of ``status`` (``build_status``'s object).

    ``{"leader": ..., "sprt": None}`` with the leader's standings row (``None``
    before a game counted) for a round robin or gauntlet; ``{"leader": None,
    "sprt": {...}}`` with the verdict (``None`` while running), the LLR and its
    bounds for an SPRT. Nothing is computed here: both are the status's own.
    """
    sprt = status["sprt"]
    if sprt is not None:
        return {"leader": None, "sprt": {key: sprt[key] for key in SPRT_HEADLINE}}
    return {"leader": status["leader"], "sprt": None}


def _crosstable(state: TournamentState, forfeits: list[tuple[int, int]]) -> dict[str, Any]:
    size = len(state.settings.bots)
    points = [[0.0] * size for _ in range(size)]
    games = [[0] * size for _ in range(size)]
    for first, second, score in state.scores():
        points[first][second] += score
        points[second][first] += 1.0 - score
        games[first][second] += 1
        games[second][first] += 1
    for key in forfeits:
        loser = state.forfeit_loser(key)
        assert loser is not None
        pair = state.pairs[key[0]]
        winner = pair.seat_b if loser == pair.seat_a else pair.seat_a
        points[winner][loser] += 1.0
        games[winner][loser] += 1
        games[loser][winner] += 1
    cells = [
        [
            None if i == j or not games[i][j] else {"points": points[i][j], "games": games[i][j]}
            for j in range(size)
        ]
        for i in range(size)
    ]
    totals = [
        {"points": sum(points[i]), "games": sum(games[i])} for i in range(size)
    ]
    return {"bots": list(state.settings.bots), "cells": cells, "totals": totals}


def _meetings(state: TournamentState) -> list[dict[str, Any]]:
    """Per two bots that met: W/D/L, pentanomial counts and the Elo interval of the lower seat."""
    by_meeting: dict[tuple[int, int], dict[str, Any]] = {}
    pair_scores: dict[tuple[int, int], list[float]] = {}
    game_scores: dict[tuple[int, int], list[float]] = {}
    for result in state.order:
        pair = state.pairs[result.pair]
        low, high = sorted((pair.seat_a, pair.seat_b))
        score_low = result.score_a if low == pair.seat_a else 1.0 - result.score_a
        game_scores.setdefault((low, high), []).append(score_low)
    for number in state.completed:
        pair = state.pairs[number]
        low, high = sorted((pair.seat_a, pair.seat_b))
        total_a = state.results[(number, 0)].score_a + state.results[(number, 1)].score_a
        pair_scores.setdefault((low, high), []).append(
            total_a if low == pair.seat_a else 2.0 - total_a
        )
    names = state.settings.bots
    for key in sorted(game_scores):
        losses, draws, wins = trinomial_counts(game_scores[key])
        penta = pentanomial_counts(pair_scores.get(key, []))
        counts = match_counts(game_scores[key], pair_scores.get(key, []))
        by_meeting[key] = {
            "bots": [names[key[0]], names[key[1]]],
            "wins": wins,
            "draws": draws,
            "losses": losses,
            "pairs": sum(penta),
            "pentanomial": list(penta),
            "elo_interval": elo_interval(counts).to_json(),
            "counted_as": "pairs" if sum(penta) else "games",
        }
    return list(by_meeting.values())


def _standings(state: TournamentState, crosstable: dict[str, Any]) -> list[dict[str, Any]]:
    names = list(state.settings.bots)
    games = [(names[first], names[second], score) for first, second, score in state.scores()]
    fit = fit_ratings(tally_pairs(games), bots=names, anchor_rating=0.0)
    seat_of = {name: seat for seat, name in enumerate(names)}
    rows = []
    for line in fit.ratings:
        seat = seat_of[line.name]
        totals = crosstable["totals"][seat]
        rows.append(
            {
                "rank": line.rank,
                "rank_low": line.rank_low,
                "rank_high": line.rank_high,
                "bot": line.name,
                "rating": line.rating,
                "ci95": line.ci95,
                "games": line.games,
                "wins": line.wins,
                "draws": line.draws,
                "losses": line.losses,
                "points": totals["points"],
                "scored_games": totals["games"],
                "removed": state.removed[seat],
            }
        )
    return rows


def _sprt(state: TournamentState) -> dict[str, Any] | None:
    tracker = state.sprt
    if tracker is None:
        return None
    verdict = state.stored_verdict or tracker.verdict
    history = tracker.history
    step = max(1, len(history) // MAX_CHART_POINTS)
    thinned = history[::step]
    if thinned[-1] != history[-1]:
        thinned.append(history[-1])
    return {
        "elo0": tracker.elo0,
        "elo1": tracker.elo1,
        "alpha": tracker.alpha,
        "beta": tracker.beta,
        "model": tracker.model,
        "llr": tracker.llr,
        "lower": tracker.lower,
        "upper": tracker.upper,
        "verdict": verdict,
        "verdict_games": tracker.verdict_games,
        "pentanomial": list(tracker.counts),
        "history": [[games, llr] for games, llr in thinned],
    }


def _games(state: TournamentState) -> list[dict[str, Any]]:
    rows = []
    for result in state.order[-MAX_LISTED_GAMES:]:
        key = (result.pair, result.game)
        first, second = state.players(key)
        pair = state.pairs[result.pair]
        score_first = result.score_a if result.game == 0 else 1.0 - result.score_a
        rows.append(
            {
                "match_id": result.match_id,
                "pair": result.pair,
                "game": result.game,
                "players": [first, second],
                "opening": format_opening(state.openings[pair.opening]),
                "score": score_first,
                "termination": result.termination,
                "ended_at": result.ended_at.isoformat(),
            }
        )
    return rows
