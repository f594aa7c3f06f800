"""Idempotent bot registration for launchers: keep a working token, register, or reissue.

``arena demo`` and ``arena bots add --if-missing`` (the docker-compose init
step) both need "make sure bot NAME exists and give me a token that works",
run after run, without a human copying tokens around. The store keeps only a
hash of each token, so a launcher remembers tokens in a private file (mode
0600) and this module checks them against the store::

    token, action = await ensure_bot(store, "mcts-200", remembered_token)
    # action: "kept" (the remembered token works), "added" (new bot),
    #         "reissued" (the bot existed but the token was lost: a new one replaces it)

Reissuing (``Store.reset_token``) also reactivates a removed bot: a launcher
that is told to run a bot wants it playing. Errors: ``InvalidBotNameError``
(a ``ValueError``) for an invalid name, ``OSError`` when a token file cannot
be written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from arena.errors import BotExistsError
from arena.store import Store

Action = Literal["kept", "added", "reissued"]

TOKEN_FILE_MODE = 0o600
"""Token files are readable by their owner only: a token is a password."""


async def ensure_bot(store: Store, name: str, token: str | None = None) -> tuple[str, Action]:
    """A working token for bot ``name``: ``token`` if it still works, else a new one."""
    if token and await store.authenticate(name, token) is not None:
        return token, "kept"
    try:
        return await store.add_bot(name), "added"
    except BotExistsError:
        return await store.reset_token(name, reactivate=True), "reissued"


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` with mode 0600, atomically (never a half-written token)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, TOKEN_FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, TOKEN_FILE_MODE)  # O_CREAT's mode is masked by the umask
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def read_token_file(path: Path) -> str | None:
    """The token stored in a one-token file, or None when it is missing or empty."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return text or None


def read_token_map(path: Path) -> dict[str, str]:
    """Name -> token from a JSON token file; empty when missing or unreadable as JSON."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def write_token_map(path: Path, tokens: dict[str, str]) -> None:
    """Store name -> token as JSON in a private (0600) file."""
    write_private(path, json.dumps(dict(sorted(tokens.items())), indent=2) + "\n")
