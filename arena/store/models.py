"""The ORM models. The schema itself is owned by the Alembic migrations.

A test compares these models with the migrated schema (Alembic autogenerate
must find no difference), so a change here needs a new revision in
``migrations/versions``.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Double,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Explicit constraint names so PostgreSQL and SQLite agree with the migrations.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

MATCH_STATUSES = ("live", "finished", "aborted")
"""Every value ``matches.status`` may hold."""


class Base(DeclarativeBase):
    """Declarative base carrying the shared metadata."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Bot(Base):
    """A registered bot account; only a hash of its token is kept."""

    __tablename__ = "bots"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    active: Mapped[bool] = mapped_column(Boolean)


class Match(Base):
    """One match between two bots, live or over."""

    __tablename__ = "matches"
    __table_args__ = (
        CheckConstraint("status IN ('live', 'finished', 'aborted')", name="status"),
        Index("ix_matches_status_started_at", "status", "started_at"),
        Index("ix_matches_tournament_id_tournament_pair", "tournament_id", "tournament_pair"),
        Index("ix_matches_player0_id_player1_id_game", "player0_id", "player1_id", "game"),
        Index("ix_matches_player1_id_player0_id_game", "player1_id", "player0_id", "game"),
    )

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    game: Mapped[str] = mapped_column(String(32))
    player0_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    player1_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    move_ms: Mapped[int] = mapped_column(Integer)
    bank_ms: Mapped[int] = mapped_column(Integer)
    rated: Mapped[bool] = mapped_column(Boolean)
    status: Mapped[str] = mapped_column(String(16))
    winner: Mapped[int | None] = mapped_column(SmallInteger)
    result: Mapped[str | None] = mapped_column(String(8))
    termination: Mapped[str | None] = mapped_column(String(32))
    fault: Mapped[str | None] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(Text)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    node_id: Mapped[str | None] = mapped_column(String(128))
    """The arena node that runs (or ran) the match; NULL when written by an older arena."""
    opening: Mapped[str | None] = mapped_column(Text)
    """The moves the match started from, space-separated (NULL: the initial position).
    They are also the match's first ``moves`` rows, with no think time."""
    tournament_id: Mapped[int | None] = mapped_column(ForeignKey("tournaments.id"))
    """The tournament the match was played for (NULL: none)."""
    tournament_pair: Mapped[int | None] = mapped_column(Integer)
    """Its game pair in that tournament (``tournament_pairs.number``)."""


class Node(Base):
    """A running arena process and its lease on the database (see ``arena.store.nodes``)."""

    __tablename__ = "nodes"

    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    scope: Mapped[str] = mapped_column(String(128))
    """Where ``pid`` means something: the machine's boot and the process's pid namespace."""
    pid_start: Mapped[int | None] = mapped_column(BigInteger)
    """The process's start time in clock ticks since boot, which tells it from a reused pid."""
    exclusive: Mapped[bool] = mapped_column(Boolean)
    """True when the node claimed the whole database (no other node may join)."""
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    public_url: Mapped[str | None] = mapped_column(String(512))
    """Where bots reach the node (``ws://host:port``); set by nodes that share the database."""


class QueuedSeek(Base):
    """A seek waiting in the queue that nodes sharing a database pair from
    (``arena.cluster.seek_queue``); ``local_id`` is the seek's number on its node."""

    __tablename__ = "seek_queue"
    __table_args__ = (UniqueConstraint("node_id", "local_id"),)

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True
    )
    node_id: Mapped[str] = mapped_column(ForeignKey("nodes.id", ondelete="CASCADE"))
    local_id: Mapped[int] = mapped_column(Integer)
    bot: Mapped[str] = mapped_column(String(64))
    game: Mapped[str] = mapped_column(String(32))
    move_ms: Mapped[int] = mapped_column(Integer)
    bank_ms: Mapped[int] = mapped_column(Integer)
    rating: Mapped[float] = mapped_column(Double)
    movable: Mapped[bool] = mapped_column(Boolean)
    """False when the bot plays a match on its node: only that node may pair it."""


class Move(Base):
    """One move of one match; ``(match_id, ply)`` is unique."""

    __tablename__ = "moves"

    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id"), primary_key=True)
    ply: Mapped[int] = mapped_column(Integer, primary_key=True)
    player: Mapped[int] = mapped_column(SmallInteger)
    move: Mapped[int] = mapped_column(Integer)
    think_ms: Mapped[int] = mapped_column(Integer)
    rtt_ms: Mapped[int] = mapped_column(Integer)
    played_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    analysis: Mapped[str | None] = mapped_column(Text, nullable=True)
    """The mover's reported search as compact JSON (``arena.store.searches``), or NULL."""


class Rating(Base):
    """A bot's current rating and rated record in one game."""

    __tablename__ = "ratings"

    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), primary_key=True)
    game: Mapped[str] = mapped_column(String(32), primary_key=True)
    rating: Mapped[float] = mapped_column(Double)
    games: Mapped[int] = mapped_column(Integer)
    wins: Mapped[int] = mapped_column(Integer)
    draws: Mapped[int] = mapped_column(Integer)
    losses: Mapped[int] = mapped_column(Integer)


