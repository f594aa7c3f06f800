"""A fast path for the one message a server parses thousands of times a second: ``move``.

``parse_client_message`` runs every frame through the JSON decoder and the
field specs: about 14 us for a move, most of it spent on generality a move
in its usual form does not need. ``parse_compact_move`` recognises exactly
the compact form ``Move.to_json`` writes (and so every client built on this
package, the bench's included)::

    {"type":"move","match_id":"m12","ply":7,"move":3}
    {"type":"move","match_id":"m12","ply":7,"move":3,"id":"r42"}

with one regular expression and builds the same ``Move`` the full parser
would. Anything else (other key orders, whitespace, escapes, an
``analysis``, a number out of range) gets None, and the caller parses the
frame the long way, so what is accepted and every error stay exactly those
of the full parser; a property test holds the two to that.
"""

from __future__ import annotations

import re

from protocol.messages.client import Move
from protocol.messages.codes import MAX_MOVE, MAX_PLY
from protocol.messages.values import SERVER_ID_PATTERN

_UNESCAPED_REQUEST_ID = r"[!#-\[\]-~]{1,64}"
"""``REQUEST_ID_PATTERN`` minus the quote and the backslash, which arrive escaped."""


def _decimal(largest: int) -> str:
    """A JSON integer from 0 with at most as many digits as ``largest`` (range checked after)."""
    return f"(0|[1-9][0-9]{{0,{len(str(largest)) - 1}}})"


_COMPACT_MOVE = re.compile(
    rf'\{{"type":"move","match_id":"({SERVER_ID_PATTERN})"'
    rf',"ply":{_decimal(MAX_PLY)},"move":{_decimal(MAX_MOVE)}'
    rf'(?:,"id":"({_UNESCAPED_REQUEST_ID})")?\}}'
)


def parse_compact_move(text: str) -> Move | None:
    """The ``Move`` in ``text`` if it is in the compact form, else None (parse it fully)."""
    found = _COMPACT_MOVE.fullmatch(text)
    if found is None:
        return None
    match_id, ply_text, move_text, request_id = found.groups()
    ply, move = int(ply_text), int(move_text)
    if ply > MAX_PLY or move > MAX_MOVE:
        return None  # the full parser words the range error
    return Move(match_id=match_id, ply=ply, move=move, id=request_id)
