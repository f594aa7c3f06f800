"""Persistence for the arena: bots, matches, moves and Elo ratings over SQLAlchemy's asyncio API.

``Store.open(url)`` connects (SQLite file by default, ``postgresql+asyncpg://``
when one machine is outgrown), migrates the schema with the shipped Alembic
revisions, replays a recovery journal left by an outage, and hands out plain
frozen records, never ORM objects. A serving store claims the database as a
node (``claim_node``) and reports its ``health`` (``StoreHealth``).
"""

from arena.store.engine import DEFAULT_URL
from arena.store.health import HealthState, StoreHealth, database_outage
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
    "HealthState",
    "LeaderboardRow",
    "MatchRecord",
    "MatchSummary",
    "MoveRecord",
    "RatingChange",
    "RatingHistoryEntry",
    "Store",
    "StoreHealth",
    "database_outage",
]
