"""Exceptions raised by the ``protocol`` package.

The tree::

    ProtocolPackageError            root of everything raised here
    ├── GameError                   a game rule was broken or misused
    │   ├── UnknownGameError        (also ValueError) no game by that name
    │   ├── IllegalMoveError        (also ValueError) the move is not legal here
    │   └── PositionDecodeError     (also ValueError) a position text is malformed
    └── ProtocolError               a wire message is malformed; carries ``code``
        └── MalformedMoveError      a ``move`` whose ``move`` is no move number (it loses)

Callers that only care that "the input was bad" may catch ``ValueError`` for
the game errors; the server catches ``ProtocolError`` and answers with an
``error`` message carrying its ``code``.
"""

from __future__ import annotations


class ProtocolPackageError(Exception):
    """Root of every exception raised by the ``protocol`` package."""


class GameError(ProtocolPackageError):
    """A game rule was broken or the rules API was misused."""


class UnknownGameError(GameError, ValueError):
    """No game is registered under the requested name."""


class IllegalMoveError(GameError, ValueError):
    """The move is malformed or not legal in the position it was played in."""


class PositionDecodeError(GameError, ValueError):
    """A text encoding of a position is malformed or describes an impossible position."""


class ProtocolError(ProtocolPackageError):
    """A wire message is malformed or breaks the protocol.

    ``code`` is a stable machine-readable error code (see ``docs/protocol.md``),
    ``ref`` identifies the offending message where there is one.
    """

    def __init__(self, code: str, message: str, ref: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.ref = ref

    def __repr__(self) -> str:
        return f"ProtocolError(code={self.code!r}, message={self.message!r}, ref={self.ref!r})"


class MalformedMoveError(ProtocolError):
    """A ``move`` message whose ``move`` field is not a move number.

    It still names a match and the ply it answers, so the referee can judge it:
    a malformed move answers its turn, and loses the game like an illegal one.
    """

    def __init__(
        self, code: str, message: str, ref: str | None, match_id: str, ply: int, move: object
    ) -> None:
        super().__init__(code, message, ref)
        self.match_id = match_id
        self.ply = ply
        self.move = move
