"""Exceptions raised by the ``arena`` package.

The tree::

    ArenaError                          root of everything raised here
    ├── StartupError                    the server cannot start as configured (port, TLS, ...)
    ├── ConfigError                     a config file key or value, or an ARENA_* variable, is wrong
    ├── TournamentError                 a tournament cannot be created or changed as asked
    └── StoreError                      the persistence layer refused or failed
        ├── BotExistsError              a bot by that name is already registered
        ├── InvalidBotNameError         a new bot's name breaks the name rule (also a ValueError)
        ├── NoSuchBotError              no active bot by that name
        ├── NoSuchMatchError            no match with that id
        ├── MatchAlreadyFinishedError   the match was already finished or aborted
        ├── StoreStartError             the store cannot start (one line for the operator)
        │   ├── DatabaseOpenError       bad URL, or the database is missing or unreachable
        │   ├── NodeConflictError       another live arena node holds the database
        │   └── RecoveryJournalError    a recovery journal exists but cannot be replayed
        ├── StoreDegradedError          no new match: writes are failing (or far behind)
        ├── LeaseLostError              another node took this node's lease over
        └── EndNotCommittedError        the store closed before a match end was committed

Database driver errors other than these are not wrapped: they mean the
database itself is unwell, and the caller should treat them as such.
"""

from __future__ import annotations

from datetime import datetime


class ArenaError(Exception):
    """Root of every exception raised by the ``arena`` package."""


class StoreError(ArenaError):
    """The persistence layer refused an operation or could not perform it."""


class BotExistsError(StoreError):
    """A bot with this name is already registered (removed bots keep their name)."""

    def __init__(self, name: str, hint: str = "") -> None:
        super().__init__(f"a bot named {name!r} already exists" + (f"; {hint}" if hint else ""))
        self.name = name
        self.hint = hint

    def __reduce__(self) -> tuple[type[BotExistsError], tuple[str, str]]:
        return type(self), (self.name, self.hint)


class InvalidBotNameError(StoreError, ValueError):
    """A new bot's name breaks the rule (``protocol.messages.values.BOT_NAME_RULE``)."""

    def __init__(self, name: str, rule: str) -> None:
        super().__init__(f"{name!r} is not a valid bot name: use {rule}")
        self.name = name
        self.rule = rule

    def __reduce__(self) -> tuple[type[InvalidBotNameError], tuple[str, str]]:
        return type(self), (self.name, self.rule)


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


class StoreStartError(StoreError):
    """The store cannot start. ``str(error)`` is one line meant for the operator as is."""


class DatabaseOpenError(StoreStartError):
    """The database URL is unusable, or the database is missing, unwritable or unreachable."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"cannot open database {url}: {reason}")
        self.url = url
        """The URL with its password masked."""
        self.reason = reason


class NodeConflictError(StoreStartError):
    """Another live arena node holds the database (see ``docs/operations.md``)."""

    def __init__(
        self,
        url: str,
        node_id: str,
        pid: int,
        host: str,
        since: datetime,
        heartbeat_at: datetime,
        hint: str,
    ) -> None:
        super().__init__(
            f"database {url} is in use by arena node {node_id} (pid {pid} on {host},"
            f" since {since:%Y-%m-%d %H:%M:%S} UTC, last heartbeat"
            f" {heartbeat_at:%H:%M:%S} UTC); {hint}"
        )
        self.url = url
        self.node_id = node_id
        self.pid = pid
        self.host = host
        self.since = since
        self.heartbeat_at = heartbeat_at


class RecoveryJournalError(StoreStartError):
    """A recovery journal could not be replayed; the store refuses to start without it."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(
            f"cannot replay the recovery journal {path}: {reason}; the arena will not start"
            " until it is replayed (fix the cause and start again; moving the file away"
            " gives up the results it holds)"
        )
        self.path = path
        self.reason = reason


class StoreDegradedError(StoreError):
    """No new match now: the store's writes fail, or too many wait to be written."""


class LeaseLostError(StoreError):
    """This node's lease on the database was taken over by another node: it must stop."""


class EndNotCommittedError(StoreError):
    """The store closed before a match end could be committed; it went to the recovery journal."""

    def __init__(self, match_id: str, where: str) -> None:
        super().__init__(f"the end of match {match_id!r} was not committed; {where}")
        self.match_id = match_id
        self.where = where

    def __reduce__(self) -> tuple[type[EndNotCommittedError], tuple[str, str]]:
        return type(self), (self.match_id, self.where)


class StartupError(ArenaError):
    """The server cannot start as configured; the message is one line a person can act on."""


class ConfigError(ArenaError):
    """A config file, one of its keys or values, or an ``ARENA_*`` variable is unusable.

    The message is one line naming the file and key (or the variable).
    """


class TournamentError(ArenaError):
    """A tournament cannot be created or changed as asked; the message is one line."""
