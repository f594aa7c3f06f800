"""Field types shared by many messages, and the nested value objects.

The ``Annotated`` aliases pair a Python type with its wire ``Spec``; the
dataclasses here travel inside messages (a time control, clocks, an analysis).
"""

from dataclasses import dataclass, field
from typing import Annotated, Any

from protocol.messages.codes import MAX_ANALYSIS_MOVES, MAX_COUNT, MAX_MOVE, MAX_PLY
from protocol.messages.fields import NOT_WIRE, Array, Bool, Float, Int, Nullable, Obj, Pair, Str
from protocol.messages.search import TreeNode, TreeSpec, fast_analysis
from protocol.messages.spec import Wire, fast_init

BOT_NAME_RULE = "1-32 letters, digits, '-' and '_', not starting with '-'"
"""The name rule in words, for people: docs, ``--help`` and error messages."""
NEW_BOT_NAME_PATTERN = r"[A-Za-z0-9_][A-Za-z0-9_-]{0,31}"
"""The name a bot may be registered under (``BOT_NAME_RULE``)."""
BOT_NAME_PATTERN = r"[A-Za-z0-9_.-]{1,32}"
"""What messages accept as a bot name: ``NEW_BOT_NAME_PATTERN``, plus ``.`` anywhere and a
leading ``-``, which earlier versions let bots register; such bots keep logging in."""
GAME_NAME_PATTERN = r"[a-z0-9-]{1,32}"
"""A game's registry name; whether the server hosts it is the server's call."""
SERVER_ID_PATTERN = r"[A-Za-z0-9_.:-]{1,64}"
"""Identifiers the server makes up: match and challenge ids."""
REQUEST_ID_PATTERN = r"[!-~]{1,64}"
"""A client's correlation id: 1-64 visible ASCII characters."""

BOT_NAME = Str(32, BOT_NAME_PATTERN, 1, f"a valid bot name ({BOT_NAME_RULE})")
GAME_NAME = Str(32, GAME_NAME_PATTERN, 1)
SERVER_ID = Str(64, SERVER_ID_PATTERN, 1)
REQUEST_ID = Str(64, REQUEST_ID_PATTERN, 1)
MOVE = Int(0, MAX_MOVE)
MILLIS = Int(0, MAX_COUNT)

BotName = Annotated[str, BOT_NAME]
GameName = Annotated[str, GAME_NAME]
ServerId = Annotated[str, SERVER_ID]
RequestId = Annotated[str | None, Nullable(REQUEST_ID)]
"""The optional ``id`` every client message may carry; echoed in replies and errors."""
Ply = Annotated[int, Int(0, MAX_PLY)]
"""Moves played before this one: the first move of a game is ply 0."""
MoveNumber = Annotated[int, MOVE]
Moves = Annotated[tuple[int, ...], Array(MOVE, 0, MAX_PLY)]
Position = Annotated[str, Str(256, r"[ -~]{1,256}", 1)]
"""A position in the game's text encoding (see docs/protocol.md)."""
Player = Annotated[int, Int(0, 1)]
Millis = Annotated[int, MILLIS]
Count = Annotated[int, Int(0, MAX_COUNT)]
Rating = Annotated[float, Float()]
Players = Annotated[tuple[str, str], Pair(BOT_NAME)]


@fast_init
@dataclass(frozen=True, slots=True)
class TimeControl(Wire):
    """A per-move limit plus an optional bank drawn on when a move runs over (Kaggle overage)."""

    move_ms: Annotated[int, Int(1, 3_600_000)]
    bank_ms: Annotated[int, Int(0, 86_400_000)] = 0


@fast_init
@dataclass(frozen=True, slots=True)
class Clocks(Wire):
    """Both players' time, indexed by player, as of the message.

    ``time_left_ms[p]`` is the most player ``p`` may spend on its next move:
    the per-move limit plus its bank. ``bank_ms[p]`` is the bank alone.
    """

    time_left_ms: Annotated[tuple[int, int], Pair(MILLIS)]
    bank_ms: Annotated[tuple[int, int], Pair(MILLIS)]


