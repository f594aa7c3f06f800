"""``arena play``: play a game against a built-in strategy in the terminal, no server needed.

::

    arena play connect4 --vs "mcts:sims=2000"            # you move first (x)
    arena play connect4 --vs "solver:time_ms=100" --second
    arena play tictactoe --vs alphabeta --seed 7

The opponent is any strategy spec ``bots list`` shows (``bots play`` and
``arena-bot --strategy`` take the same text). The rules are the game's own
(``protocol.games``): an illegal move is refused with the rules' reason and
asked for again. Moves are typed as the protocol numbers them (connect4:
the columns 0-6 written under the board; the game's ``GameSpec.move_help``
says it on screen). After each of the bot's moves the
board is redrawn with what its search reported, the report a bot sends with
its move in the arena (``bots.client.choosing.analysis_from``): simulations or
nodes, the value for the bot, the most visited moves, and (MCTS) the top of
its search tree as indented text with the principal line marked.

Nothing is stored and nothing is rated. ``q``, end of input (Ctrl-D) or
Ctrl-C end the game; the exit status is 0 for a game played to its end or
left with ``q``/Ctrl-D, 130 after Ctrl-C, and 2 (one line) for a bad spec.

This is a launcher of a bot strategy, so it imports ``bots`` (lazily, as
``arena demo`` does).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from arena.cli.common import Subparsers, whole_number
from arena.errors import ArenaError
from arena.live.watch import CLEAR, MARKS
from protocol.errors import IllegalMoveError
from protocol.games import GAMES, GameState, Outcome, Termination, game_spec, new_game
from protocol.messages import TreeNode, principal_line
from protocol.messages.search import children

if TYPE_CHECKING:
    from bots import Strategy
    from protocol.messages import Analysis

QUIT = ("q", "quit", "exit")
BEST_MOVES_SHOWN = 3


def register(commands: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add ``arena play`` (it needs neither a server nor the database)."""
    play = commands.add_parser(
        "play",
        help="play a game against a built-in strategy in the terminal",
        description="Play against a built-in strategy in the terminal: no server, nothing "
        "stored or rated. Type a move as the protocol numbers it (connect4: a column 0-6), "
        "q to quit.",
    )
    play.add_argument("game", choices=GAMES)
    play.add_argument(
        "--vs",
        required=True,
        metavar="SPEC",
        help='the opponent: a strategy spec as `bots list` shows, e.g. "mcts:sims=2000" '
        'or "solver:time_ms=100"',
    )
    side = play.add_mutually_exclusive_group()
    side.add_argument(
        "--first",
        dest="human_first",
        action="store_true",
        default=True,
        help="you move first, as x (the default)",
    )
    side.add_argument(
        "--second", dest="human_first", action="store_false", help="the bot moves first"
    )
    play.add_argument(
        "--seed",
        type=whole_number(),
        default=None,
        help="seed the bot's search when its spec takes a seed and gives none "
        "(a reproducible game with workers=0 or 1)",
    )
    play.set_defaults(run=run_play)


def run_play(args: argparse.Namespace) -> int:
    """``arena play``: build the strategy, play one game on standard input and output."""
    strategy = build_strategy(args.vs, args.game, args.seed)
    with strategy:
        session = Session(new_game(args.game), strategy, human=0 if args.human_first else 1)
        return session.run(sys.stdin, sys.stdout)


def build_strategy(spec: str, game: str, seed: int | None) -> Strategy:
    """The opponent from its spec; a bad spec is an ``ArenaError`` naming what is wrong."""
    from bots import StrategyError, make_strategy, parse_spec, strategy_class

    try:
        kind, options = parse_spec(spec)
        cls = strategy_class(kind)
        if seed is not None and "seed" in cls.OPTIONS and "seed" not in options:
            options["seed"] = str(seed)
        return make_strategy(kind, game=game, **options)
    except StrategyError as exc:
        raise ArenaError(f"--vs {spec!r}: {exc}") from None


def parse_move(text: str, state: GameState) -> int:
    """The move typed as ``text``; ``IllegalMoveError`` with the rules' reason if it is none."""
    try:
        move = int(text)
    except ValueError:
        raise IllegalMoveError(
            f"{text!r} is not a move: type {game_spec(state.name).move_help}, or q to quit"
        ) from None
    state.check_move(move)
    return move


def describe_analysis(analysis: Analysis | None) -> str:
    """The search report as one line: counts and rate, depth, value for the bot, best moves."""
    if analysis is None:
        return "no search statistics (this strategy does not search)"
    parts = []
    for count, rate, unit in (
        (analysis.simulations, analysis.sims_per_s, "simulations"),
        (analysis.nodes, analysis.nodes_per_s, "nodes"),
    ):
        if count is not None:
            parts.append(f"{count:,} {unit}" + (f" ({rate:,.0f}/s)" if rate else ""))
    if analysis.depth is not None:
        parts.append(f"depth {analysis.depth}")
    if analysis.value is not None:
        parts.append(f"value {analysis.value:+.2f} for the bot")
    text = ", ".join(parts)
    if analysis.moves:
        best = ", ".join(
            f"{stat.move} ({stat.visits:,} visits"
            + (f", {stat.value:+.2f}" if stat.value is not None else "")
            + ")"
            for stat in analysis.moves[:BEST_MOVES_SHOWN]
        )
        text += f"; best moves: {best}"
    if analysis.pv:
        text += "; expects " + " ".join(map(str, analysis.pv))
    return text


