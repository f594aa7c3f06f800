"""``elo_interval``: the Elo difference two players' games support, calibrated at every sample size.

The interval is a profile-likelihood (likelihood-ratio) interval for the mean
score ``s`` under a multinomial model of the outcomes — the same model
``elo_estimate`` and the SPRT use (fishtest, Van den Bergh). For each candidate
``s`` the most likely outcome distribution whose mean is ``s`` is found (the
empirical-likelihood dual: ``pₖ = p̂ₖ / (1 + x·(aₖ − s))``, with mass moved to
an unseen best or worst outcome when the seen ones cannot reach ``s``), and
``s`` is inside the interval when ``2·(ℓ(ŝ) − ℓ(s)) ≤ z²`` (``z = 1.96`` at 95%).
The ends are mapped through the logistic Elo curve.

Each end carries a one-sided continuity correction of half a game (as
``x ∓ ½`` does for a binomial): the lower end is computed from the tally with
half a game moved from its best seen outcome to a loss (a quarter of a pair
from its best seen pair result to two losses), the upper end likewise the
other way. Without it the likelihood ratio covers the truth in only 84% of
4-game samples between equals; with it every cell of the calibration table in
``docs/ratings.md`` is at least 93%.

Unlike the normal approximation (``elo_estimate``, fishtest's figure) the
interval is not symmetric and never claims certainty from a few games: 2–0
reads ``[−318, +inf]``, not ``+1200 ± 313``. A sample at the edge (every game
won, or every game lost) has one infinite end; its point estimate takes half a
game off the perfect score, so ``elo`` is always finite. LOS comes from the
same (corrected) likelihood: ``Φ`` of the signed root of the deviance at
``s = ½``, so LOS > 97.5% exactly when the 95% interval lies above 0.

Under ``MIN_GAMES`` games (``MIN_GAMES / 2`` colour-swapped pairs) the
interval is still computed but ``too_few`` is set: every channel then says
"too few games" in words instead of printing numbers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from scipy.optimize import brentq

from arena.ratings import score_to_elo

MIN_GAMES = 8
"""Fewer games than this (or fewer than half as many game pairs) are "too few games"."""

TOO_FEW = "too few games"
"""What every channel shows instead of numbers when ``too_few`` is set."""

CONTINUITY_GAMES = 0.5
"""The continuity correction of each end: this many games' points moved towards the other end."""

DECIMALS = 1
"""Elo figures in JSON are rounded to a tenth."""

INTERVAL_CACHE = 4096
"""Intervals of this many distinct tallies are kept: each takes a few milliseconds to compute."""

_NORMAL = NormalDist()
_EDGE = 1e-12  # how close to a score of 0 or 1 the search for an end may go


@dataclass(frozen=True, slots=True)
class EloInterval:
    """What the games between two players say about their Elo difference (first minus second)."""

    low: float
    """Lower end of the interval, Elo; ``-inf`` when every game was lost."""
    elo: float
    """Point estimate, Elo: the observed mean score on the Elo curve (always finite)."""
    high: float
    """Upper end of the interval, Elo; ``+inf`` when every game was won."""
    los: float
    """Likelihood of superiority (0..1), from the same likelihood as the interval."""
    games: int
    """Games behind the figures (two per pair for pentanomial counts)."""
    confidence: float = 0.95

    @property
    def too_few(self) -> bool:
        """Whether the sample is under ``MIN_GAMES`` games: channels say "too few games"."""
        return self.games < MIN_GAMES

    def text(self, los: bool = False) -> str:
        """``+108 [+38, +180]`` (``, LOS 99.9%`` with ``los``) — or "too few games".

        How every text channel prints it (CLI, reports, ``bots play``); the web
        pages print the same from ``to_json``.
        """
        return interval_text(self.to_json(), los)

    def to_json(self) -> dict[str, Any]:
        """The JSON form every API and MQTT message carries: an unbounded end is ``null``."""
        return {
            "elo": round(self.elo, DECIMALS),
            "low": _json_elo(self.low),
            "high": _json_elo(self.high),
            "los": self.los,
            "games": self.games,
            "confidence": self.confidence,
            "too_few": self.too_few,
        }


def interval_text(data: dict[str, Any], los: bool = False) -> str:
    """``EloInterval.to_json()`` as text: ``+108 [+38, +180]`` or "too few games".

    Reports that hold only the JSON (a tournament's status read over HTTP) print
    through this, so every text channel shows the same figures.
    """
    if data["too_few"]:
        return TOO_FEW
    low = -math.inf if data["low"] is None else data["low"]
    high = math.inf if data["high"] is None else data["high"]
    text = f"{format_elo(data['elo'])} [{format_elo(low)}, {format_elo(high)}]"
    return f"{text}, LOS {data['los']:.1%}" if los else text


def format_elo(value: float) -> str:
    """An Elo figure as printed: ``+191``, ``-83``, ``+0``, ``+inf``, ``-inf``."""
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    rounded = math.floor(value + 0.5)  # halves up, as the web pages' Math.round
    return "+0" if rounded == 0 else f"{rounded:+d}"


def _json_elo(value: float) -> float | None:
    return None if math.isinf(value) else round(value, DECIMALS)


