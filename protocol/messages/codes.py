"""Protocol constants: the version, size and rate limits, error codes and close codes.

Every number a client author needs is here and in ``docs/protocol.md``; the
server imports these instead of repeating them.
"""

import enum

PROTOCOL_VERSION = 1
"""The protocol version this package speaks; agreed in ``hello`` / ``welcome``."""

MAX_BOT_MESSAGE_BYTES = 16384
"""Largest client message (UTF-8 bytes of one text frame) before and after a bot's hello."""
MAX_SPECTATOR_MESSAGE_BYTES = 1024
"""Largest message a spectator may send once its hello is accepted."""
MAX_SERVER_MESSAGE_BYTES = 1 << 20
"""Largest server message a client needs to accept (a long leaderboard)."""
MAX_NESTING_DEPTH = 16
"""Deepest JSON nesting accepted; real messages stay under 6 levels."""

HELLO_TIMEOUT_S = 10.0
"""A connection that has not sent a valid ``hello`` within this many seconds is closed."""
RATE_LIMIT_PER_S = 20.0
"""Sustained client messages per second (token bucket refill rate)."""
RATE_LIMIT_BURST = 40
"""Token bucket size: messages a client may send at once before ``rate_limited``."""

MAX_PLY = 1024
"""Upper bound on plies (and hence move lists) in any game the protocol carries."""
MAX_MOVE = (1 << 31) - 1
"""Largest integer accepted as a move; legality is the game's business, not the parser's."""
MAX_COUNT = (1 << 53) - 1
"""Largest counter or duration: the largest integer a JavaScript client holds exactly."""
MAX_ANALYSIS_MOVES = 81
"""Most per-move statistics a ``move`` may carry (every cell of ultimate tic-tac-toe)."""


class ErrorCode(enum.StrEnum):
    """The stable machine-readable ``code`` of an ``error`` message and of ``ProtocolError``."""

    # Raised by the parser in this package.
    BAD_JSON = "bad_json"
    """The frame is not UTF-8 JSON (or nests too deeply, repeats a key, uses NaN)."""
    TOO_LARGE = "too_large"
    """The frame is larger than the sender's limit."""
    BAD_MESSAGE = "bad_message"
    """The JSON is not an object, or has no string ``type``."""
    UNKNOWN_TYPE = "unknown_type"
    """No message of this ``type`` exists in this direction."""
    MISSING_FIELD = "missing_field"
    """A required field is absent (or null where a value is required)."""
    UNKNOWN_FIELD = "unknown_field"
    """A field this message does not define."""
    BAD_TYPE = "bad_type"
    """A field holds the wrong JSON type (``true`` is not an integer)."""
    BAD_VALUE = "bad_value"
    """A field has the right type but an invalid value (range, length, pattern, rule)."""

    # Sent by the server.
    NOT_AUTHENTICATED = "not_authenticated"
    """A message other than ``hello`` arrived before the hello was accepted."""
    AUTH_FAILED = "auth_failed"
    """Unknown bot name or wrong token."""
    THROTTLED = "throttled"
    """Too many failed logins from this address, or for this bot name, lately; the hello was not
    checked."""
    UNSUPPORTED_VERSION = "unsupported_version"
    """The server does not speak the version in ``hello``."""
    HELLO_TIMEOUT = "hello_timeout"
    """No valid ``hello`` within ``HELLO_TIMEOUT_S``."""
    IDLE = "idle"
    """A spectator watching nothing, or a guest with no game, asked for nothing for too long."""
    NOT_YOUR_TURN = "not_your_turn"
    """A ``move`` arrived while the opponent is to move."""
    STALE_PLY = "stale_ply"
    """A ``move`` answers a ply that is not the current one (ignored, no penalty)."""
    ILLEGAL_MOVE = "illegal_move"
    """The move is not legal; the game is lost by ``illegal_move``."""
    NO_SUCH_MATCH = "no_such_match"
    """No match with this ``match_id`` exists."""
    MATCH_OVER = "match_over"
    """The match has already ended."""
    NOT_A_PLAYER = "not_a_player"
    """The sender does not play in this match."""
    RATE_LIMITED = "rate_limited"
    """Too many messages; the message was dropped."""
    FORBIDDEN = "forbidden"
    """The message is not allowed for this role (a spectator sent a game message)."""
    ALREADY_SEEKING = "already_seeking"
    """A ``seek`` for this game is already pending, or the bot plays ``max_matches`` matches."""
    NO_SUCH_BOT = "no_such_bot"
    """The challenged bot does not exist or is offline."""
    NO_SUCH_GAME = "no_such_game"
    """The server hosts no game of this name."""
    NO_SUCH_CHALLENGE = "no_such_challenge"
    """The challenge is unknown, expired or not addressed to the sender."""
    STORE_UNAVAILABLE = "store_unavailable"
    """The server cannot store results right now; pending seeks wait (the seek was fine)."""
    SERVER_SHUTDOWN = "server_shutdown"
    """The server is shutting down; reconnect later."""
    REPLACED = "replaced"
    """Another connection logged in with the same bot name; this one is closed."""
    INTERNAL = "internal"
    """A server bug; the message was not processed."""


class CloseCode(enum.IntEnum):
    """Websocket close codes the server uses; an ``error`` message precedes each close."""

    NORMAL = 1000
    GOING_AWAY = 1001
    """The server is shutting down (``server_shutdown``)."""
    POLICY_VIOLATION = 1008
    """Authentication failed, hello timeout, or abuse (rate limit, repeated bad messages)."""
    MESSAGE_TOO_BIG = 1009
    """A frame exceeded ``MAX_BOT_MESSAGE_BYTES``."""
    INTERNAL_ERROR = 1011
    """A server bug."""
    UNSUPPORTED_VERSION = 4000
    """The protocol version in ``hello`` is not supported (``unsupported_version``)."""
    REPLACED = 4001
    """A newer connection took over this bot name."""
    REDIRECTED = 4002
    """Another node hosts this bot's match: reconnect to the ``redirect`` message's URL."""
