"""Messages the server sends to bots and spectators.

Replies to a request (``welcome``, ``snapshot``, ``leaderboard``, ``games``)
carry the request's ``id``; an ``error`` carries it as ``ref``.
"""

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from protocol.errors import ProtocolError
from protocol.games.base import Fault, Termination
from protocol.messages.codes import MAX_COUNT
from protocol.messages.fields import (
    Array,
    Bool,
    Choice,
    Float,
    Int,
    IsNull,
    NotNull,
    Nullable,
    Obj,
    OneOf,
    Pair,
    Rule,
    Str,
)
from protocol.messages.spec import Message, fast_init
from protocol.messages.values import (
    ANALYSIS,
    BOT_NAME,
    GAME_NAME,
    MAX_PLY,
    MOVE,
    SERVER_ID,
    Analysis,
    BotName,
    Clocks,
    Count,
    GameName,
    LeaderboardEntry,
    Millis,
    MoveNumber,
    Moves,
    Player,
    Players,
    Ply,
    Position,
    RequestId,
    ServerId,
    TimeControl,
)

RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
"""Match results: player 0 won, player 1 won, draw, no result (aborted)."""
TERMINATIONS = tuple(t.value for t in Termination)
"""Why a match ended; the values of ``protocol.games.base.Termination``."""
FAULTS = tuple(f.value for f in Fault)
"""Who is to blame for an abnormal end: a bot, or the server / network."""

_TIME_CONTROL = Annotated[TimeControl, Obj(TimeControl)]
_CLOCKS = Annotated[Clocks, Obj(Clocks)]
_TEXT = Str(1024)


@fast_init
@dataclass(frozen=True, slots=True)
class Welcome(Message):
    """The answer to an accepted ``hello``: the agreed version and who the server thinks you are."""

    type: ClassVar[str] = "welcome"

    version: Annotated[int, Int(1, (1 << 31) - 1)]
    role: Annotated[str, Choice(("bot", "spectator", "guest"))]
    name: Annotated[str | None, Nullable(BOT_NAME)]
    server: Annotated[str, Str(128)]
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class ChallengeReceived(Message):
    """Another bot challenges you: answer ``accept`` or ``decline`` with the ``challenge_id``."""

    type: ClassVar[str] = "challenge"

    challenge_id: ServerId
    challenger: BotName
    game: GameName
    time_control: _TIME_CONTROL


@fast_init
@dataclass(frozen=True, slots=True)
class ChallengeDeclined(Message):
    """The bot you challenged declined (or the challenge expired: ``by`` is then the server)."""

    type: ClassVar[str] = "declined"

    challenge_id: ServerId
    by: BotName


@fast_init
@dataclass(frozen=True, slots=True)
class MatchStart(Message):
    """A match you play begins (or is re-sent after you reconnect, with the moves so far).

    ``position`` is the start position; replay ``moves`` on it for the current one.
    ``you`` is your player index (0 moves first).
    """

    type: ClassVar[str] = "match_start"

    match_id: ServerId
    game: GameName
    players: Players
    you: Annotated[int | None, Nullable(Int(0, 1))]
    time_control: _TIME_CONTROL
    position: Position
    moves: Moves
    ply: Ply
    clocks: _CLOCKS


@fast_init
@dataclass(frozen=True, slots=True)
class YourTurn(Message):
    """It is your move: answer with ``move`` echoing ``ply`` before the time runs out.

    ``time_left_ms`` is all you may spend on this move (per-move limit plus bank,
    less any time already elapsed); ``bank_ms`` is the bank part of it.
    """

    type: ClassVar[str] = "your_turn"

    match_id: ServerId
    ply: Ply
    position: Position
    legal_moves: Annotated[tuple[int, ...], Array(MOVE, 1, MAX_PLY)]
    time_left_ms: Millis
    bank_ms: Millis


@fast_init
@dataclass(frozen=True, slots=True)
class Moved(Message):
    """A move was played (by ``player``, at ``ply``); ``position`` is the position after it."""

    type: ClassVar[str] = "moved"

    match_id: ServerId
    ply: Ply
    player: Player
    move: MoveNumber
    position: Position
    think_ms: Millis
    clocks: _CLOCKS


@fast_init
@dataclass(frozen=True, slots=True)
class MatchEnd(Message):
    """A match ended: the result, why, who was at fault, and whether it counts for ratings.

    The players' ratings after a rated match come in a ``rating`` message
    (``RatingReport``) once the leaderboard has been refitted with the result.
    """

    type: ClassVar[str] = "match_end"
    rules: ClassVar[tuple[Rule, ...]] = (
        Rule({"winner": OneOf((0,))}, {"result": OneOf(("1-0",))}, "winner 0 means 1-0"),
        Rule({"winner": OneOf((1,))}, {"result": OneOf(("0-1",))}, "winner 1 means 0-1"),
        Rule(
            {"winner": IsNull()},
            {"result": OneOf(("1/2-1/2", "*"))},
            "no winner means 1/2-1/2 or *",
        ),
        Rule({"fault": IsNull()}, {"faulty_player": IsNull()}, "faulty_player needs a fault"),
        Rule({"fault": OneOf(("bot",))}, {"faulty_player": NotNull()}, "a bot fault names it"),
    )

    match_id: ServerId
    winner: Annotated[int | None, Nullable(Int(0, 1))]
    result: Annotated[str, Choice(RESULTS)]
    termination: Annotated[str, Choice(TERMINATIONS)]
    fault: Annotated[str | None, Nullable(Choice(FAULTS))]
    faulty_player: Annotated[int | None, Nullable(Int(0, 1))]
    rated: Annotated[bool, Bool()]
    reason: Annotated[str, _TEXT]