def elo_interval(counts: Sequence[float], confidence: float = 0.95) -> EloInterval:
    """The Elo difference and its profile-likelihood interval from a trinomial or pentanomial tally.

    ``counts`` is ``(losses, draws, wins)`` or ``(LL, LD+DL, LW+DD+WL, DW+WD, WW)``
    from the first player's point of view, worst first (see ``arena.stats.counts``).
    """
    if len(counts) not in (3, 5):
        raise ValueError(f"counts must have 3 or 5 entries, got {len(counts)}")
    if any(not math.isfinite(c) or c < 0 for c in counts):
        raise ValueError(f"counts must be finite and not negative, got {list(counts)}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if sum(counts) <= 0:
        raise ValueError("no games to estimate from")
    return _interval(tuple(float(c) for c in counts), confidence)


@functools.lru_cache(maxsize=INTERVAL_CACHE)
def _interval(counts: tuple[float, ...], confidence: float) -> EloInterval:
    # A status rebuilt after each game recomputes every meeting's tally; only one has changed.
    units = sum(counts)
    games = round(units) * (2 if len(counts) == 5 else 1)
    critical = _NORMAL.inv_cdf(0.5 + confidence / 2.0) ** 2
    # Half a game: half a count of wins, a quarter of a count of pairs won twice.
    amount = CONTINUITY_GAMES / (len(counts) // 2)
    down = _Profile(_shifted(counts, amount))
    up = _Profile(_shifted(counts[::-1], amount)[::-1])
    low = 0.0 if down.mean <= 0.0 else _end(down, critical, _EDGE, down.mean)
    high = 1.0 if up.mean >= 1.0 else _end(up, critical, up.mean, 1.0 - _EDGE)
    mean = _Profile(counts).mean
    # Half a game off a perfect (or nil) score keeps the point estimate finite.
    point = min(max(mean, 0.5 / games), 1.0 - 0.5 / games)
    # The tally shifted towards an even score decides LOS, as it decides that end;
    # the shift may bring it to an even score but not past it.
    if mean > 0.5:
        los = _NORMAL.cdf(max(0.0, down.signed_root(0.5)))
    elif mean < 0.5:
        los = _NORMAL.cdf(min(0.0, up.signed_root(0.5)))
    else:
        los = 0.5
    return EloInterval(
        low=score_to_elo(low),
        elo=score_to_elo(point) + 0.0,
        high=score_to_elo(high),
        los=los,
        games=games,
        confidence=confidence,
    )


def _shifted(counts: Sequence[float], amount: float) -> list[float]:
    """``counts`` with ``amount`` of its best seen outcome moved to the worst outcome."""
    shifted = [float(c) for c in counts]
    best = max(k for k, c in enumerate(shifted) if c > 0)
    if best > 0:
        moved = min(amount, shifted[best])  # a fraction of a game cannot give more than it has
        shifted[best] -= moved
        shifted[0] += moved
    return shifted


def _end(profile: _Profile, critical: float, a: float, b: float) -> float:
    """The score in [a, b] where the deviance crosses ``critical`` (one end of the interval)."""
    return float(brentq(lambda s: profile.deviance(s) - critical, a, b, xtol=1e-10))


class _Profile:
    """The multinomial profile log-likelihood of the mean score of one tally."""

    def __init__(self, counts: Sequence[float]) -> None:
        size = len(counts)
        total = float(sum(counts))
        # Only seen outcomes enter the likelihood; unseen ones may take mass only at the ends.
        self.seen = [(k / (size - 1), c / total, float(c)) for k, c in enumerate(counts) if c > 0]
        self.mean = sum(a * p for a, p, _ in self.seen)
        self.best = sum(n * math.log(p) for _, p, n in self.seen)

    def log_likelihood(self, s: float) -> float:
        """The largest log-likelihood of any outcome distribution with mean score ``s``."""
        seen = self.seen
        # 1 + x·(a − s) > 0 for every outcome a in [0, 1], seen or not.
        lo, hi = -1.0 / (1.0 - s), 1.0 / s
        lo_free = hi_free = True  # the bracket end is the model's edge, not a seen outcome's bound
        for a, p, _ in seen:
            b = a - s
            # At an interior root every pₖ ≤ 1, so 1 + x·bₖ ≥ p̂ₖ: this keeps x off the poles.
            if b > 0.0 and (p - 1.0) / b >= lo:
                lo, lo_free = (p - 1.0) / b, False
            elif b < 0.0 and (p - 1.0) / b <= hi:
                hi, hi_free = (p - 1.0) / b, False

        def secular(x: float) -> float:
            return sum(p * (a - s) / (1.0 + x * (a - s)) for a, p, _ in seen)

        if lo_free and secular(lo) <= 0.0:
            x = lo  # the seen outcomes cannot reach s: the unseen best outcome takes the rest
        elif hi_free and secular(hi) >= 0.0:
            x = hi  # likewise the unseen worst outcome
        else:
            x = float(brentq(secular, lo, hi, xtol=1e-14, maxiter=500))
        return sum(n * math.log(p / (1.0 + x * (a - s))) for a, p, n in seen)

    def deviance(self, s: float) -> float:
        """``2·(ℓ(ŝ) − ℓ(s))``: zero at the observed mean, growing away from it."""
        if s == self.mean:
            return 0.0  # also where ŝ is 0 or 1 and the dual below has no room
        return max(0.0, 2.0 * (self.best - self.log_likelihood(s)))

    def signed_root(self, s: float) -> float:
        """``sign(ŝ − s)·√deviance(s)``: a standard normal deviate under the model."""
        if self.mean == s:
            return 0.0
        root = math.sqrt(self.deviance(s))
        return root if self.mean > s else -root
