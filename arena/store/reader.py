"""A read-only view of an arena database, for a helper process that reads it itself.

The leaderboard's fit process (``arena.leaderboard.fit_process``) reads each
board's inputs here rather than being sent them: a board of a long-running
arena holds one cell per pair of bots that have met (some 100,000 for 400
bots), and reading them in the server (SQLAlchemy builds a row object per
cell on the event loop's thread) held the loop for a quarter of a second per
refit. ``BoardInputsReader`` makes no tables, runs no migration and writes
nothing; its transactions are the store's read-only ones (``read_sessions``).
"""

from __future__ import annotations

from arena.store import queries
from arena.store.engine import make_engine, read_sessions
from arena.store.queries import PairCell
from arena.store.records import LeaderboardRow


class BoardInputsReader:
    """Reads leaderboard inputs from the database at ``url`` (unmasked), opened on first use.

    One event loop only: the engine's connections belong to the loop that
    made them (the fit process runs one loop for its whole life).
    """

    def __init__(self, url: str) -> None:
        self._engine = make_engine(url)
        self._sessions = read_sessions(self._engine)

    async def leaderboard_inputs(self, game: str) -> tuple[list[LeaderboardRow], list[PairCell]]:
        """``Store.leaderboard_inputs``: the board's rows and pair cells, in one transaction."""
        async with self._sessions() as session, session.begin():
            return await queries.leaderboard_inputs(session, game)

    async def close(self) -> None:
        """Close the engine's connections."""
        await self._engine.dispose()
