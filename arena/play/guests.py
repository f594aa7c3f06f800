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

GUEST_ACCOUNT = "guest"
"""The account every guest's matches are recorded under; no bot can be registered as it."""

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