def tree_lines(tree: Sequence[TreeNode] | None) -> list[str]:
    """The reported search tree as indented text, one node a line; ``*`` marks the principal
    line. Each node: its move, visits and value for the player who plays it."""
    if not tree:
        return []
    below, principal = children(tree), set(principal_line(tree))
    lines = ["search tree (move: visits, value for its player; * principal line):"]

    def walk(index: int, depth: int) -> None:
        node = tree[index]
        value = "" if node.value is None else f", {node.value:+.2f}"
        mark = "*" if index in principal else "-"
        lines.append(f"{'  ' * depth}{mark} {node.move}: {node.visits:,}{value}")
        for child in below[index]:
            walk(child, depth + 1)

    for top in below[len(tree)]:
        walk(top, 1)
    return lines


@dataclass(slots=True)
class Turn:
    """What happened on the last ply, for the status lines under the board."""

    text: str
    analysis_lines: list[str] = field(default_factory=list)


class Session:
    """One game between the person at the terminal (seat ``human``) and ``strategy``."""

    def __init__(self, state: GameState, strategy: Strategy, human: int) -> None:
        self.state = state
        self.strategy = strategy
        self.human = human
        self.last: Turn | None = None
        self.resigned: Outcome | None = None
        """Set when the bot resigned (its engine failed): the person won."""
        self._redraw = False

    def run(self, inp: TextIO, out: TextIO) -> int:
        """Play to the end; returns the exit status (see the module docstring)."""
        self._redraw = out.isatty()
        try:
            self.draw(out)
            while self.state.outcome() is None and self.resigned is None:
                if self.state.to_move == self.human:
                    move = self.ask(inp, out)
                    if move is None:
                        out.write("game abandoned\n")
                        return 0
                    self.state = self.state.play(move)
                    self.last = Turn(f"you ({MARKS[self.human]}) played {move}")
                else:
                    self.bot_move(out)
                self.draw(out)
        except KeyboardInterrupt:
            out.write("\ngame abandoned\n")
            out.flush()
            return 130
        out.write(self.result_line() + "\n")
        out.flush()
        return 0

    def bot_move(self, out: TextIO) -> None:
        """Let the strategy choose and play its move, keeping its search report.

        A strategy that forfeits (an engine fault) resigns: the person wins.
        """
        from bots import Forfeit
        from bots.client import analysis_from

        out.write(f"{self.strategy.describe()} is thinking...\n")
        out.flush()
        started = time.perf_counter()
        try:
            move = self.strategy.choose_move(self.state)
        except Forfeit as exc:
            self.resigned = Outcome(self.human, Termination.RESIGN)
            self.last = Turn(f"the bot resigned: {exc}")
            return
        took = time.perf_counter() - started
        analysis = analysis_from(self.strategy.last_search)
        self.state = self.state.play(move)
        bot = MARKS[1 - self.human]
        self.last = Turn(
            f"bot ({bot}) played {move} in {took:.2f} s",
            [
                f"search: {describe_analysis(analysis)}",
                *tree_lines(None if analysis is None else analysis.tree),
            ],
        )

    def ask(self, inp: TextIO, out: TextIO) -> int | None:
        """The person's next legal move; None on ``q`` or end of input. Re-asks on a bad one."""
        while True:
            out.write(f"your move ({MARKS[self.human]}): ")
            out.flush()
            line = inp.readline()
            if not line:  # end of input (Ctrl-D)
                out.write("\n")
                return None
            text = line.strip()
            if text.lower() in QUIT:
                return None
            if not text:
                continue
            try:
                return parse_move(text, self.state)
            except IllegalMoveError as exc:
                out.write(f"error: {exc}\n")

    def draw(self, out: TextIO) -> None:
        """The players, the board, the last move and the bot's search, redrawn in place on a tty."""
        seats = ["you", self.strategy.describe()]
        if self.human == 1:
            seats.reverse()
        lines = [
            f"{self.state.name}: {seats[0]} ({MARKS[0]}) vs {seats[1]} ({MARKS[1]})",
            f"moves: {game_spec(self.state.name).move_help}; q to quit",
            "",
            self.state.render(),
            "",
        ]
        if self.last is not None:
            lines.append(self.last.text)
            lines += self.last.analysis_lines
        out.write((CLEAR if self._redraw else "") + "\n".join(lines) + "\n")
        out.flush()

    def result_line(self) -> str:
        """Who won, from the person's side."""
        outcome = self.resigned or self.state.outcome()
        assert outcome is not None
        if outcome.winner is None:
            return f"draw ({outcome.result})"
        who = "you win" if outcome.winner == self.human else "the bot wins"
        ending = game_spec(self.state.name).termination_text(outcome.termination)
        return f"{who} ({outcome.result}, {ending})"