@fast_init
@dataclass(frozen=True, slots=True)
class MoveStat(Wire):
    """Search statistics for one candidate move."""

    move: MoveNumber
    visits: Count
    value: Annotated[float | None, Nullable(Float())] = None


@fast_init
@dataclass(frozen=True, slots=True)
class Analysis(Wire):
    """What a bot reports about its search with a move; spectators see it, opponents never."""

    simulations: Annotated[int | None, Nullable(Int(0, MAX_COUNT))] = None
    """Playouts of a Monte Carlo tree search."""
    sims_per_s: Annotated[float | None, Nullable(Float(0.0))] = None
    value: Annotated[float | None, Nullable(Float())] = None
    depth: Annotated[int | None, Nullable(Int(0, MAX_PLY))] = None
    moves: Annotated[tuple[MoveStat, ...], Array(Obj(MoveStat), 0, MAX_ANALYSIS_MOVES)] = ()
    nodes: Annotated[int | None, Nullable(Int(0, MAX_COUNT))] = None
    """Positions visited by a search that counts nodes instead (alpha-beta, a solver)."""
    nodes_per_s: Annotated[float | None, Nullable(Float(0.0))] = None
    pv: Annotated[tuple[int, ...] | None, Nullable(Array(MOVE, 0, MAX_ANALYSIS_MOVES))] = None
    """The principal variation: the line the search expects, from the move played on."""
    tree: Annotated[tuple[TreeNode, ...] | None, Nullable(TreeSpec())] = None
    """The top of the search tree, a few plies deep (``protocol.messages.search``)."""
    text: str | None = field(default=None, compare=False, repr=False, metadata=NOT_WIRE)
    """Not a wire field: the compact JSON text this report was read from, when the move's
    frame had it in that form (``compact_move``), so a store keeps it without writing it
    again; None for a report built or parsed any other way."""

    @property
    def candidate_count(self) -> int:
        """How many candidate moves the report holds: ``len(moves)``, which a report checked
        in its text (``report_text.CheckedAnalysis``) knows without decoding them."""
        return len(self.moves)


class AnalysisSpec(Obj):
    """``Obj(Analysis)`` that checks a report in its usual form on a fast path first
    (``search.fast_analysis``); anything else, errors included, goes the general way."""

    __slots__ = ()

    def parse(self, value: object, path: str) -> Any:
        """The fast path's ``Analysis``, else ``Obj.parse``'s."""
        fast = fast_analysis(value, Analysis, MoveStat)
        return fast if fast is not None else Obj.parse(self, value, path)


ANALYSIS = AnalysisSpec(Analysis)
"""The spec of every ``analysis`` field."""


@fast_init
@dataclass(frozen=True, slots=True)
class LeaderboardEntry(Wire):
    """One row of a game's leaderboard, best first.

    ``rating`` is the fitted rating the board ranks by; the fields after
    ``online`` came with it and are optional on the wire (None when a server
    leaves them out): its 95% half-width ``ci95``, ``provisional``, the rank
    range ``rank_low``..``rank_high`` the intervals allow, and the ``group``
    of bots connected by games (0 = the main one). Each group is ranked on its
    own, its ratings relative to its own mean: rows of different groups are
    never compared.
    """

    rank: Annotated[int, Int(1, MAX_COUNT)]
    bot: BotName
    rating: Rating
    games: Count
    wins: Count
    draws: Count
    losses: Count
    online: Annotated[bool, Bool()]
    ci95: Annotated[float | None, Nullable(Float(0.0))] = None
    provisional: Annotated[bool | None, Nullable(Bool())] = None
    rank_low: Annotated[int | None, Nullable(Int(1, MAX_COUNT))] = None
    rank_high: Annotated[int | None, Nullable(Int(1, MAX_COUNT))] = None
    group: Annotated[int | None, Nullable(Int(0, MAX_COUNT))] = None
