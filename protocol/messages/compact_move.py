"""A fast path for the one message a server parses thousands of times a second: ``move``.

``parse_client_message`` runs every frame through the JSON decoder and the
field specs: about 14 us for a move, most of it spent on generality a move
in its usual form does not need. ``parse_compact_move`` recognises exactly
the compact form ``Move.to_json`` writes (and so every client built on this
package, the bench's included)::

    {"type":"move","match_id":"m12","ply":7,"move":3}
    {"type":"move","match_id":"m12","ply":7,"move":3,"id":"r42"}

with one regular expression and builds the same ``Move`` the full parser
would. Anything else (other key orders, whitespace, escapes, a number out
of range) gets None, and the caller parses the frame the long way, so what
is accepted and every error stay exactly those of the full parser; a
property test holds the two to that.

A move with an ``analysis`` in the same compact form (``..."move":3,
"analysis":{...}}``, an ``id`` last) is recognised too. A report in the
form the protocol's writers make is checked in its text and decoded only
when read (``report_text.checked_report``); any other is decoded by the
plain C decoder (no per-object hook, no nesting pre-scan: a valid report
nests three levels) and checked once by ``search.fast_analysis``. Keys are
counted against the text's quotes, so a repeated key (which the plain
decoder would silently merge) sends the frame the long way. The analysis
keeps its text (``Analysis.text``) when that text has no whitespace and no
escapes, so the store saves it without writing the JSON again.
"""

from __future__ import annotations

import json
import re

from protocol.messages.client import Move
from protocol.messages.codes import MAX_MOVE, MAX_PLY
from protocol.messages.report_text import checked_report
from protocol.messages.search import fast_analysis
from protocol.messages.values import SERVER_ID_PATTERN, Analysis, MoveStat

_UNESCAPED_REQUEST_ID = r"[!#-\[\]-~]{1,64}"
"""``REQUEST_ID_PATTERN`` minus the quote and the backslash, which arrive escaped."""


def _decimal(largest: int) -> str:
    """A JSON integer from 0 with at most as many digits as ``largest`` (range checked after)."""
    return f"(0|[1-9][0-9]{{0,{len(str(largest)) - 1}}})"


_COMPACT_MOVE = re.compile(
    rf'\{{"type":"move","match_id":"({SERVER_ID_PATTERN})"'
    rf',"ply":{_decimal(MAX_PLY)},"move":{_decimal(MAX_MOVE)}'
    r'(?:,"analysis":(\{.*\}))?'  # greedy: the id, if any, is what follows the last '}'
    rf'(?:,"id":"({_UNESCAPED_REQUEST_ID})")?\}}',
    re.DOTALL,
)

_PLAIN = json.JSONDecoder()
"""The C decoder without hooks: repeated keys and nesting are checked apart (above)."""


def parse_compact_move(text: str) -> Move | None:
    """The ``Move`` in ``text`` if it is in the compact form, else None (parse it fully)."""
    found = _COMPACT_MOVE.fullmatch(text)
    if found is None:
        return None
    match_id, ply_text, move_text, analysis_text, request_id = found.groups()
    ply, move = int(ply_text), int(move_text)
    if ply > MAX_PLY or move > MAX_MOVE:
        return None  # the full parser words the range error
    analysis = None
    if analysis_text is not None:
        analysis = _compact_analysis(analysis_text)
        if analysis is None:
            return None
    return Move(match_id=match_id, ply=ply, move=move, analysis=analysis, id=request_id)


def _compact_analysis(text: str) -> Analysis | None:
    """The ``Analysis`` in ``text`` if it is valid, plain and without repeated keys, else None."""
    checked = checked_report(text)  # the usual form, checked without decoding it
    if checked is not None:
        return checked
    if not text.isascii():
        return None
    try:
        data = _PLAIN.decode(text)
    except (ValueError, RecursionError):  # the full parser words it
        return None
    plain = not (" " in text or "\\" in text or "\n" in text or "\t" in text or "\r" in text)
    analysis = fast_analysis(data, Analysis, MoveStat, text if plain else None)
    if analysis is None:
        return None
    # Every quote of a valid report is one of its keys' two (it has no string values), so
    # fewer keys than half the quotes means a key the decoder merged away.
    keys = len(data) + sum(map(len, data.get("moves", ()))) + sum(map(len, data.get("tree") or ()))
    return analysis if 2 * keys == text.count('"') else None
