"""The bot client runtime: play a strategy on an arena server over websockets.

::

    from bots.client import BotClient, ClientConfig, StrategyChooser
    summary = await BotClient(config, StrategyChooser(strategy)).run()

``runtime`` is the connection loop (``BotClient``), ``matches`` keeps each match
in step with the server, ``seeking`` its seeks and challenges, ``route`` picks
the next URL, ``transport`` the TLS
settings, ``choosing`` turns a strategy into move decisions, ``simple`` wraps a
plain function (``run_bot``), ``signals`` stops a bot by signal and ``cli`` is the
``arena-bot`` command.
"""

from __future__ import annotations

from bots.client.choosing import Decision, MoveChooser, StrategyChooser, analysis_from
from bots.client.config import Backoff, ClientConfig, ClientSummary, MatchReport
from bots.client.errors import ClientError, InsecureURLError, RefusedError, TLSVerifyError
from bots.client.runtime import BotClient
from bots.client.simple import FunctionChooser, play_bot, run_bot

__all__ = [
    "Backoff",
    "BotClient",
    "ClientConfig",
    "ClientError",
    "ClientSummary",
    "Decision",
    "FunctionChooser",
    "InsecureURLError",
    "MatchReport",
    "MoveChooser",
    "RefusedError",
    "StrategyChooser",
    "TLSVerifyError",
    "analysis_from",
    "play_bot",
    "run_bot",
]
