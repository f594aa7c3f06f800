"""Exceptions raised by the ``arena`` package.

The tree::

    ArenaError                          root of everything raised here
    ├── StartupError                    the server cannot start as configured (port, TLS, ...)
    └── StoreError                      the persistence layer refused or failed
        ├── BotExistsError              a bot by that name is already registered
        ├── NoSuchBotError              no active bot by that name
        ├── NoSuchMatchError            no match with that id
        └── MatchAlreadyFinishedError   the match was already finished or aborted

Database driver errors other than these are not wrapped: they mean the
database itself is unwell, and the caller should treat them as such.
"""

from __future__ import annotations


class ArenaError(Exception):
    """Root of every exception raised by the ``arena`` package."""


class StoreError(ArenaError):
    """The persistence layer refused an operation or could not perform it."""


class BotExistsError(StoreError):
    """A bot with this name is already registered (removed bots keep their name)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"a bot named {name!r} already exists")
        self.name = name

    def __reduce__(self) -> tuple[type[BotExistsError], tuple[str]]:
        return type(self), (self.name,)


class NoSuchBotError(StoreError):
    """No active bot is registered under this name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no active bot named {name!r}")
        self.name = name

    def __reduce__(self) -> tuple[type[NoSuchBotError], tuple[str]]:
        return type(self), (self.name,)


class NoSuchMatchError(StoreError):
    """No match has this id."""

    def __init__(self, match_id: str) -> None:
        super().__init__(f"no match with id {match_id!r}")
        self.match_id = match_id

    def __reduce__(self) -> tuple[type[NoSuchMatchError], tuple[str]]:
        return type(self), (self.match_id,)


class MatchAlreadyFinishedError(StoreError):
    """The match is no longer live, so it cannot be finished (again)."""

    def __init__(self, match_id: str, status: str) -> None:
        super().__init__(f"match {match_id!r} is already {status}")
        self.match_id = match_id
        self.status = status

    def __reduce__(self) -> tuple[type[MatchAlreadyFinishedError], tuple[str, str]]:
        # Rebuilt from its fields: the SQLite writer process sends it across a pipe.
        return type(self), (self.match_id, self.status)


class StartupError(ArenaError):
    """The server cannot start as configured; the message is one line a person can act on."""
