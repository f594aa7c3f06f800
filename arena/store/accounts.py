"""The ``bots`` table's accounts: register, list, remove, reset a token, check logins.

``AccountStore`` (a base of ``Store``) keeps only a hash of each token
(``arena.store.tokens``). Names follow ``BOT_NAME_RULE``; the guest account
(``GUEST_ACCOUNT``), where guests' matches are recorded,
is created on first use and never gets a token anyone is told.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult, bindparam, select, update
from sqlalchemy.exc import IntegrityError

from arena.errors import BotExistsError, InvalidBotNameError, NoSuchBotError
from arena.store import queries
from arena.store.core import StoreCore
from arena.store.models import Bot
from arena.store.records import BotRecord
from arena.store.tokens import hash_token, new_token
from protocol.messages.values import BOT_NAME_RULE, NEW_BOT_NAME_PATTERN

GUEST_ACCOUNT = "guest"
"""The account every guest's matches are recorded under; no bot can be registered as it."""

_ACTIVE_TOKENS = select(Bot.name, Bot.token_hash).where(
    Bot.name.in_(bindparam("names", expanding=True)), Bot.active
)
"""Built once: the login recheck runs every few seconds, and a statement built per call is
cyclic garbage, which the server's collector frees only now and then (``HeapKeeper``)."""


def _now() -> datetime:
    return datetime.now(UTC)


class AccountStore(StoreCore):
    """The store's side of bot accounts; see the module docstring."""

    async def add_bot(self, name: str) -> str:
        """Register a bot and return its fresh token; only a hash of the token is kept.

        Raises ``InvalidBotNameError`` for a name that breaks ``BOT_NAME_RULE``
        and ``BotExistsError`` for a name taken, even by a removed bot.
        """
        check_bot_name(name)
        token = new_token()
        try:
            async with self._write() as session:
                if await session.scalar(select(Bot.id).where(Bot.name == name)) is not None:
                    raise BotExistsError(name)
                session.add(
                    Bot(name=name, token_hash=hash_token(token), created_at=_now(), active=True)
                )
        except IntegrityError as error:
            # Another process registered the same name between our check and insert.
            raise BotExistsError(name) from error
        return token

    async def _guest_account(self) -> int:
        """The id of ``GUEST_ACCOUNT``, created on first use (its token is never told)."""
        try:
            async with self._write() as session:
                bot_id = await session.scalar(select(Bot.id).where(Bot.name == GUEST_ACCOUNT))
                if bot_id is None:
                    guest = Bot(
                        name=GUEST_ACCOUNT,
                        token_hash=hash_token(new_token()),
                        created_at=_now(),
                        active=True,
                    )
                    session.add(guest)
                    await session.flush()
                    bot_id = guest.id
        except IntegrityError:
            # Another node created it between our read and insert.
            async with self._read() as session:
                bot_id = await session.scalar(select(Bot.id).where(Bot.name == GUEST_ACCOUNT))
        if bot_id is None:
            raise NoSuchBotError(GUEST_ACCOUNT)
        return bot_id

    async def list_bots(self, *, include_inactive: bool = False) -> list[BotRecord]:
        """Registered bots by name; removed ones only with ``include_inactive``."""
        async with self._read() as session:
            return await queries.list_bots(session, include_inactive)

    async def remove_bot(self, name: str) -> bool:
        """Disable a bot's account (history is kept); False when no active bot had that name."""
        async with self._write() as session:
            result = await session.execute(
                update(Bot)
                .where(Bot.name == name, Bot.active)
                .values(active=False)
                .execution_options(synchronize_session=False)
            )
            removed = cast(CursorResult[Any], result).rowcount == 1
        self._bot_ids.pop(name, None)
        return removed

    async def reset_token(self, name: str, *, reactivate: bool = False) -> str:
        """Give bot ``name`` a fresh token and return it; its old token stops working.

        A removed bot raises ``NoSuchBotError`` unless ``reactivate``, which
        brings it back with its matches and ratings. The guest account never
        gets a token (``InvalidBotNameError``): nobody may log in as it.
        """
        check_not_guest(name)
        token = new_token()
        async with self._write() as session:
            query = update(Bot).where(Bot.name == name)
            if not reactivate:
                query = query.where(Bot.active)
            result = await session.execute(
                query.values(token_hash=hash_token(token), active=True).execution_options(
                    synchronize_session=False
                )
            )
            if cast(CursorResult[Any], result).rowcount != 1:
                raise NoSuchBotError(name)
        return token

    async def revoked_logins(self, logins: Mapping[str, str]) -> set[str]:
        """Of ``logins`` (bot name -> ``hash_token`` of the token it logged in with), the
        revoked ones: bots removed, or whose token was reset, since they logged in."""
        names = list(logins)
        current: dict[str, str] = {}
        async with self._read() as session:
            for chunk in queries.in_chunks(names):
                rows = await session.execute(_ACTIVE_TOKENS, {"names": chunk})
                current.update((name, hashed) for name, hashed in rows)
        return {name for name, hashed in logins.items() if current.get(name) != hashed}


def check_bot_name(name: str) -> None:
    """Raise ``InvalidBotNameError`` unless ``name`` follows ``BOT_NAME_RULE``."""
    if re.fullmatch(NEW_BOT_NAME_PATTERN, name) is None:
        raise InvalidBotNameError(name, BOT_NAME_RULE)
    check_not_guest(name)


def check_not_guest(name: str) -> None:
    """Raise ``InvalidBotNameError`` for the guest account's name (in any case)."""
    if name.lower() == GUEST_ACCOUNT:
        raise InvalidBotNameError(
            name, f"another name: {GUEST_ACCOUNT!r} is where guests' matches are recorded"
        )
