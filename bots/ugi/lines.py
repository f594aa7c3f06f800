"""The lines of the Universal Game Interface (UGI) as the arena reads and writes them.

Pure text in, typed values out: no I/O here. What an engine may write::

    id name NAME | id author NAME     (during the handshake)
    option name ...                   (during the handshake; read and ignored)
    ugiok | readyok
    info [depth D] [seldepth D] [score cp N | score mate N] [nodes N] [nps N]
         [time MS] [multipv K] [hashfull N] [pv MOVE ...] [string TEXT]
    bestmove MOVE [ponder MOVE]

Moves are the wire protocol's move numbers in decimal (Connect Four columns
0-6, tic-tac-toe cells 0-8, ultimate tic-tac-toe ``9*board+cell``, Othello
0-64). Anything else is a ``BadLine``: the engine wrote garbage.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

MAX_LINE = 64 * 1024
"""The longest line an engine may write (bytes); a longer one is garbage."""

CP_SCALE = 400.0
"""Centipawns to a value in [-1, 1]: ``2 / (1 + 10 ** (-cp / CP_SCALE)) - 1`` (Elo's logistic)."""

_MOVE = re.compile(r"(?:0|[1-9][0-9]{0,5})")
_INT = re.compile(r"-?[0-9]{1,18}")


class BadLine(ValueError):
    """A line the engine should not have written (its text is in the message)."""


@dataclass(frozen=True, slots=True)
class Id:
    """``id name X`` or ``id author X``."""

    field: str
    value: str


@dataclass(frozen=True, slots=True)
class UgiOk:
    """``ugiok``: the handshake is over."""


@dataclass(frozen=True, slots=True)
class ReadyOk:
    """``readyok``: the engine has done what it was told so far."""


@dataclass(frozen=True, slots=True)
class OptionLine:
    """``option name ...``: an option the engine offers (kept as text)."""

    text: str


@dataclass(frozen=True, slots=True)
class Info:
    """An ``info`` line's numbers (None where the engine said nothing)."""

    depth: int | None = None
    score_cp: int | None = None
    mate: int | None = None
    nodes: int | None = None
    nps: int | None = None
    pv: tuple[int, ...] = ()
    string: str | None = None

    @property
    def value(self) -> float | None:
        """The score for the side to move in [-1, 1]: logistic in centipawns, +-1 for a mate."""
        if self.mate is not None:
            return 1.0 if self.mate > 0 else -1.0
        if self.score_cp is None:
            return None
        return 2.0 / (1.0 + math.pow(10.0, max(-50.0, min(50.0, -self.score_cp / CP_SCALE)))) - 1.0


@dataclass(frozen=True, slots=True)
class BestMove:
    """``bestmove MOVE``."""

    move: int


EngineLine = Id | UgiOk | ReadyOk | OptionLine | Info | BestMove

_INFO_INTS = {
    "depth",
    "seldepth",
    "nodes",
    "nps",
    "time",
    "multipv",
    "hashfull",
    "tbhits",
    "currmovenumber",
}


def parse_move(token: str) -> int:
    """A move number in decimal; ``BadLine`` for anything else (``-1``, ``3.0``, ``e4``)."""
    if not _MOVE.fullmatch(token):
        raise BadLine(f"{token!r} is not a move number")
    return int(token)


def parse_line(line: str) -> EngineLine | None:
    """One line from the engine; None for an empty line, ``BadLine`` for garbage."""
    if len(line) > MAX_LINE:
        raise BadLine(f"a line of {len(line)} characters")
    line = line.rstrip("\r\n")
    words = line.split()
    if not words:
        return None
    head, rest = words[0], words[1:]
    if head == "ugiok" and not rest:
        return UgiOk()
    if head == "readyok" and not rest:
        return ReadyOk()
    if head == "id" and len(rest) >= 2 and rest[0] in ("name", "author"):
        return Id(rest[0], " ".join(rest[1:]))
    if head == "option" and rest:
        return OptionLine(" ".join(rest))
    if head == "bestmove" and len(rest) in (1, 3) and (len(rest) == 1 or rest[1] == "ponder"):
        return BestMove(parse_move(rest[0]))
    if head == "info":
        return _parse_info(rest, line)
    raise BadLine(f"unexpected line {_short(line)!r}")


def _parse_info(words: list[str], line: str) -> Info:
    fields: dict[str, int] = {}
    pv: list[int] = []
    string: str | None = None
    i = 0
    while i < len(words):
        key = words[i]
        if key == "string":
            string = " ".join(words[i + 1 :])
            break
        if key == "pv":
            pv = [parse_move(word) for word in words[i + 1 :]]
            break
        if key == "score" and i + 2 < len(words) and words[i + 1] in ("cp", "mate"):
            fields[words[i + 1]] = _int(words[i + 2], line)
            i += 3
            # "lowerbound"/"upperbound" qualify the score; the number is kept as it is.
            while i < len(words) and words[i] in ("lowerbound", "upperbound"):
                i += 1
            continue
        if key in _INFO_INTS and i + 1 < len(words):
            fields[key] = _int(words[i + 1], line)
            i += 2
            continue
        if key == "currmove" and i + 1 < len(words):
            parse_move(words[i + 1])
            i += 2
            continue
        raise BadLine(f"unknown info field {key!r} in {_short(line)!r}")
    return Info(
        depth=fields.get("depth"),
        score_cp=fields.get("cp"),
        mate=fields.get("mate"),
        nodes=fields.get("nodes"),
        nps=fields.get("nps"),
        pv=tuple(pv),
        string=string,
    )


def _int(word: str, line: str) -> int:
    if not _INT.fullmatch(word):
        raise BadLine(f"{word!r} is not an integer in {_short(line)!r}")
    return int(word)


def _short(line: str) -> str:
    return line if len(line) <= 80 else line[:77] + "..."


def position_command(moves: tuple[int, ...]) -> str:
    """``position startpos`` followed by the moves played since the start."""
    if not moves:
        return "position startpos"
    return "position startpos moves " + " ".join(str(move) for move in moves)


def go_command(
    movetime_ms: int,
    mover: int = 0,
    bank_ms: float | None = None,
    opponent_bank_ms: float | None = None,
) -> str:
    """``go movetime MS``, with the banks left as ``p1time``/``p2time`` when there is a bank
    (``p1`` moved first; the opponent's is left out when it is not known)."""
    text = f"go movetime {max(1, movetime_ms)}"
    if not bank_ms and not opponent_bank_ms:
        return text
    banks = {mover: bank_ms or 0.0}
    if opponent_bank_ms is not None:
        banks[1 - mover] = opponent_bank_ms
    for player in sorted(banks):
        text += f" p{player + 1}time {int(banks[player])}"
    return text


def setoption_command(name: str, value: str) -> str:
    """``setoption name NAME value VALUE``."""
    return f"setoption name {name} value {value}"
