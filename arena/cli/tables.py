"""Plain text tables for the command line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def format_table(header: list[str], rows: list[list[str]]) -> str:
    """A plain left-aligned text table."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    )


def grouped_tables(
    header: list[str], entries: list[dict[str, Any]], row: Callable[[dict[str, Any]], list[str]]
) -> str:
    """Leaderboard entries (as JSON, group by group) as one table per group: bots that games
    do not connect are never ranked in one list; each later table comes under its note."""
    from arena.leaderboard.board import group_note

    groups: dict[int, list[dict[str, Any]]] = {}
    for entry in entries:
        groups.setdefault(entry.get("group") or 0, []).append(entry)
    tables = []
    for label, members in groups.items():
        table = format_table(header, [row(entry) for entry in members])
        note = group_note(label, members[0]["games"])
        tables.append(table if note is None else f"{note}\n{table}")
    return "\n\n".join(tables)


def rating_cell(rating: float, ci95: float | None, provisional: bool | None) -> str:
    """A fitted rating as shown on the command line: ``1642 ± 51``, `` ?`` when provisional."""
    if ci95 is None:
        return f"{rating:.0f}"
    return f"{rating:.0f} ± {ci95:.0f}" + (" ?" if provisional else "")