class RatingHistory(Base):
    """One rating change; ids increase in the order the changes committed."""

    __tablename__ = "rating_history"
    __table_args__ = (
        Index("ix_rating_history_bot_id_game", "bot_id", "game", "id"),
        Index("ix_rating_history_match_id", "match_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    game: Mapped[str] = mapped_column(String(32))
    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id"))
    before: Mapped[float] = mapped_column(Double)
    after: Mapped[float] = mapped_column(Double)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


TOURNAMENT_FORMATS = ("round-robin", "gauntlet", "sprt", "ladder")
"""Every value ``tournaments.format`` may hold."""

TOURNAMENT_STATUSES = ("pending", "running", "paused", "finished", "cancelled")
"""Every value ``tournaments.status`` may hold."""


class Tournament(Base):
    """A tournament: its settings, where it stands, and the node that runs it now."""

    __tablename__ = "tournaments"
    __table_args__ = (
        CheckConstraint(
            "format IN ('round-robin', 'gauntlet', 'sprt', 'ladder')", name="format"
        ),
        CheckConstraint(
            "status IN ('pending', 'running', 'paused', 'finished', 'cancelled')", name="status"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    game: Mapped[str] = mapped_column(String(32))
    format: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    games_per_pair: Mapped[int] = mapped_column(Integer)
    """Games each two bots play (round robin, gauntlet, ladder); 2 per pair for SPRT."""
    move_ms: Mapped[int] = mapped_column(Integer)
    bank_ms: Mapped[int] = mapped_column(Integer)
    concurrency: Mapped[int] = mapped_column(Integer)
    rated: Mapped[bool] = mapped_column(Boolean)
    openings: Mapped[str] = mapped_column(String(255))
    """Where the openings came from (``builtin:connect4-2ply``, a file name, ``none``)."""
    seed: Mapped[int] = mapped_column(Integer)
    """Seeds the order in which openings are drawn."""
    elo0: Mapped[float | None] = mapped_column(Double)
    elo1: Mapped[float | None] = mapped_column(Double)
    alpha: Mapped[float | None] = mapped_column(Double)
    beta: Mapped[float | None] = mapped_column(Double)
    sprt_model: Mapped[str | None] = mapped_column(String(16))
    max_games: Mapped[int | None] = mapped_column(Integer)
    verdict: Mapped[str | None] = mapped_column(String(16))
    """SPRT: ``H0`` or ``H1`` once a bound is crossed; ``max-games`` when it stopped there."""
    verdict_games: Mapped[int | None] = mapped_column(Integer)
    """SPRT: how many games the verdict was reached on."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    ended_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    node_id: Mapped[str | None] = mapped_column(String(128))
    """The arena node scheduling it now (NULL: none; another node's that is gone: free)."""


class TournamentParticipant(Base):
    """A bot entered in a tournament, in its seat order; a removed one forfeits what is left."""

    __tablename__ = "tournament_participants"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    """Order as entered; the challenger of a gauntlet and the new bot of an SPRT are seat 0."""
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    removed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class TournamentOpening(Base):
    """One opening of a tournament's suite: the moves both games of a pair start from."""

    __tablename__ = "tournament_openings"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    moves: Mapped[str] = mapped_column(Text)
    """Space-separated moves (empty: the initial position)."""


class TournamentPair(Base):
    """The schedule: one game pair, its two bots and its opening.

    The pair's first game has ``bot_a`` move first, its second ``bot_b``.
    """

    __tablename__ = "tournament_pairs"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat_a: Mapped[int] = mapped_column(Integer)
    seat_b: Mapped[int] = mapped_column(Integer)
    opening: Mapped[int] = mapped_column(Integer)


class TournamentClaim(Base):
    """A tournament game slot a node of a multi-node arena plays now (or just played).

    A node inserts one before it offers the slot to the bots, so no other node
    starts it, and marks it ``ended`` once the match's result is committed: the
    node running the tournament then counts that pair's matches and deletes
    the claim. A claim of a node that is gone counts as ended. Single-node
    arenas never write one.
    """

    __tablename__ = "tournament_claims"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), index=True)
    pair: Mapped[int] = mapped_column(Integer)
    game: Mapped[int] = mapped_column(Integer)
    node_id: Mapped[str] = mapped_column(String(128))
    ended: Mapped[bool] = mapped_column(Boolean, default=False)
    claimed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class MoveAnalysis(Base):
    """The solved value of one stored Connect Four move, written by ``arena analyse``.

    Scores are Pascal Pons' (``bots.strategies.solver``), outcomes 1 win / 0 draw / -1
    loss, all from the mover's side: ``*_before`` of the position it moved in,
    ``*_after`` of the move it played. NULL means not solved within ``budget_ms``
    per position; ``blunder`` (the move lost value) is NULL unless both outcomes
    are known. ``choice_matters``: some legal move there has another outcome than
    the position's (NULL: not known); only such moves are judged.
    """

    __tablename__ = "move_analysis"
    __table_args__ = (
        ForeignKeyConstraint(["match_id", "ply"], ["moves.match_id", "moves.ply"]),
    )

    match_id: Mapped[str] = mapped_column(String(16), primary_key=True)
    ply: Mapped[int] = mapped_column(Integer, primary_key=True)
    score_before: Mapped[int | None] = mapped_column(SmallInteger)
    score_after: Mapped[int | None] = mapped_column(SmallInteger)
    outcome_before: Mapped[int | None] = mapped_column(SmallInteger)
    outcome_after: Mapped[int | None] = mapped_column(SmallInteger)
    blunder: Mapped[bool | None] = mapped_column(Boolean)
    budget_ms: Mapped[int] = mapped_column(Integer)
    choice_matters: Mapped[bool | None] = mapped_column(Boolean)
    analysed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    candidates: Mapped[str | None] = mapped_column(Text, nullable=True)
    """JSON: the solved value of every legal move of the position (``CandidateValue``)."""
