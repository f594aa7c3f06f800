"""The ``ugi:CMD`` strategy spec: the engine's command line and the adapter's own options.

``CMD`` is a shell-style command line (split with ``shlex``, no shell runs)::

    ugi:./my-engine --threads 1
    ugi:python3 engine.py --option Exploration=1.4 --movetime 200

The adapter takes two kinds of words out of it, wherever they stand after
the program; every other word goes to the engine:

* ``--option NAME=VALUE`` sends ``setoption name NAME value VALUE`` after the
  handshake (repeat it for several options);
* ``--movetime MS`` is the time per move when there is no clock (offline
  play, ``arena play``; default ``DEFAULT_MOVETIME_MS``) and the engine's own
  limit under a clock (the clock's deadline still cuts it short).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass

from bots.strategy import StrategyOptionError

INTERPRETERS = r"(python|pypy|node|ruby|perl|java|bash|sh)[0-9.]*"
"""Programs whose first argument (the script) names the engine instead."""

DEFAULT_MOVETIME_MS = 1000
"""Time per move without a clock, when the spec gives no ``--movetime``."""


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """A parsed ``ugi:`` command: what to run and what to tell the engine."""

    argv: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()
    movetime_ms: int | None = None
    command: str = ""
    """The command as given (before the program was found)."""

    @property
    def name(self) -> str:
        """The program's file name (the script's under an interpreter), for logs."""
        names = [os.path.basename(word) for word in self.argv]
        if re.fullmatch(INTERPRETERS, names[0]) and len(names) > 1:
            return names[1]
        return names[0]

    def describe(self) -> str:
        """The spec as given: ``ugi:./my-engine --threads 1``."""
        return "ugi:" + (self.command or shlex.join(self.argv))


def parse_engine_command(command: str) -> EngineSpec:
    """Split ``command`` (the part after ``ugi:``); ``StrategyOptionError`` says what is wrong.

    The program must exist: a path with a ``/`` is made absolute (so the
    engine runs the same whatever the current directory is later), a bare
    name is looked up on ``PATH``.
    """
    try:
        words = shlex.split(command)
    except ValueError as exc:
        raise StrategyOptionError(f"ugi: cannot split {command!r}: {exc}") from None
    if not words:
        raise StrategyOptionError("ugi: no engine command given (ugi:./my-engine)")
    argv: list[str] = []
    options: list[tuple[str, str]] = []
    movetime: int | None = None
    i = 0
    while i < len(words):
        word = words[i]
        if i > 0 and word in ("--option", "--movetime"):
            if i + 1 >= len(words):
                raise StrategyOptionError(f"ugi: {word} needs a value in {command!r}")
            value = words[i + 1]
            if word == "--option":
                name, eq, text = value.partition("=")
                if not eq or not name.strip():
                    raise StrategyOptionError(f"ugi: --option needs NAME=VALUE, got {value!r}")
                options.append((name.strip(), text))
            else:
                if not value.isdigit() or int(value) < 1:
                    raise StrategyOptionError(
                        f"ugi: --movetime needs a positive integer (ms), got {value!r}"
                    )
                movetime = int(value)
            i += 2
            continue
        argv.append(word)
        i += 1
    argv[0] = _program(argv[0])
    return EngineSpec(tuple(argv), tuple(options), movetime, " ".join(command.split()))


def _program(program: str) -> str:
    if "/" in program:
        path = os.path.abspath(os.path.expanduser(program))
        if not os.path.isfile(path):
            raise StrategyOptionError(f"ugi: no such engine program {program!r}")
        if not os.access(path, os.X_OK):
            raise StrategyOptionError(f"ugi: {program!r} is not executable (chmod +x it)")
        return path
    found = shutil.which(program)
    if found is None:
        raise StrategyOptionError(f"ugi: {program!r} is not on PATH (give a path: ./{program})")
    return found
