"""The installed ``bots`` command: ``bots.cli`` with the arena's Elo verdict on a match.

``bots`` may import only ``protocol``, so the one Elo method every channel uses
(``arena.stats.elo_interval``) cannot be called from there; the CLI layer may
import both, and passes the verdict in.
"""

from __future__ import annotations

from collections.abc import Sequence

from bots import MatchResult, cli_main


def match_verdict(result: MatchResult) -> str:
    """``Elo difference (A - B), 10 pairs, 95%: +108 [+37, +180], LOS 99.9%``.

    Counted over the match's complete colour-swapped pairs (over its single
    games when it has none), as tournaments count their meetings.
    """
    from arena.stats import elo_interval, match_counts  # numpy and scipy: only here

    counts = match_counts(result.scores(0), result.pair_scores(0))
    units = sum(counts)
    unit = ("pair" if len(counts) == 5 else "game") + ("" if units == 1 else "s")
    interval = elo_interval(counts)
    return (
        f"Elo difference ({result.names[0]} - {result.names[1]}), {units} {unit}, 95%: "
        f"{interval.text(los=True)}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``bots`` console script."""
    return cli_main(argv, verdict=match_verdict)
