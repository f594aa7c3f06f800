"""The ladder: MCTS at doubling simulation budgets against fixed anchors, and its report.

``arena ladder`` runs a ``ladder`` tournament (``run --local``) whose seats are
the anchors (``random``, ``greedy``, ``alphabeta``) followed by ``mcts`` at
each budget, weakest first; each bot plays the next two on the ladder. Then
it fits every game once more with a reference bot pinned to Elo 0 (by
default the smallest budget: ``random`` loses nearly every game, so a
difference to it is known only loosely, and every interval measured from it
would carry that) and writes into the report folder:

- ``ladder.svg``: Elo against simulations per move, log scale, with 95%
  intervals of the difference to the reference, the anchors as dashed lines;
- ``ladder.md``: the same as a table, with the command that made it, and each
  meeting's Elo difference from its own games (``elo_interval``);
- ``ladder.json``: the tournament's whole status object.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from arena.stats import PairResult, fit_ratings

DEFAULT_SIMS = (50, 100, 200, 400, 800, 1600, 3200, 6400, 12800)
ANCHORS = ("random", "greedy", "alphabeta")


def anchor_spec(anchor: str, move_ms: int) -> str:
    """The strategy spec of an anchor (alpha-beta searches well inside the move time)."""
    if anchor == "alphabeta":
        return f"alphabeta:time_ms={max(5, min(100, move_ms // 10))}"
    return anchor


def mcts_spec(sims: int) -> str:
    """The strategy spec of one rung: one worker, so bots do not fight over the cores."""
    return f"mcts:sims={sims},workers=1"


def ladder_specs(sims: Sequence[int], anchors: Sequence[str], move_ms: int) -> list[str]:
    """Every seat's spec, anchors (``random`` first) then the budgets in increasing order."""
    return [anchor_spec(a, move_ms) for a in anchors] + [mcts_spec(n) for n in sorted(sims)]


@dataclass(frozen=True, slots=True)
class Rung:
    """One bot's fitted rating (random = 0) and 95% half-width."""

    bot: str
    rating: float
    ci95: float
    games: int
    sims: int | None
    """Simulations per move; None for an anchor."""


def rungs(status: dict[str, Any], sims_of: dict[str, int], reference: str) -> list[Rung]:
    """The ladder's lines, anchors first, then by budget: one fit of every game with the
    ``reference`` bot pinned to 0, so each interval is that of the difference to it."""
    cells = [
        PairResult(m["bots"][0], m["bots"][1], m["wins"], m["draws"], m["losses"])
        for m in status["meetings"]
    ]
    bots = [entry["name"] for entry in status["bots"]]
    fit = fit_ratings(cells, bots=bots, anchor=reference, anchor_rating=0.0)
    lines = [
        Rung(line.name, line.rating, line.ci95, line.games, sims_of.get(line.name))
        for line in fit.ratings
    ]
    return sorted(lines, key=lambda r: (r.sims is not None, r.sims or 0, r.rating))


def write_report(
    out: Path, status: dict[str, Any], lines: list[Rung], reference: str, command: str
) -> list[Path]:
    """Write ``ladder.svg``, ``ladder.md`` and ``ladder.json`` into ``out``; their paths."""
    out.mkdir(parents=True, exist_ok=True)
    svg, table, data = out / "ladder.svg", out / "ladder.md", out / "ladder.json"
    title = f"{status['game']}: Elo against MCTS simulations ({reference} = 0)"
    svg.write_text(svg_plot(lines, title, f"Elo ({reference} = 0), 95% intervals"), "utf-8")
    table.write_text(markdown_table(lines, status, reference, command), "utf-8")
    data.write_text(json.dumps(status, indent=2) + "\n", "utf-8")
    return [svg, table, data]


def markdown_table(
    lines: list[Rung], status: dict[str, Any], reference: str, command: str
) -> str:
    """The ladder as a Markdown table, with how it was made."""
    progress = status["progress"]
    rows = [
        f"| bot | simulations | Elo ({reference} = 0) | ± 95% | games |",
        "|---|---:|---:|---:|---:|",
    ]
    rows += [
        f"| {r.bot} | {r.sims if r.sims is not None else '-'} | {r.rating:+.0f} "
        f"| {r.ci95:.0f} | {r.games} |"
        for r in lines
    ]
    text = [
        f"# Ladder: {status['game']}",
        "",
        f"Made with `{command}`: {progress['counted']} games,"
        f" openings {status['openings']['source']}.",
        "",
        *rows,
        "",
        "Each meeting's own games (`elo_interval` of its colour-swapped pairs):",
        "",
        *meeting_rows(status["meetings"]),
    ]
    return "\n".join(text) + "\n"


