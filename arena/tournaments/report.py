"""A tournament's status as text: what ``arena tournament status`` and ``run`` print.

Everything comes from the status object (``standings.build_status``), so the
terminal shows exactly what the API and the web page show.
"""

from __future__ import annotations

from typing import Any

from arena.cli.tables import format_table


def format_status(status: dict[str, Any]) -> str:
    """Progress, standings, crosstable, per-pair statistics and the SPRT, as text."""
    progress = status["progress"]
    title = status["name"] or f"tournament {status['id']}"
    lines = [
        f"{title} (#{status['id']}): {status['format']} {status['game']}, {status['status']}",
        f"games: {progress['done']}/{progress['total']} done ({progress['counted']} played, "
        f"{progress['forfeits']} forfeited, {progress['void']} void), "
        f"{progress['playing']} playing; complete game pairs: {progress['pairs_complete']}",
        f"openings: {status['openings']['source']} ({status['openings']['count']})",
    ]
    if status["sprt"] is not None:
        lines += ["", format_sprt(status["sprt"])]
    lines += ["", "standings (fitted rating ± 95%):", format_standings(status["standings"])]
    lines += ["", "crosstable (points of the row bot against the column bot):"]
    lines.append(format_crosstable(status["crosstable"]))
    if status["meetings"]:
        lines += ["", "per pair of bots (first bot's view):", format_meetings(status["meetings"])]
    return "\n".join(lines)


def signed(value: float) -> str:
    """``+12.3`` / ``-4.0``."""
    return f"{value:+.1f}"


def format_standings(rows: list[dict[str, Any]]) -> str:
    """The fitted rating table."""
    table = [
        [
            _rank(row),
            row["bot"] + (" (removed)" if row["removed"] else ""),
            f"{signed(row['rating'])} ± {row['ci95']:.1f}",
            f"{row['points']:g}/{row['scored_games']}",
            f"{row['wins']}/{row['draws']}/{row['losses']}",
        ]
        for row in rows
    ]
    return format_table(["rank", "bot", "rating", "points", "W/D/L"], table)


def _rank(row: dict[str, Any]) -> str:
    low, high = row["rank_low"], row["rank_high"]
    return f"{row['rank']}" if low == high else f"{row['rank']} ({low}-{high})"


def format_crosstable(crosstable: dict[str, Any]) -> str:
    """Row bot's points against each column bot, ``points/games``."""
    bots = crosstable["bots"]
    header = ["", *[f"{i + 1}" for i in range(len(bots))], "total"]
    rows = []
    for i, bot in enumerate(bots):
        cells = [
            "-" if cell is None else f"{cell['points']:g}/{cell['games']}"
            for cell in crosstable["cells"][i]
        ]
        cells[i] = "x"
        total = crosstable["totals"][i]
        rows.append([f"{i + 1} {bot}", *cells, f"{total['points']:g}/{total['games']}"])
    return format_table(header, rows)


def format_meetings(meetings: list[dict[str, Any]]) -> str:
    """Per two bots: W/D/L, pentanomial counts, Elo [95% interval] and LOS."""
    from arena.stats.interval import interval_text  # numpy and scipy load only when needed

    rows = [
        [
            f"{m['bots'][0]} - {m['bots'][1]}",
            f"{m['wins']}/{m['draws']}/{m['losses']}",
            " ".join(map(str, m["pentanomial"])),
            interval_text(m["elo_interval"]) + ("" if m["pairs"] else " (games)"),
            "" if m["elo_interval"]["too_few"] else f"{100 * m['elo_interval']['los']:.1f}%",
        ]
        for m in meetings
    ]
    return format_table(["pair", "W/D/L", "pentanomial", "elo [95%]", "LOS"], rows)


def format_sprt(sprt: dict[str, Any]) -> str:
    """The SPRT's hypotheses, LLR against its bounds, and the verdict."""
    verdict = sprt["verdict"]
    if verdict in ("H0", "H1"):
        said = f"{verdict} accepted after {sprt['verdict_games']} games"
    elif verdict is not None:
        said = "stopped at --max-games without a verdict"
    else:
        said = "no verdict yet"
    return (
        f"SPRT [{sprt['elo0']:g}, {sprt['elo1']:g}] ({sprt['model']}, alpha {sprt['alpha']:g}, "
        f"beta {sprt['beta']:g}): LLR {sprt['llr']:.3f} in [{sprt['lower']:.3f}, "
        f"{sprt['upper']:.3f}]; pentanomial {' '.join(map(str, sprt['pentanomial']))}; {said}"
    )


def format_listing(rows: list[dict[str, Any]]) -> str:
    """``arena tournament list``: the rows of ``GET /api/tournaments`` (``listing``), with
    the web list's columns: a finished tournament's games are the games it played."""
    table = [
        [
            str(row["id"]),
            row["name"] or "-",
            row["game"],
            row["format"],
            row["status"],
            games_cell(row),
            format_headline(row),
            row["created_at"][:16].replace("T", " "),
        ]
        for row in rows
    ]
    header = ["id", "name", "game", "format", "status", "games", "leader / verdict", "created"]
    return format_table(header, table)


def games_cell(row: dict[str, Any]) -> str:
    """``12/40`` while a tournament can still play, ``20`` once it is finished."""
    return str(row["games"]) if row["status"] == "finished" else f"{row['games']}/{row['total']}"


def format_headline(row: dict[str, Any]) -> str:
    """The list's "leader / verdict" cell (``standings.headline``), worded as the web list:
    an SPRT's verdict or where its LLR stands, else the leader's rating ± 95%."""
    sprt = row["sprt"]
    if sprt is not None:
        if sprt["verdict"] in ("H0", "H1"):
            return f"{sprt['verdict']} accepted after {sprt['verdict_games']} games"
        if sprt["verdict"] is not None:
            return f"stopped at max games, LLR {sprt['llr']:.2f}"
        return f"running, LLR {sprt['llr']:.2f} in [{sprt['lower']:.2f}, {sprt['upper']:.2f}]"
    leader = row["leader"]
    if leader is None:
        return "no games yet"
    return f"{leader['bot']} {leader['rating']:+.0f} ± {leader['ci95']:.0f}"


def progress_line(
    status: dict[str, Any], elapsed_s: float, done_before: int, width: int = 24
) -> str:
    """One line: a bar, games done/total, ETA from this run's pace, the leader with ±."""
    progress = status["progress"]
    done, total = progress["done"], max(progress["total"], 1)
    filled = min(width, round(width * done / total))
    bar = "#" * filled + "." * (width - filled)
    line = f"[{bar}] {done}/{progress['total']} games"
    run_done = done - done_before
    if run_done > 0 and done < total:
        line += f"  ETA {_duration(elapsed_s / run_done * (total - done))}"
    leader = status.get("leader")
    if leader is not None:
        line += f"  leader {leader['bot']} {signed(leader['rating'])} ± {leader['ci95']:.0f}"
    if status["sprt"] is not None:
        line += f"  LLR {status['sprt']['llr']:.2f}"
    return line + f"  ({progress['playing']} playing)"


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"
