"""The MQTT topic names the arena publishes on, and the broker URL it connects to.

Every topic lives under ``arena/v1/`` so a breaking change of payloads can move
to ``arena/v2/`` while old subscribers keep working. ``docs/mqtt.md`` describes
each topic and its payload; this module is the single place that spells them.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

PREFIX = "arena/v1"
"""Root of every topic (the version is part of the contract)."""

STATUS_TOPIC = f"{PREFIX}/server/status"
"""``online`` (retained) while the arena is connected; ``offline`` (retained, also the will)."""

def node_status(node_id: str) -> str:
    """Like ``STATUS_TOPIC``, for one node of several sharing the broker."""
    return f"{PREFIX}/server/nodes/{_segment(node_id, 'node id')}/status"


DEFAULT_PORT = 1883
"""The MQTT port used when the URL names none."""

MAX_SEGMENT = 128
"""Longest game name or match id accepted in a topic."""

_FORBIDDEN = frozenset("/+#\x00")
# ``arena/v1/server/...`` and ``arena/v1/tournament/...`` are the arena's own subtrees.
_RESERVED_GAMES = frozenset({"server", "tournament"})


def _segment(value: str, what: str) -> str:
    """``value`` if it is safe as one topic level; wildcards or ``/`` would alias other topics."""
    if not value or len(value) > MAX_SEGMENT or _FORBIDDEN.intersection(value):
        raise ValueError(f"{what} {value!r} cannot be an MQTT topic level")
    return value


def _game(game: str) -> str:
    if game in _RESERVED_GAMES:
        raise ValueError(f"game name {game!r} is reserved in MQTT topics")
    return _segment(game, "game name")


def match_events(game: str, match_id: str) -> str:
    """Numbered spectator events of one match (QoS 0, not retained)."""
    return f"{PREFIX}/{_game(game)}/matches/{_segment(match_id, 'match id')}/events"


def match_state(game: str, match_id: str) -> str:
    """Current state of one live match (retained; emptied when the match ends)."""
    return f"{PREFIX}/{_game(game)}/matches/{_segment(match_id, 'match id')}/state"


def match_result(game: str, match_id: str) -> str:
    """The result of one match (QoS 1, not retained)."""
    return f"{PREFIX}/{_game(game)}/matches/{_segment(match_id, 'match id')}/result"


def results(game: str) -> str:
    """Every result of a game, one message per finished match (QoS 1, not retained)."""
    return f"{PREFIX}/{_game(game)}/results"


def leaderboard(game: str) -> str:
    """A game's leaderboard (QoS 1, retained)."""
    return f"{PREFIX}/{_game(game)}/leaderboard"


def ratings(game: str) -> str:
    """The players' leaderboard rows after each rated match's refit (QoS 1, not retained)."""
    return f"{PREFIX}/{_game(game)}/ratings"


def tournament_state(tournament_id: int) -> str:
    """A tournament's status object (QoS 1, retained)."""
    return f"{PREFIX}/tournament/{int(tournament_id)}/state"


def tournament_events(tournament_id: int) -> str:
    """A tournament's events: games ended, pairs completed, status changes (QoS 1)."""
    return f"{PREFIX}/tournament/{int(tournament_id)}/events"


@dataclass(frozen=True, slots=True)
class BrokerAddress:
    """Where the broker listens, parsed from ``mqtt://host[:port]``."""

    host: str
    port: int

    @property
    def url(self) -> str:
        """The canonical ``mqtt://host:port`` form (for logs and ``/healthz``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"mqtt://{host}:{self.port}"


def parse_broker_url(url: str) -> BrokerAddress:
    """Parse ``mqtt://host[:port]``; raise ``ValueError`` for anything else.

    Only plain ``mqtt`` is accepted: credentials, TLS (``mqtts``) and websockets
    are not supported yet, and silently ignoring them would be worse than refusing.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # urlsplit raises on a bad port or bracket
        raise ValueError(f"bad MQTT broker URL {url!r}: {exc}") from None
    if parts.scheme != "mqtt":
        raise ValueError(
            f"bad MQTT broker URL {url!r}: the scheme must be mqtt:// (got {parts.scheme!r})"
        )
    if not parts.hostname:
        raise ValueError(f"bad MQTT broker URL {url!r}: no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"bad MQTT broker URL {url!r}: credentials are not supported")
    if port == 0:
        raise ValueError(f"bad MQTT broker URL {url!r}: port 0")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"bad MQTT broker URL {url!r}: only mqtt://host:port is accepted")
    return BrokerAddress(parts.hostname, DEFAULT_PORT if port is None else port)
