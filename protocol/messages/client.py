"""Messages a client (bot or spectator) sends to the server.

Every client message may carry a last field ``id``: a correlation string the
server echoes in its reply (``id``) or in an ``error`` (``ref``).
"""

from dataclasses import dataclass
from typing import Annotated, ClassVar, Literal

from protocol.messages.codes import MAX_COUNT
from protocol.messages.fields import (
    Array,
    Bool,
    Choice,
    Int,
    IsNull,
    NotNull,
    Nullable,
    Obj,
    OneOf,
    Rule,
    Str,
)
from protocol.messages.spec import Message, fast_init
from protocol.messages.values import (
    ANALYSIS,
    BOT_NAME,
    GAME_NAME,
    SERVER_ID,
    Analysis,
    BotName,
    GameName,
    MoveNumber,
    Ply,
    RequestId,
    ServerId,
    TimeControl,
)

TOKEN_PATTERN = r"[!-~]{1,256}"
WORKER_ID_PATTERN = r"[!-~]{1,64}"
"""A worker's id: 1-64 visible ASCII characters."""
RESIGN_REASON_MAX = 200
"""The longest ``resign.reason`` (code points)."""
"""A bot's secret: 1-256 visible ASCII characters."""


@fast_init
@dataclass(frozen=True, slots=True)
class Hello(Message):
    """The first message on every connection: who you are and which protocol version you speak.

    Bots must give ``name`` and ``token``; ``max_matches`` is how many matches
    the bot is willing to play at once; ``guests`` the games in which it
    accepts challenges from guests (people playing it from the web viewer;
    unrated). ``worker`` says this connection is one of several serving the
    bot at once (each with its own ``max_matches`` seats): it joins the
    others instead of replacing them, except a worker's older connection with
    the same ``worker_id``, which it replaces. A ``guest`` gives neither name nor
    token: the server names it.
    """

    type: ClassVar[str] = "hello"
    rules: ClassVar[tuple[Rule, ...]] = (
        Rule({"role": OneOf(("bot",))}, {"name": NotNull()}, "a bot hello needs a name"),
        Rule({"role": OneOf(("bot",))}, {"token": NotNull()}, "a bot hello needs a token"),
        Rule({"role": OneOf(("guest",))}, {"token": IsNull()}, "a guest hello has no token"),
        Rule({"role": OneOf(("guest",))}, {"name": IsNull()}, "a guest hello has no name"),
    )

    role: Annotated[
        Literal["bot", "spectator", "guest"], Choice(("bot", "spectator", "guest"))
    ]
    version: Annotated[int, Int(0, (1 << 31) - 1)]
    name: Annotated[str | None, Nullable(BOT_NAME)] = None
    token: Annotated[str | None, Nullable(Str(256, TOKEN_PATTERN, 1))] = None
    max_matches: Annotated[int, Int(1, 64)] = 1
    guests: Annotated[tuple[str, ...], Array(GAME_NAME, 0, 16)] = ()
    """Bots: the games it accepts guest challenges in (none by default)."""
    worker: Annotated[bool, Bool()] = False
    """Bots: one of several connections serving this bot (``arena-bot --worker``)."""
    worker_id: Annotated[str | None, Nullable(Str(64, WORKER_ID_PATTERN, 1))] = None
    """Bots: names the worker across its reconnections, so that a new connection of the
    worker takes over its old one (a half-open connection the server still holds)."""
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class Seek(Message):
    """Ask to be paired with another bot seeking the same game and time control."""

    type: ClassVar[str] = "seek"

    game: GameName
    time_control: Annotated[TimeControl, Obj(TimeControl)]
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class CancelSeek(Message):
    """Withdraw pending seeks: for one game, or all of them when ``game`` is omitted."""

    type: ClassVar[str] = "cancel_seek"

    game: Annotated[str | None, Nullable(GAME_NAME)] = None
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class Challenge(Message):
    """Invite one named bot to a match; it answers with ``accept`` or ``decline``."""

    type: ClassVar[str] = "challenge"

    opponent: BotName
    game: GameName
    time_control: Annotated[TimeControl, Obj(TimeControl)]
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class Accept(Message):
    """Accept a challenge you received; the match starts with ``match_start``."""

    type: ClassVar[str] = "accept"

    challenge_id: ServerId
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class Decline(Message):
    """Decline a challenge you received."""

    type: ClassVar[str] = "decline"

    challenge_id: ServerId
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class Move(Message):
    """Your move in answer to ``your_turn``; ``ply`` must echo that ``your_turn``'s ply."""

    type: ClassVar[str] = "move"

    match_id: ServerId
    ply: Ply
    move: MoveNumber
    analysis: Annotated[Analysis | None, Nullable(ANALYSIS)] = None
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class Resign(Message):
    """Give up a match you play; ``reason`` (one line) goes into the match record."""

    type: ClassVar[str] = "resign"

    match_id: ServerId
    id: RequestId = None
    reason: Annotated[str | None, Nullable(Str(RESIGN_REASON_MAX, r"[^\r\n]*"))] = None


@fast_init
@dataclass(frozen=True, slots=True)
class Watch(Message):
    """Spectate one match, or every live match when ``match_id`` is omitted.

    ``since`` (only with a ``match_id``) is the last event number already seen:
    the server replays the events after it instead of sending a snapshot.
    """

    type: ClassVar[str] = "watch"
    rules: ClassVar[tuple[Rule, ...]] = (
        Rule({"since": NotNull()}, {"match_id": NotNull()}, "since needs a match_id"),
    )

    match_id: Annotated[str | None, Nullable(SERVER_ID)] = None
    since: Annotated[int | None, Nullable(Int(0, MAX_COUNT))] = None
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class Unwatch(Message):
    """Stop spectating one match, or everything when ``match_id`` is omitted."""

    type: ClassVar[str] = "unwatch"

    match_id: Annotated[str | None, Nullable(SERVER_ID)] = None
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class LeaderboardQuery(Message):
    """Ask for a game's leaderboard; answered by a ``leaderboard`` reply."""

    type: ClassVar[str] = "leaderboard"

    game: GameName
    id: RequestId = None


@fast_init
@dataclass(frozen=True, slots=True)
class GamesQuery(Message):
    """Ask which games the server hosts; answered by a ``games`` reply."""

    type: ClassVar[str] = "games"

    id: RequestId = None


ClientMessage = (
    Hello
    | Seek
    | CancelSeek
    | Challenge
    | Accept
    | Decline
    | Move
    | Resign
    | Watch
    | Unwatch
    | LeaderboardQuery
    | GamesQuery
)
"""Any message a client may send."""

CLIENT_MESSAGE_TYPES: dict[str, type[ClientMessage]] = {
    cls.type: cls
    for cls in (
        Hello,
        Seek,
        CancelSeek,
        Challenge,
        Accept,
        Decline,
        Move,
        Resign,
        Watch,
        Unwatch,
        LeaderboardQuery,
        GamesQuery,
    )
}
"""Client message classes by their ``type``."""

SPECTATOR_MESSAGE_TYPES: frozenset[type[ClientMessage]] = frozenset(
    {Watch, Unwatch, LeaderboardQuery, GamesQuery}
)
"""What a spectator may send after its hello; anything else is ``forbidden``."""
