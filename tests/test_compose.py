"""docker-compose.yml, Dockerfile and .dockerignore, checked without a Docker engine.

Every command the compose file runs must be one this package really accepts:
console scripts from ``[project.scripts]``, arguments parsed by the real
argparse parsers of ``arena.cli`` and ``bots.client.cli``, strategy specs known
to the strategy registry. Every service must have what it needs (an image or a
build, declared volumes, ``depends_on`` naming real services, a healthcheck
where a dependant waits for health). The bot entrypoint's shell wrapper and the
``provision`` step are run for real on the local machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main as arena_main
from arena.cli.main import build_parser as arena_parser
from arena.live.mqtt_topics import parse_broker_url
from bots.client.cli import _parser as bot_parser
from bots.strategy import ALIASES, parse_spec, strategy_class

yaml = pytest.importorskip("yaml", reason="PyYAML parses docker-compose.yml")

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
BOT_WRAPPER = 'export ARENA_BOT_TOKEN="$(cat "/tokens/$0")" && exec arena-bot --name "$0" "$@"'
DEPENDENCY_CONDITIONS = {
    "service_started",
    "service_healthy",
    "service_completed_successfully",
}


def _unescape(value: Any) -> Any:
    """Compose interpolation: ``$$`` is a literal ``$``; a lone ``$`` would be a variable."""
    if isinstance(value, str):
        assert not re.search(r"(?<!\$)\$(?!\$)", value.replace("$$", "")), value
        return value.replace("$$", "$")
    if isinstance(value, list):
        return [_unescape(v) for v in value]
    if isinstance(value, dict):
        return {k: _unescape(v) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = _unescape(yaml.safe_load(COMPOSE.read_text()))
    return data


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = compose["services"]
    return found


def scripts() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared: dict[str, str] = project["scripts"]
    return declared


def argv_of(service: dict[str, Any]) -> list[str]:
    """The process a service runs, as an argv (the bot wrapper resolved to ``arena-bot``)."""
    command = service.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    entrypoint = service.get("entrypoint")
    if entrypoint is None:
        assert command, "a service of the arena image must name its command"
        return list(command)
    assert entrypoint == ["sh", "-c", BOT_WRAPPER]
    return ["arena-bot", "--name", command[0], *command[1:]]


def parse(parser: argparse.ArgumentParser, args: list[str]) -> argparse.Namespace:
    try:
        return parser.parse_args(args)
    except SystemExit as exc:  # argparse exits on bad arguments
        raise AssertionError(f"{parser.prog} refuses {args}") from exc


def check_spec(spec: str) -> None:
    kind, options = parse_spec(spec)
    cls = strategy_class(kind)
    for name in options:
        assert ALIASES.get(name, name) in cls.OPTIONS, f"{spec}: unknown option {name}"


def test_every_service_has_an_image_volumes_and_real_dependencies(
    compose: dict[str, Any], services: dict[str, dict[str, Any]]
) -> None:
    declared_volumes = set(compose.get("volumes") or {})
    for name, service in services.items():
        assert "image" in service or "build" in service, name
        if "build" in service:
            context = ROOT / (service["build"] if isinstance(service["build"], str) else ".")
            assert (context / "Dockerfile").is_file(), name
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if not source.startswith(("/", ".")):
                assert source in declared_volumes, f"{name}: volume {source} is not declared"
        depends = service.get("depends_on", {})
        if isinstance(depends, list):  # the short form: just started
            depends = {other: {"condition": "service_started"} for other in depends}
        for other, how in depends.items():
            assert other in services, f"{name} depends on unknown {other}"
            assert how["condition"] in DEPENDENCY_CONDITIONS
            if how["condition"] == "service_healthy":
                assert "healthcheck" in services[other], f"{other} has no healthcheck"
    assert {"mosquitto", "arena", "provision"} <= set(services)
    assert services["arena"]["ports"] == ["8765:8765"]
    assert services["mosquitto"]["image"].startswith("eclipse-mosquitto")
    # The image's bundled listener on 1883 for anonymous clients.
    assert services["mosquitto"]["command"][-1] == "/mosquitto-no-auth.conf"


def test_every_command_is_a_console_script_with_arguments_its_parser_accepts(
    services: dict[str, dict[str, Any]],
) -> None:
    console = scripts()
    parsers = {"arena": arena_parser, "arena-bot": bot_parser}
    serve = parse(arena_parser(), argv_of(services["arena"])[1:])
    assert (serve.command, serve.host, serve.port) == ("serve", "0.0.0.0", 8765)
    assert parse_broker_url(serve.mqtt).host in services
    provision = parse(arena_parser(), argv_of(services["provision"])[1:])
    assert provision.command == "bots" and provision.bots_command == "add"
    assert provision.if_missing and provision.db == serve.db
    bots = set()
    for name, service in services.items():
        if "image" in service and "build" not in service:
            continue  # not the arena image (mosquitto, postgres)
        argv = argv_of(service)
        assert argv[0] in console, f"{name}: {argv[0]} is not in [project.scripts]"
        args = parse(parsers[argv[0]](), argv[1:])
        if argv[0] == "arena-bot":
            check_spec(args.strategy)
            if "cluster" in service.get("profiles", ()):
                continue  # test_the_cluster_profile_...
            bots.add(args.name)
            assert [hosts(urls) for urls in args.url] == [[("arena", serve.port)]], args.url
            assert service["volumes"] == ["tokens:/tokens:ro"]
    assert bots == set(provision.names) and {"random", "alphabeta"} <= bots
    assert len([b for b in bots if b.startswith("mcts")]) >= 2


def hosts(urls: list[str]) -> list[tuple[str, int]]:
    """``ws://HOST:PORT`` URLs as (host, port) pairs."""
    found = [re.fullmatch(r"ws://([\w.-]+):(\d+)", url) for url in urls]
    assert all(found), urls
    return [(url[1], int(url[2])) for url in found if url]


