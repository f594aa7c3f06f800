"""Options that may also come from the environment or a TOML file (``arena serve --config``).

An ``Option`` is one command-line option (``--move-ms``) that has an
environment variable (``ARENA_MOVE_MS``) and a config-file key
(``move_ms``; ``move-ms`` is accepted too). ``add_options`` puts them on a
parser with no defaults of their own, so that ``resolve`` can tell an option
given on the command line from one left out, and fill each in by precedence:

    command line  >  environment (ARENA_*)  >  config file  >  built-in default

The file is ``--config FILE`` (or ``$ARENA_CONFIG``), read with ``tomllib``:
top-level keys only, each checked against its option's type. An unknown key
or a value of the wrong type is a ``ConfigError`` naming the file and the key
(``arena.cli.main`` prints it as one line, exit status 2). Relative paths in
the file (database file, TLS files, journal) are relative to the file.
"""

from __future__ import annotations

import argparse
import difflib
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.errors import ConfigError
from protocol.numbers import parse_int

ENV_PREFIX = "ARENA_"
CONFIG_ENV = "ARENA_CONFIG"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class Option:
    """One option of the command line, the environment and the config file."""

    name: str
    """The long option without ``--``, e.g. ``move-ms``."""
    kind: type
    """``str``, ``int``, ``float`` or ``bool`` (a flag)."""
    default: Any
    help: str
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    path: bool = False
    """A file path: relative in the config file means relative to the file."""
    convert: Callable[[str], Any] | None = None
    """Applied to the text value last (e.g. a path to a database URL)."""
    items: bool = False
    """A comma-separated list on the command line; a list of strings in the file too."""

    @property
    def dest(self) -> str:
        """The attribute on the parsed arguments, and the config file's key."""
        return self.name.replace("-", "_")

    @property
    def env(self) -> str:
        """The environment variable, e.g. ``ARENA_MOVE_MS``."""
        return ENV_PREFIX + self.dest.upper()

    def from_text(self, text: str, where: str) -> Any:
        """The value of ``text`` (a command-line word or an environment variable)."""
        if self.kind is bool:
            word = text.strip().lower()
            if word in _TRUE | _FALSE:
                return word in _TRUE
            raise ConfigError(f"{where}: expected true or false, not {text!r}")
        try:
            value = parse_int(text, where) if self.kind is int else self.kind(text)
        except ValueError:
            raise ConfigError(f"{where}: expected {_kind_name(self.kind)}, not {text!r}") from None
        return self._finish(value, where)

    def from_toml(self, value: Any, where: str, base: Path) -> Any:
        """The value of a config-file entry; paths are taken relative to ``base``."""
        if self.items and isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = ",".join(value)
        ok = isinstance(value, self.kind) and not (self.kind is not bool and type(value) is bool)
        if self.kind is float and type(value) is int:
            value, ok = float(value), True
        if not ok:
            raise ConfigError(
                f"{where}: expected {_kind_name(self.kind)}, not {type(value).__name__} {value!r}"
            )
        if self.path and isinstance(value, str) and "://" not in value:
            value = str(base / Path(value).expanduser())
        return value if self.kind is bool else self._finish(value, where)

    def _finish(self, value: Any, where: str) -> Any:
        if self.choices is not None and value not in self.choices:
            raise ConfigError(f"{where}: expected one of {', '.join(self.choices)}, not {value!r}")
        if self.convert is not None:
            value = self.convert(value)
        return value

    def parse_arg(self, text: str) -> Any:
        """argparse's ``type``: errors become argparse's own usage errors."""
        try:
            return self.from_text(text, f"--{self.name}")
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[1]) from None


def _kind_name(kind: type) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}[kind]


def add_options(parser: argparse.ArgumentParser, options: Sequence[Option]) -> None:
    """Add ``--config`` and every option to ``parser``, each defaulting to None ("not given")."""
    parser.add_argument(
        "--config",
        metavar="FILE",
        help=f"TOML file of these options (keys like move_ms; env {CONFIG_ENV}); "
        "precedence: command line > ARENA_* variables > file > defaults",
    )
    for option in options:
        shown = "" if option.default in (None, "", False) else f"; default {option.default}"
        text = f"{option.help} (env {option.env}{shown})"
        if option.kind is bool:
            parser.add_argument(
                f"--{option.name}",
                dest=option.dest,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=text,
            )
        else:
            parser.add_argument(
                f"--{option.name}",
                dest=option.dest,
                type=option.parse_arg,
                metavar=option.metavar
                or (
                    "{" + ",".join(option.choices) + "}" if option.choices else option.dest.upper()
                ),
                help=text,
            )


def read_file(path: str, options: Sequence[Option]) -> dict[str, Any]:
    """The values of a config file, by option ``dest``; ``ConfigError`` on any problem."""
    file = Path(path).expanduser()
    try:
        with file.open("rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    known = {option.dest: option for option in options}
    base = file.resolve().parent
    values: dict[str, Any] = {}
    for key, value in data.items():
        option = known.get(key.replace("-", "_"))
        if option is None:
            near = difflib.get_close_matches(key.replace("-", "_"), known, n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise ConfigError(f"{path}: unknown key {key!r}{hint}")
        values[option.dest] = option.from_toml(value, f"{path}: {key}", base)
    return values


def resolve(
    args: argparse.Namespace, options: Sequence[Option], environ: Mapping[str, str] | None = None
) -> argparse.Namespace:
    """Fill every option left out on the command line from the environment, file or default.

    Empty environment variables count as unset.
    """
    env = os.environ if environ is None else environ
    path = args.config or env.get(CONFIG_ENV) or None
    from_file = read_file(path, options) if path else {}
    for option in options:
        if getattr(args, option.dest) is not None:
            continue
        text = env.get(option.env, "")
        if text:
            value = option.from_text(text, f"${option.env}")
        elif option.dest in from_file:
            value = from_file[option.dest]
        else:
            value = option.default
        setattr(args, option.dest, value)
    return args
