"""The search a bot reported with a move, as the store keeps it: bounded compact JSON text.

A move's ``analysis`` is stored in ``moves.analysis``, in the same group
commit as the move. It is kept as compact JSON text, made once when the move
is recorded: the text then travels through the buffer, the writer process
and the recovery journal as one string, and is parsed only when someone
reads the match. A report that arrived in compact form within the bounds is
stored as the bot sent it (``Analysis.text``: decoded and checked once, never
written again); any other is written by the protocol's writer (``jsontext``).

Bounds: the ``STORED_MOVES`` most visited candidates (a larger report is
trimmed, never refused), the protocol's own bound on ``tree``
(``MAX_TREE_NODES``), and ``STORED_TEXT_BYTES`` for a text kept as sent (a
longer one, e.g. numbers written with many digits, is written again). So a
stored analysis is at most a few KB; the figures per move are in docs/http.md.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from protocol.messages import Analysis
from protocol.messages.jsontext import WRITERS

STORED_MOVES = 16
"""Most candidate moves kept per stored analysis: the most visited ones."""

STORED_TEXT_BYTES = 8192
"""Longest report text stored as the bot sent it (ASCII: characters are bytes): what the
protocol's writer makes of the longest valid report of ``STORED_MOVES`` candidates (every
field, every number at its longest) is 8,171 bytes, so a stored text is never longer."""

_write = WRITERS[Analysis]


def search_text(analysis: Analysis | None) -> str | None:
    """The stored form of ``analysis``: compact JSON, the candidates cut to ``STORED_MOVES``."""
    if analysis is None:
        return None
    if analysis.candidate_count > STORED_MOVES:
        # Stable: among equally visited candidates the bot's own order decides.
        kept = sorted(analysis.moves, key=lambda stat: -stat.visits)[:STORED_MOVES]
        return _write(replace(analysis, moves=tuple(kept), text=None))
    text = analysis.text
    if text is not None and len(text) <= STORED_TEXT_BYTES:
        return text
    return _write(analysis)


def search_json(text: str | None) -> dict[str, Any] | None:
    """A stored analysis as a JSON object (None when the move had none)."""
    return None if text is None else dict(json.loads(text))
