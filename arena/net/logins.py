"""Logins that stop holding: bots removed, or whose token was reset, while connected.

``arena bots remove`` and ``arena bots token NAME --reset`` change only the
database, which several servers may share, so every server asks it now and
then (``ArenaConfig.login_recheck_s``; one read for all the bots online,
``Store.revoked_logins``) and closes the connections whose login no longer
holds. Only the hash of each login's token is kept here, never the token.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Protocol, TypeVar

from arena.store.tokens import hash_token

log = logging.getLogger(__name__)

C = TypeVar("C")


class Revoker(Protocol):
    """Tells which logins no longer hold (``Store.revoked_logins``)."""

    async def revoked_logins(self, logins: Mapping[str, str]) -> set[str]:
        """Of ``logins`` (name -> ``hash_token`` of its login token), the bots removed or
        whose token was reset since."""
        ...


class Logins:
    """The token hash each bot online logged in with, checked against the database."""

    def __init__(self, revoker: Revoker) -> None:
        self._revoker = revoker
        self._hashes: dict[str, str] = {}
        self._checking = False

    def logged_in(self, name: str, token: str) -> None:
        """``name`` is online now, logged in with ``token``."""
        self._hashes[name] = hash_token(token)

    def left(self, name: str) -> None:
        """``name`` is no longer online."""
        self._hashes.pop(name, None)

    async def revoked(self, online: Mapping[str, C]) -> list[C]:
        """Of ``online`` (bot name -> its connection), the connections to close.

        Empty while an earlier check still runs, and when the database cannot
        be read (the store reports its own health; the next check tries again).
        """
        if self._checking or not online:
            return []
        self._checking = True
        # Names, connections and hashes as of one moment: a login that completes during
        # the read belongs to a newer connection, judged by the next check.
        snapshot = dict(online)
        logins = {name: self._hashes[name] for name in snapshot if name in self._hashes}
        try:
            revoked = await self._revoker.revoked_logins(logins)
        except Exception as exc:
            log.debug("login recheck failed: %s", exc)
            return []
        finally:
            self._checking = False
        return [snapshot[name] for name in sorted(revoked)]