def meeting_rows(meetings: list[dict[str, Any]]) -> list[str]:
    """Per two bots that met: W/D/L and the Elo difference [95% interval] and LOS of their games."""
    from arena.stats.interval import interval_text  # numpy and scipy load only when needed

    rows = ["| bots | W/D/L | pairs | Elo [95%] | LOS |", "|---|---:|---:|---:|---:|"]
    for m in meetings:
        interval = m["elo_interval"]
        los = "" if interval["too_few"] else f"{100 * interval['los']:.1f}%"
        rows.append(
            f"| {m['bots'][0]} - {m['bots'][1]} | {m['wins']}/{m['draws']}/{m['losses']} "
            f"| {m['pairs']} | {interval_text(interval)} | {los} |"
        )
    return rows


def svg_plot(
    lines: list[Rung], title: str, y_label: str, width: int = 720, height: int = 440
) -> str:
    """Elo against simulations (log₂ x axis) with 95% bars; anchors as dashed lines."""
    budgets = [r for r in lines if r.sims is not None]
    anchors = [r for r in lines if r.sims is None]
    # Room on the right for the anchors' labels (about 7 px a character at 12 px).
    longest = max((len(f"{r.bot} {r.rating:+.0f}") for r in anchors), default=0)
    left, right, top, bottom = 70, max(40, 14 + 7 * longest), 40, 60
    xs = [math.log2(r.sims) for r in budgets if r.sims] or [0.0, 1.0]
    x_low, x_high = min(xs) - 0.5, max(xs) + 0.5
    ys = [v for r in lines for v in (r.rating - r.ci95, r.rating + r.ci95)] or [0.0, 1.0]
    y_low, y_high = _nice_range(min(ys), max(ys))

    def x_of(sims: float) -> float:
        return left + (math.log2(sims) - x_low) / (x_high - x_low) * (width - left - right)

    def y_of(elo: float) -> float:
        return top + (y_high - elo) / (y_high - y_low) * (height - top - bottom)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2:.0f}" y="22" text-anchor="middle" font-size="15">'
        f"{escape(title)}</text>",
    ]
    for tick in _ticks(y_low, y_high):
        y = y_of(tick)
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:+.0f}</text>'
        )
    for r in budgets:
        assert r.sims is not None
        x = x_of(r.sims)
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{height - bottom}" stroke="#f0f0f0"/>'
            f'<text x="{x:.1f}" y="{height - bottom + 16}" text-anchor="middle">{r.sims}</text>'
        )
    for r in anchors:
        y = y_of(r.rating)
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="#b35806" stroke-dasharray="6 4"/>'
            f'<text x="{width - right + 6}" y="{y + 4:.1f}" fill="#b35806">'
            f"{escape(r.bot)} {r.rating:+.0f}</text>"
        )
    points = " ".join(f"{x_of(r.sims or 1):.1f},{y_of(r.rating):.1f}" for r in budgets)
    if points:
        parts.append(f'<polyline points="{points}" fill="none" stroke="#2166ac" stroke-width="2"/>')
    for r in budgets:
        x = x_of(r.sims or 1)
        low, high = y_of(r.rating - r.ci95), y_of(r.rating + r.ci95)
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{low:.1f}" y2="{high:.1f}" stroke="#2166ac"/>'
            f'<line x1="{x - 5:.1f}" x2="{x + 5:.1f}" y1="{low:.1f}" y2="{low:.1f}" '
            f'stroke="#2166ac"/><line x1="{x - 5:.1f}" x2="{x + 5:.1f}" y1="{high:.1f}" '
            f'y2="{high:.1f}" stroke="#2166ac"/>'
            f'<circle cx="{x:.1f}" cy="{y_of(r.rating):.1f}" r="4" fill="#2166ac">'
            f"<title>{escape(r.bot)}: {r.rating:+.0f} ± {r.ci95:.0f} ({r.games} games)</title>"
            "</circle>"
        )
    parts += [
        f'<line x1="{left}" x2="{width - right}" y1="{height - bottom}" y2="{height - bottom}" '
        'stroke="black"/>',
        f'<line x1="{left}" x2="{left}" y1="{top}" y2="{height - bottom}" stroke="black"/>',
        f'<text x="{(left + width - right) / 2:.0f}" y="{height - 18}" text-anchor="middle">'
        "MCTS simulations per move (log scale)</text>",
        f'<text transform="translate(18 {(top + height - bottom) / 2:.0f}) rotate(-90)" '
        f'text-anchor="middle">{escape(y_label)}</text>',
        "</svg>",
    ]
    return "\n".join(parts) + "\n"


def _nice_range(low: float, high: float) -> tuple[float, float]:
    step = _step(high - low)
    return math.floor(low / step) * step, math.ceil(high / step) * step


def _step(span: float) -> float:
    raw = max(span, 1.0) / 6
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)


def _ticks(low: float, high: float) -> list[float]:
    step = _step(high - low)
    count = round((high - low) / step)
    return [low + k * step for k in range(count + 1)]
