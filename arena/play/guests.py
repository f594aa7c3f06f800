"""Guests: people who play a bot from the web viewer, without an account or a token.

A guest connection (``hello`` role ``guest``) is named by the server,
``guest.`` and random letters, a name no bot can have (a registered name has
no ``.``), so a guest's moves can only ever be refereed in its own matches.
A guest may only challenge an online bot that accepts guests in that game;
its matches are never rated, and the store records every guest under the
one account ``GUEST_ACCOUNT``.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from arena.store.accounts import GUEST_ACCOUNT
from protocol.messages import TimeControl

if TYPE_CHECKING:
    from arena.play.lobby import TimeLimits

GUEST_PREFIX = "guest."
"""How a guest's live name starts (``guest.3f9a1c``)."""


def new_guest_name() -> str:
    """A fresh live name for a guest connection."""
    return GUEST_PREFIX + secrets.token_hex(4)


def is_guest(name: str) -> bool:
    """Whether ``name`` is a guest's live name."""
    return name.startswith(GUEST_PREFIX)


def recorded_name(name: str) -> str:
    """The account a player's matches are stored under: ``GUEST_ACCOUNT`` for any guest."""
    return GUEST_ACCOUNT if is_guest(name) else name


GUEST_MAX_MOVE_MS = 60_000
"""The longest time a move a guest game may have (either side)."""
GUEST_MAX_BANK_MS = 300_000
"""The largest time bank a guest game may give each side: with the moves' own time, what
bounds a whole guest game (``docs/operations.md``, "Limits")."""
GUEST_MAX_GAMES = 100
"""Guest games at once on one server."""
GUEST_MAX_GAMES_PER_BOT = 2
"""Guest games at once against one bot (its ``max_matches`` also applies)."""


@dataclass(frozen=True, slots=True)
class GuestLimits:
    """What guests may ask for (``ArenaConfig.guests``; defaults above)."""

    max_move_ms: int = GUEST_MAX_MOVE_MS
    max_bank_ms: int = GUEST_MAX_BANK_MS
    max_games: int = GUEST_MAX_GAMES
    max_games_per_bot: int = GUEST_MAX_GAMES_PER_BOT
    games_per_s: float = 1.0 / 30.0
    """Guest games (challenges) per address and second, on average, after the burst."""
    games_burst: int = 4
    """Guest games (challenges) an address may start at once."""
    idle_s: float = 120.0
    """A guest neither playing nor waiting for an answer is closed after this long."""

    def time_limits(self, limits: TimeLimits) -> TimeLimits:
        """``limits`` narrowed to what a guest game may have (its default capped too)."""
        default = limits.default
        capped = TimeControl(
            move_ms=min(default.move_ms, self.max_move_ms),
            bank_ms=min(default.bank_ms, self.max_bank_ms),
        )
        return replace(
            limits,
            default=capped,
            max_move_ms=min(limits.max_move_ms, self.max_move_ms),
            max_bank_ms=min(limits.max_bank_ms, self.max_bank_ms),
        )
