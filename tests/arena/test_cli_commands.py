"""The ``arena`` command's table of modules, and a run importing only its command's module."""

from __future__ import annotations

import argparse
import subprocess
import sys

from arena.cli.common import common_parser
from arena.cli.main import COMMAND_MODULES, build_parser, register_of


def test_each_module_registers_exactly_the_commands_the_table_says() -> None:
    for module, names in COMMAND_MODULES.items():
        parser = argparse.ArgumentParser()
        commands = parser.add_subparsers(dest="command")
        register_of(module)(commands, common_parser())
        assert tuple(commands.choices) == names, module


def _commands(parser: argparse.ArgumentParser) -> tuple[str, ...]:
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return tuple(commands.choices)


def test_the_whole_parser_lists_every_command_in_the_tables_order() -> None:
    every = tuple(name for names in COMMAND_MODULES.values() for name in names)
    assert _commands(build_parser()) == every
    # An unknown first word gets the whole parser, so its error lists every command.
    assert _commands(build_parser("no-such-command")) == every
    assert _commands(build_parser("h2h")) == ("leaderboard", "h2h", "ratings")


def test_a_run_imports_only_its_commands_module() -> None:
    script = (
        "import sys\n"
        "from arena.cli.main import main\n"
        "try:\n"
        "    main(['bots', 'list', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('arena.cli.ladder', 'arena.cli.analyse', 'arena.cli.demo',"
        " 'scipy', 'arena.cli.bots') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.strip().splitlines()[-1] == "['arena.cli.bots']"
