"""``arena serve`` options from the command line, ``ARENA_*`` variables and a TOML file:
precedence, paths, and refusals as one line with exit status 2 from a real process."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.config import resolve
from arena.cli.main import build_parser
from arena.cli.serve import OPTIONS, server_config
from arena.errors import ConfigError

DOCS = Path(__file__).parents[2] / "docs" / "operations.md"


def settings(argv: list[str], env: dict[str, str]) -> argparse.Namespace:
    """The resolved ``arena serve`` arguments for ``argv`` under environment ``env``."""
    return resolve(build_parser().parse_args(["serve", *argv]), OPTIONS, env)


def test_command_line_beats_environment_beats_file_beats_default(tmp_path: Path) -> None:
    config = tmp_path / "arena.toml"
    config.write_text('port = 1111\nmove_ms = 700\nhost = "0.0.0.0"\ntrust_proxy = true\n')
    env = {"ARENA_PORT": "2222", "ARENA_HOST": "127.0.0.2"}
    both = settings(["--config", str(config), "--port", "3333"], env)
    assert (both.port, both.host, both.move_ms, both.trust_proxy) == (3333, "127.0.0.2", 700, True)
    assert settings(["--config", str(config)], env).port == 2222
    assert settings(["--config", str(config)], {}).port == 1111
    assert settings([], {}).port == 8765 and settings([], {}).trust_proxy is False
    # A flag the file turned on, turned off again on the command line.
    assert settings(["--config", str(config), "--no-trust-proxy"], {}).trust_proxy is False
    # The file can come from the environment; an empty variable counts as unset.
    assert settings([], {"ARENA_CONFIG": str(config), "ARENA_PORT": ""}).port == 1111


def test_values_are_typed_and_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    config = tmp_path / "etc" / "arena.toml"
    config.write_text(
        'db = "data/arena.db"\ntls-cert = "cert.pem"\ntls_key = "/abs/key.pem"\n'
        'allowed_origins = ["https://a.example", "https://b.example"]\n'
        'grace_s = 5\nlog_format = "json"\nsummary_interval = 0\n'
    )
    args = settings(["--config", str(config)], {"ARENA_ALLOW_MULTI_NODE": "yes"})
    assert args.db == f"sqlite+aiosqlite:///{tmp_path / 'etc' / 'data' / 'arena.db'}"
    assert args.tls_cert == str(tmp_path / "etc" / "cert.pem") and args.tls_key == "/abs/key.pem"
    assert args.grace_s == 5.0 and args.log_format == "json" and args.allow_multi_node is True
    config_of = server_config(args)
    assert config_of.allowed_origins == ("https://a.example", "https://b.example")
    assert config_of.summary_interval_s == 0.0 and config_of.grace_s == 5.0
    assert settings(["-v"], {}).log_level == "debug"


def test_every_option_is_documented_with_its_key_and_variable() -> None:
    text = DOCS.read_text("utf-8")
    for option in OPTIONS:
        assert f"| `--{option.name}` | `{option.dest}` | `{option.env}` |" in text, option.name


def serve(tmp_path: Path, *argv: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """``arena serve`` that must refuse to start: its exit status and standard error."""
    done = subprocess.run(
        [sys.executable, "-m", "arena", "serve", "--db", str(tmp_path / "a.db"), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
        check=False,
    )
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    ("content", "line"),
    [
        ("prot = 8765\n", "error: {file}: unknown key 'prot' (did you mean port?)\n"),
        ("[serve]\nport = 1\n", "error: {file}: unknown key 'serve'\n"),
        ('port = "eighty"\n', "error: {file}: port: expected an integer, not str 'eighty'\n"),
        ("trust_proxy = 1\n", "error: {file}: trust_proxy: expected true or false, not int 1\n"),
        (
            'log_format = "xml"\n',
            "error: {file}: log_format: expected one of text, json, not 'xml'\n",
        ),
        (
            "port = \n",
            "error: config file {file} is not valid TOML: Invalid value (at line 1, column 8)\n",
        ),
    ],
)
def test_a_bad_config_file_is_one_line_and_exit_2(tmp_path: Path, content: str, line: str) -> None:
    config = tmp_path / "arena.toml"
    config.write_text(content)
    assert serve(tmp_path, "--config", str(config)) == (2, line.format(file=config))


def test_a_missing_file_or_bad_variable_is_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    assert serve(tmp_path, "--config", str(missing)) == (
        2,
        f"error: cannot read config file {missing}: No such file or directory\n",
    )
    assert serve(tmp_path, env={"ARENA_PORT": "abc"}) == (
        2,
        "error: $ARENA_PORT: expected an integer, not 'abc'\n",
    )
    assert serve(tmp_path, env={"ARENA_TRUST_PROXY": "maybe"}) == (
        2,
        "error: $ARENA_TRUST_PROXY: expected true or false, not 'maybe'\n",
    )


@pytest.mark.parametrize("text", ["٣", "３", "²", "1_0", " 5", "9" * 30])
def test_integer_options_take_ascii_digits_only(text: str) -> None:
    with pytest.raises(ConfigError, match="expected an integer"):
        settings([], {"ARENA_MOVE_MS": text})
    with pytest.raises(SystemExit):
        build_parser().parse_args(["tournament", "status", text])