def test_the_cluster_profile_runs_two_nodes_on_postgres_with_bots_on_both(
    services: dict[str, dict[str, Any]],
) -> None:
    cluster = {n: s for n, s in services.items() if "cluster" in s.get("profiles", ())}
    default = set(services) - set(cluster)
    assert {"postgres", "arena-a", "arena-b", "cluster-provision"} <= set(cluster)
    assert {"mosquitto", "arena", "provision"} <= default  # `docker compose up` is unchanged
    nodes = {n: parse(arena_parser(), argv_of(cluster[n])[1:]) for n in ("arena-a", "arena-b")}
    provision = parse(arena_parser(), argv_of(cluster["cluster-provision"])[1:])
    assert provision.bots_command == "add" and provision.if_missing
    for name, node in nodes.items():
        assert node.command == "serve" and node.allow_multi_node and node.db == provision.db
        assert node.db.startswith("postgresql+asyncpg://") and "@postgres:" in node.db
        assert hosts([node.public_url]) == [(name, node.port)]  # where the other sends bots
        assert parse_broker_url(node.mqtt).host == "cluster-mosquitto"
        assert cluster[name]["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert len({node.node_id for node in nodes.values()}) == 2
    assert {s["ports"][0].split(":")[0] for s in (cluster["arena-a"], cluster["arena-b"])} == {
        "8766", "8767"
    }  # fmt: skip
    assert "healthcheck" in cluster["postgres"] and "pgdata" in cluster["postgres"]["volumes"][0]
    bots = {}
    for service in cluster.values():
        if "build" in service and (argv := argv_of(service))[0] == "arena-bot":
            args = parse(bot_parser(), argv[1:])
            bots[args.name] = [h for urls in args.url for h in hosts(urls)]
            assert service["volumes"] == ["cluster-tokens:/tokens:ro"]
    assert set(bots) == set(provision.names) and len(bots) >= 4
    # Each bot names both nodes (failover), and each node is the first choice of some bot.
    assert all(sorted(urls) == [("arena-a", 8765), ("arena-b", 8765)] for urls in bots.values())
    assert {urls[0][0] for urls in bots.values()} == {"arena-a", "arena-b"}


def compose_cli() -> list[str] | None:
    """``docker compose`` (the plugin), else ``docker-compose`` (v1), else None."""
    docker = shutil.which("docker")
    plugin = [docker, "compose"] if docker else []
    if plugin and subprocess.run([*plugin, "version"], capture_output=True).returncode == 0:
        return plugin
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_docker_compose_validates_the_file_with_and_without_the_cluster_profile() -> None:
    cli = compose_cli()
    if cli is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is installed (checked above)")
    for profile, expected in (([], {"arena", "mosquitto", "provision"}),
                              (["--profile", "cluster"], {"postgres", "arena-a", "arena-b"})):
        run = subprocess.run(
            [*cli, *profile, "config", "--services"], cwd=ROOT, capture_output=True, text=True
        )  # validates the file offline: no Docker engine is needed
        assert run.returncode == 0, run.stderr
        assert expected <= set(run.stdout.split())


def test_the_bot_wrapper_passes_the_token_in_the_environment(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    (tokens / "mcts-200").write_text("s3cret-token\n")
    fake = tmp_path / "bin" / "arena-bot"  # prints what the real one would be given
    fake.parent.mkdir()
    fake.write_text(
        "#!/bin/sh\nexec python3 -c 'import json,os,sys; "
        'print(json.dumps([os.environ["ARENA_BOT_TOKEN"], sys.argv[1:]]))\' "$@"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    script = BOT_WRAPPER.replace("/tokens/", f"{tokens}/")
    run = subprocess.run(
        ["sh", "-c", script, "mcts-200", "--url", "ws://arena:8765", "--strategy", "mcts:sims=200"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"},
        check=True,
    )
    token, argv = json.loads(run.stdout)
    assert token == "s3cret-token"  # $(...) drops the trailing newline
    assert argv == ["--name", "mcts-200", "--url", "ws://arena:8765", "--strategy", "mcts:sims=200"]


def test_provision_is_idempotent_and_repairs_a_lost_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tokens, db = tmp_path / "tokens", str(tmp_path / "a.db")
    base = ["bots", "add", "--if-missing", "--token-dir", str(tokens), "--db", db]
    assert arena_main([*base, "random", "alphabeta"]) == 0
    first = {p.name: p.read_text() for p in tokens.iterdir()}
    assert set(first) == {"random", "alphabeta"}
    assert all((tokens / n).stat().st_mode & 0o777 == 0o600 for n in first)
    assert arena_main([*base, "random", "alphabeta"]) == 0  # run again: nothing changes
    assert {p.name: p.read_text() for p in tokens.iterdir()} == first
    (tokens / "random").unlink()
    assert arena_main([*base, "random", "alphabeta"]) == 0
    out = capsys.readouterr().out
    assert "bot random: reissued" in out and "bot alphabeta: kept" in out
    assert (tokens / "random").read_text() != first["random"]
    assert arena_main([*base, "../escape"]) == 2  # a name is a file name here: refused
    # Without --token-dir an existing bot is left alone (its token cannot be shown again).
    assert arena_main(["bots", "add", "--if-missing", "--db", db, "random"]) == 0
    assert "already registered" in capsys.readouterr().out


def test_dockerfile_and_dockerignore() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim$", dockerfile, re.M)
    assert "pip install ." in dockerfile
    for copied in re.findall(r"^COPY (\S+)", dockerfile, re.M):
        assert (ROOT / copied).exists(), copied
    cmd = json.loads(re.findall(r"^CMD (.+)$", dockerfile, re.M)[-1])
    assert cmd[0] in scripts()
    assert parse(arena_parser(), cmd[1:]).command == "serve"
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    ignored = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    assert {".git", ".venv", "**/__pycache__", "*.db"} <= ignored
    assert not {"arena", "bots", "protocol", "pyproject.toml", "README.md"} & ignored
