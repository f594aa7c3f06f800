"""Random tokens and match ids, and the stored form of a bot token."""

from __future__ import annotations

import hashlib
import secrets


def new_match_id() -> str:
    """A fresh match id (8 random bytes as text)."""
    return random_text(8)


def random_text(nbytes: int) -> str:
    """``nbytes`` random bytes as URL-safe text that never starts with ``-``.

    Tokens and match ids are typed on command lines (``--token T``, ``arena
    watch ID``), where argparse would take a leading ``-`` for an option; one
    draw in 64 would otherwise start with one.
    """
    while True:
        text = secrets.token_urlsafe(nbytes)
        if not text.startswith("-"):
            return text


def new_token() -> str:
    """A fresh bot token: 256 random bits."""
    return random_text(32)


def hash_token(token: str) -> str:
    """The stored form of a bot token: its SHA-256 hex digest.

    Tokens carry 256 random bits, so a fast hash is enough: there is no
    dictionary to guess from.
    """
    return hashlib.sha256(token.encode()).hexdigest()
