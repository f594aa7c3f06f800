"""The ``bots`` command: offline matches between strategies.

bots play connect4 "mcts:sims=2000" "alphabeta:time_ms=50" --games 20
bots play connect4 "mcts:time_ms=2000" "alphabeta" --move-ms 200   # on a clock
bots list

The installed ``bots`` script is ``arena.cli.bots_command``: it runs ``main``
here with the arena's Elo verdict passed in (``bots`` may import only
``protocol``). Run as ``python -m bots.cli`` the match report has no Elo line.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
import time
from collections.abc import Callable, Sequence

from bots.client.cli import non_negative_int, positive_int
from bots.match import GameRecord, MatchResult, play_match
from bots.strategy import STRATEGIES, StrategyError, strategy_class
from protocol.games import GAMES
from protocol.messages import TimeControl


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bots", description="Play bot strategies offline.")
    commands = parser.add_subparsers(dest="command", required=True)
    play = commands.add_parser("play", help="play a match between two strategy specs")
    play.add_argument("game", choices=GAMES)
    play.add_argument("first", help='strategy spec, e.g. "mcts:sims=2000,workers=1"')
    play.add_argument("second", help='strategy spec, e.g. "alphabeta:time_ms=50"')
    play.add_argument(
        "--games", type=int, default=10, help="games to play (colours swap every game)"
    )
    play.add_argument("--seed", type=int, default=None, help="seed of the random openings")
    play.add_argument(
        "--opening-plies", type=int, default=0, help="random moves before the bots play"
    )
    play.add_argument(
        "--boards", type=int, default=None, help="final boards to print (default: all)"
    )
    play.add_argument("--quiet", action="store_true", help="no per-game progress lines")
    play.add_argument(
        "--move-ms", type=positive_int, default=None,
        help="put both players on a clock: time per move (ms); a move over its time loses",
    )
    play.add_argument(
        "--bank-ms", type=non_negative_int, default=0, help="with --move-ms: the time bank (ms)"
    )
    commands.add_parser("list", help="list the strategies and their options")
    return parser


def _progress(start: float, quiet: bool):  # type: ignore[no-untyped-def]
    def report(done: int, total: int, record: GameRecord, result: MatchResult) -> None:
        if quiet:
            return
        winner = record.outcome.winner
        who = (
            "draw"
            if winner is None
            else result.names[record.first if winner == 0 else 1 - record.first]
        )
        how = record.outcome.termination.value
        if record.reason:
            how += f": {record.reason}"
        print(
            f"[{done}/{total}] {time.perf_counter() - start:6.1f}s  {record.outcome.result:<7} "
            f"({who}, {how}, {len(record.moves)} plies)  running score {result.score_rate(0):.1%}",
            flush=True,
        )

    return report


Verdict = Callable[[MatchResult], str]
"""Turns a finished match into the line that says what it shows (the Elo difference)."""


def _play(args: argparse.Namespace, verdict: Verdict | None) -> int:
    start = time.perf_counter()
    clock = None
    if args.move_ms is not None:
        clock = TimeControl(move_ms=args.move_ms, bank_ms=args.bank_ms)
    result = play_match(
        args.game,
        [args.first, args.second],
        games=args.games,
        seed=args.seed,
        opening_plies=args.opening_plies,
        progress=_progress(start, args.quiet),
        time_control=clock,
    )
    shown = (
        result.games if args.boards is None else result.games[-args.boards :] if args.boards else ()
    )
    for number, record in enumerate(result.games, 1):
        if record in shown:
            first = result.names[record.first]
            print(f"\nGame {number}: {first} moved first; {record.outcome.result}")
            print(record.final.render())
    print()
    print(result.summary())
    if verdict is not None:
        print(verdict(result))
    print(f"{len(result.games)} games in {time.perf_counter() - start:.1f} s")
    return 0


def _list() -> int:
    for kind in STRATEGIES:
        cls = strategy_class(kind)
        options = ", ".join(f"{name}:{typ.__name__}" for name, typ in cls.OPTIONS.items())
        indent, pad = f"{kind:<12} ", " " * 13
        for text in (plain_summary(cls.__doc__), f"options: {options or 'none'}"):
            print(textwrap.fill(text, 88, initial_indent=indent, subsequent_indent=pad))
            indent = pad
    return 0


def plain_summary(docstring: str | None) -> str:
    """A docstring's first paragraph on one line, without reStructuredText markup."""
    paragraph = " ".join((docstring or "").strip().split("\n\n")[0].split())
    return re.sub(r"(?::\w+:)?`{1,2}([^`]+)`{1,2}", r"\1", paragraph)


def main(argv: Sequence[str] | None = None, verdict: Verdict | None = None) -> int:
    """The ``bots`` command; ``verdict`` adds its line to a match's report."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "play":
            return _play(args, verdict)
        return _list()
    except StrategyError as exc:
        print(f"bots: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
