"""What a tournament is asked to be: ``TournamentSettings``, checked before anything is created.

Formats (``bots`` is the seat order):

- ``round-robin``: every two bots play ``games_per_pair`` games;
- ``gauntlet``: the challenger (seat 0) plays every other bot ``games_per_pair`` games;
- ``sprt``: seat 0 (the new bot) against seat 1 (the old), game pair after game pair,
  until the SPRT accepts H0 or H1 or ``max_games`` are played;
- ``ladder``: bots in order of expected strength, each playing the next two
  (``arena ladder``).

Every opening is played twice with colours swapped, so ``games_per_pair`` is
even. ``check`` raises ``TournamentError`` with a one-line message for the
first problem found; bots unknown to the database are the store's to find.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, cast

from arena.errors import TournamentError
from arena.play.lobby import TimeLimits
from protocol.games import GAMES
from protocol.messages import TimeControl

Format = Literal["round-robin", "gauntlet", "sprt", "ladder"]
FORMATS: tuple[Format, ...] = ("round-robin", "gauntlet", "sprt", "ladder")
MODELS = ("normalized", "logistic")

MAX_NAME = 64
MAX_BOTS = 512
MAX_GAMES = 1_000_000
_LIMITS = TimeLimits(TimeControl(move_ms=1000, bank_ms=0))


@dataclass(frozen=True, slots=True)
class TournamentSettings:
    """A tournament as created (see the module docstring); stored in ``tournaments``."""

    game: str
    format: Format
    bots: tuple[str, ...]
    """Seat order: the gauntlet's challenger and the SPRT's new bot come first."""
    games_per_pair: int = 2
    move_ms: int = 1000
    bank_ms: int = 0
    concurrency: int = 1
    rated: bool = True
    openings: str = "none"
    """Where the openings come from: ``builtin:NAME``, a file name, or ``none``."""
    name: str = ""
    seed: int = 1
    elo0: float | None = None
    elo1: float | None = None
    alpha: float | None = None
    beta: float | None = None
    model: str | None = None
    max_games: int | None = None

    def check(self) -> TournamentSettings:
        """Return these settings when they make a tournament; raise ``TournamentError``."""
        if self.game not in GAMES:
            raise TournamentError(f"unknown game {self.game!r}; games: {', '.join(GAMES)}")
        if self.format not in FORMATS:
            raise TournamentError(
                f"unknown format {self.format!r}; formats: {', '.join(FORMATS)}"
            )
        if len(self.name) > MAX_NAME:
            raise TournamentError(f"the name is longer than {MAX_NAME} characters")
        self._check_bots()
        if not 2 <= self.games_per_pair <= MAX_GAMES or self.games_per_pair % 2:
            raise TournamentError(
                f"--games-per-pair must be an even number of at least 2 (each opening is "
                f"played with both colours), not {self.games_per_pair}"
            )
        if not _LIMITS.min_move_ms <= self.move_ms <= _LIMITS.max_move_ms:
            raise TournamentError(
                f"--move-ms must be within {_LIMITS.min_move_ms}-{_LIMITS.max_move_ms}"
            )
        if not 0 <= self.bank_ms <= _LIMITS.max_bank_ms:
            raise TournamentError(f"--bank-ms must be within 0-{_LIMITS.max_bank_ms}")
        if not 1 <= self.concurrency <= 10_000:
            raise TournamentError("--concurrency must be at least 1")
        if self.format == "sprt":
            self._check_sprt()
        return self

    def _check_bots(self) -> None:
        if len(self.bots) < 2:
            raise TournamentError("a tournament needs at least two bots")
        if len(self.bots) > MAX_BOTS:
            raise TournamentError(f"a tournament takes at most {MAX_BOTS} bots")
        seen: set[str] = set()
        for bot in self.bots:
            if not bot:
                raise TournamentError("an empty bot name")
            if bot in seen:
                raise TournamentError(f"bot {bot} is entered twice (one bot, one seat)")
            seen.add(bot)
        if self.format == "sprt" and len(self.bots) != 2:
            raise TournamentError("an SPRT takes exactly two bots: the new one, then the old")

    def _check_sprt(self) -> None:
        elo0, elo1 = self.elo0, self.elo1
        if elo0 is None or elo1 is None:
            raise TournamentError("an SPRT needs --elo0 and --elo1")
        if not (math.isfinite(elo0) and math.isfinite(elo1)) or elo0 >= elo1:
            raise TournamentError(f"--elo0 must be below --elo1 (got {elo0:g} and {elo1:g})")
        for option, value in (("--alpha", self.alpha), ("--beta", self.beta)):
            if value is None or not 0.0 < value < 0.5:
                raise TournamentError(f"{option} must be within (0, 0.5), got {value}")
        if self.model not in MODELS:
            raise TournamentError(f"--model must be one of {', '.join(MODELS)}")
        if self.max_games is None or not 2 <= self.max_games <= MAX_GAMES:
            raise TournamentError(f"--max-games must be within 2-{MAX_GAMES}")

    @property
    def time_control(self) -> TimeControl:
        """The time control of every game."""
        return TimeControl(move_ms=self.move_ms, bank_ms=self.bank_ms)

    def to_json(self) -> dict[str, Any]:
        """The settings as a JSON object (the HTTP API's ``create`` body)."""
        data = asdict(self)
        data["bots"] = list(self.bots)
        return data

    @classmethod
    def from_json(cls, data: object) -> TournamentSettings:
        """Settings from ``to_json``'s object; ``TournamentError`` when it is not one."""
        if not isinstance(data, dict):
            raise TournamentError("the settings must be a JSON object")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise TournamentError(f"unknown settings: {', '.join(unknown)}")
        try:
            values = dict(data)
            values["bots"] = tuple(str(b) for b in cast(list[Any], values.get("bots", ())))
            settings = cls(**values)
        except TypeError as exc:
            raise TournamentError(f"bad settings: {exc}") from None
        for f in fields(cls):
            _check_type(f.name, getattr(settings, f.name), str(f.type))
        return settings


def _check_type(name: str, value: object, declared: str) -> None:
    """A JSON value of the declared field type (``int | None`` and the like)."""
    optional = "None" in declared
    if value is None:
        if not optional:
            raise TournamentError(f"setting {name} must not be null")
        return
    if declared.startswith("int"):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif declared.startswith("float"):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif declared.startswith("bool"):
        ok = isinstance(value, bool)
    elif declared.startswith("tuple"):
        ok = isinstance(value, tuple)
    else:
        ok = isinstance(value, str)
    if not ok:
        raise TournamentError(f"setting {name} has the wrong type: {value!r}")
