"""Plain text tables for the command line."""

from __future__ import annotations


def format_table(header: list[str], rows: list[list[str]]) -> str:
    """A plain left-aligned text table."""
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    )


def rating_cell(rating: float, ci95: float | None, provisional: bool | None) -> str:
    """A fitted rating as shown on the command line: ``1642 ± 51``, `` ?`` when provisional."""
    if ci95 is None:
        return f"{rating:.0f}"
    return f"{rating:.0f} ± {ci95:.0f}" + (" ?" if provisional else "")