@fast_init
@dataclass(frozen=True, slots=True)
class Snapshot(Message):
    """The state of a watched match; the event stream continues after ``last_event``."""

    type: ClassVar[str] = "snapshot"
    rules: ClassVar[tuple[Rule, ...]] = (
        Rule({"status": OneOf(("finished",))}, {"end": NotNull()}, "a finished match has an end"),
        Rule({"status": OneOf(("live",))}, {"end": IsNull()}, "a live match has no end"),
    )

    match_id: ServerId
    game: GameName
    players: Players
    ratings: Annotated[tuple[float, float] | None, Nullable(Pair(Float()))]
    time_control: _TIME_CONTROL
    moves: Moves
    position: Position
    clocks: _CLOCKS
    status: Annotated[Literal["live", "finished"], Choice(("live", "finished"))]
    last_event: Count
    end: Annotated[MatchEnd | None, Nullable(Obj(MatchEnd))]
    analysis: Annotated[Analysis | None, Nullable(ANALYSIS)] = None
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class Event(Message):
    """One numbered event of a match for spectators (``seq`` counts from 1 per match).

    ``kind`` says which of ``moved`` / ``end`` is present; ``analysis`` is the
    mover's report with a ``moved`` event, if it sent one.
    """

    type: ClassVar[str] = "event"
    rules: ClassVar[tuple[Rule, ...]] = (
        Rule({"kind": OneOf(("moved",))}, {"moved": NotNull()}, "a moved event carries moved"),
        Rule({"kind": OneOf(("moved",))}, {"end": IsNull()}, "a moved event has no end"),
        Rule({"kind": OneOf(("match_end",))}, {"end": NotNull()}, "a match_end event has end"),
        Rule({"kind": OneOf(("match_end",))}, {"moved": IsNull()}, "an end event has no moved"),
    )

    match_id: ServerId
    seq: Annotated[int, Int(1, MAX_COUNT)]
    kind: Annotated[Literal["moved", "match_end"], Choice(("moved", "match_end"))]
    moved: Annotated[Moved | None, Nullable(Obj(Moved))] = None
    end: Annotated[MatchEnd | None, Nullable(Obj(MatchEnd))] = None
    analysis: Annotated[Analysis | None, Nullable(ANALYSIS)] = None


@fast_init
@dataclass(frozen=True, slots=True)
class LeaderboardReply(Message):
    """A game's leaderboard, best first."""

    type: ClassVar[str] = "leaderboard"

    game: GameName
    entries: Annotated[tuple[LeaderboardEntry, ...], Array(Obj(LeaderboardEntry), 0, 5000)]
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class RatingReport(Message):
    """Where a rated match left its players: their leaderboard rows after the refit that counts it.

    Sent to both players of a rated match after ``match_end``, once the game's
    leaderboard has been refitted with the result (about a second later). The
    rows are the leaderboard's own, so the numbers are the ones everyone sees
    there; a player no longer on the board (removed) has no row.
    """

    type: ClassVar[str] = "rating"

    match_id: ServerId
    game: GameName
    entries: Annotated[tuple[LeaderboardEntry, ...], Array(Obj(LeaderboardEntry), 0, 2)]


@fast_init
@dataclass(frozen=True, slots=True)
class GamesReply(Message):
    """The games this server hosts."""

    type: ClassVar[str] = "games"

    games: Annotated[tuple[str, ...], Array(GAME_NAME, 0, 64)]
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class Error(Message):
    """Something you sent was refused; ``ref`` is that message's ``id`` if it had one."""

    type: ClassVar[str] = "error"

    code: Annotated[str, Str(64, r"[a-z0-9_]{1,64}", 1)]
    message: Annotated[str, _TEXT]
    ref: RequestId = None

    @classmethod
    def from_exception(cls, exc: ProtocolError) -> "Error":
        """The error reply for a ``ProtocolError`` (its message clipped to fit)."""
        return cls(str(exc.code), exc.message[:1024], exc.ref)


@fast_init
@dataclass(frozen=True, slots=True)
class Redirect(Message):
    """Reconnect to ``url`` (another node of the same arena) and say ``hello`` there.

    A node sends it when a match of yours is hosted by another node (``match_id``;
    it waits for you there as after a reconnect), then closes the connection
    with code 4002. Your token goes to ``url``: apply the same TLS rules to it.
    """

    type: ClassVar[str] = "redirect"

    url: Annotated[str, Str(512, r"wss?://[!-~]{1,506}", 1)]
    match_id: Annotated[str | None, Nullable(SERVER_ID)] = None
    reason: Annotated[str, _TEXT] = ""


ServerMessage = (
    Welcome
    | ChallengeReceived
    | ChallengeDeclined
    | MatchStart
    | YourTurn
    | Moved
    | MatchEnd
    | Snapshot
    | Event
    | LeaderboardReply
    | RatingReport
    | GamesReply
    | Error
    | Redirect
)
"""Any message the server may send."""

SERVER_MESSAGE_TYPES: dict[str, type[ServerMessage]] = {
    cls.type: cls
    for cls in (
        Welcome,
        ChallengeReceived,
        ChallengeDeclined,
        MatchStart,
        YourTurn,
        Moved,
        MatchEnd,
        Snapshot,
        Event,
        LeaderboardReply,
        RatingReport,
        GamesReply,
        Error,
        Redirect,
    )
}
"""Server message classes by their ``type``."""
