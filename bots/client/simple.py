"""Write a bot in a few lines: a function from position to move, played on an arena server.

::

    from bots.client.simple import run_bot

    def first_legal(state):
        return state.legal_moves()[0]

    run_bot(first_legal, url="ws://127.0.0.1:8765", name="alice", token="...",
            game="connect4", games=5)

The function gets an immutable ``GameState`` (``legal_moves()``, ``play(move)``,
``to_move``, ``outcome()``, ``render()``) and returns a legal move; it may
also return a ``Decision(move, Analysis(...))`` to show spectators its
thinking, or be an ``async def``. A function with a parameter named
``budget`` also gets the move's ``bots.budget.Budget``
(``budget.remaining_s()`` is the time left before its deadline, the safety
margin already taken off). A plain function runs in
a worker thread, so a slow one does not stop the connection from answering
pings; it must still answer within the time control. If it raises or returns
an illegal move, the error is logged and the first legal move is played
instead, so a bug costs a move, not the game by forfeit.

Everything else (hello, seeking, challenges, reconnecting, resuming a live
match, SIGINT/SIGTERM: finish the live matches, a second signal resigns them)
is ``bots.client.BotClient``'s job.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from bots.budget import Budget
from bots.client.runtime import (
    DEFAULT_TIME_CONTROL,
    BotClient,
    ClientConfig,
    ClientSummary,
    Decision,
)
from bots.client.signals import install_stop_signals
from protocol.games import GameState
from protocol.messages import TimeControl

ChooseFunction = Callable[..., "int | Decision | Awaitable[int | Decision]"]
"""A bot's brain: ``(state)`` or ``(state, budget=...)`` in, move (or ``Decision``) out;
may be ``async``."""


def _takes_budget(function: Callable[..., Any]) -> bool:
    """Whether ``function`` has a parameter ``budget`` that can be passed by keyword."""
    try:
        parameter = inspect.signature(function).parameters.get("budget")
    except (TypeError, ValueError):  # some builtins have no signature
        return False
    return parameter is not None and parameter.kind in (
        parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY
    )


class FunctionChooser:
    """A ``MoveChooser`` calling a plain (thread) or ``async`` function."""

    def __init__(self, choose: ChooseFunction) -> None:
        self.function = choose
        self._is_async = inspect.iscoroutinefunction(choose)
        self._takes_budget = _takes_budget(choose)

    async def choose(self, state: GameState, budget: Budget) -> Decision:
        """Call the function without blocking the event loop and normalise its answer."""
        extra: dict[str, Any] = {"budget": budget} if self._takes_budget else {}
        if self._is_async:
            result = self.function(state, **extra)
        else:
            result = await asyncio.to_thread(self.function, state, **extra)
        answer = await result if inspect.isawaitable(result) else result
        if isinstance(answer, Decision):
            return answer
        if isinstance(answer, bool) or not isinstance(answer, int):
            raise TypeError(f"the bot function returned {answer!r}, not a move number")
        return Decision(answer)


async def play_bot(
    choose: ChooseFunction,
    *,
    url: str,
    name: str,
    game: str,
    token: str | None = None,
    games: int | None = None,
    time_control: TimeControl = DEFAULT_TIME_CONTROL,
    challenge: str | None = None,
    accept_challenges: bool = True,
    max_matches: int = 1,
    ca_file: str | None = None,
    insecure: bool = False,
) -> ClientSummary:
    """Play as ``name`` with ``choose`` until ``games`` are played or SIGINT/SIGTERM arrives.

    ``token`` defaults to ``$ARENA_BOT_TOKEN``. Raises ``bots.client.RefusedError``
    when the server rejects the bot (wrong token, unknown game, ...), and
    ``bots.client.ClientError`` for a URL it must not use (``ws://`` to
    another host without ``insecure``) or a certificate it cannot verify.
    """
    token = token or os.environ.get("ARENA_BOT_TOKEN")
    if not token:
        raise ValueError("no token: pass token=... or set ARENA_BOT_TOKEN")
    config = ClientConfig(
        url=url,
        name=name,
        token=token,
        game=game,
        time_control=time_control,
        games=games,
        max_matches=max_matches,
        accept_challenges=accept_challenges,
        challenge=challenge,
        ca_file=ca_file,
        insecure=insecure,
    )
    client = BotClient(config, FunctionChooser(choose))
    undo = install_stop_signals(client.on_signal, client.forfeit)
    try:
        return await client.run()
    finally:
        undo()


def run_bot(
    choose: ChooseFunction,
    *,
    url: str,
    name: str,
    game: str,
    token: str | None = None,
    games: int | None = None,
    time_control: TimeControl = DEFAULT_TIME_CONTROL,
    challenge: str | None = None,
    accept_challenges: bool = True,
    max_matches: int = 1,
    ca_file: str | None = None,
    insecure: bool = False,
    quiet: bool = False,
) -> ClientSummary:
    """Blocking ``play_bot`` for scripts; logs one line per match to stderr unless ``quiet``.

    Logging is only configured if the program has not configured it already.
    """
    logging.basicConfig(
        level=logging.WARNING if quiet else logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
        datefmt="%H:%M:%S",
    )
    return asyncio.run(
        play_bot(
            choose, url=url, name=name, game=game, token=token, games=games,
            time_control=time_control, challenge=challenge,
            accept_challenges=accept_challenges, max_matches=max_matches,
            ca_file=ca_file, insecure=insecure,
        )
    )
