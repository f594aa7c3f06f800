"""Persistence for the arena: bots, matches, moves and Elo ratings over SQLAlchemy's asyncio API.

``Store.open(url)`` connects (SQLite file by default, ``postgresql+asyncpg://``
when one machine is outgrown), migrates the schema with the shipped Alembic
revisions, and hands out plain frozen records, never ORM objects.
"""

from arena.store.engine import DEFAULT_URL
from arena.store.records import (
    BotRecord,
    LeaderboardRow,
    MatchRecord,
    MatchSummary,
    MoveRecord,
    RatingChange,
    RatingHistoryEntry,
)
from arena.store.store import Store

__all__ = [
    "DEFAULT_URL",
    "BotRecord",
    "LeaderboardRow",
    "MatchRecord",
    "MatchSummary",
    "MoveRecord",
    "RatingChange",
    "RatingHistoryEntry",
    "Store",
]
