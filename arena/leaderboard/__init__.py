"""Fitted leaderboards with error bars, head-to-head records and bot pages (read models).

``Leaderboards`` caches one ``Board`` per game (``arena.leaderboard.cache``),
``head_to_head`` reads two bots' record off a board, ``BotProfiles`` builds
bot pages. The statistics are ``arena.stats``; the data comes from the store.
"""

from arena.leaderboard.board import Board, FittedDifference, HeadToHead, build_board, head_to_head
from arena.leaderboard.cache import Leaderboards
from arena.leaderboard.profile import BotProfiles

__all__ = [
    "Board",
    "BotProfiles",
    "FittedDifference",
    "HeadToHead",
    "Leaderboards",
    "build_board",
    "head_to_head",
]
