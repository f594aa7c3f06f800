"""TLS on the bot side: ``wss://`` verified against the system's CAs or ``--ca-file``, a
one-line exit 2 when the certificate is not trusted, and no token over plain ``ws://`` to
another host.

The certificates are made in the test with the ``openssl`` command (a CA and a
server certificate for ``localhost`` and ``127.0.0.1`` it signed). The TLS
endpoint is ``tests.relay.TcpRelay`` with a server context: it terminates
TLS in front of a real ``arena serve``, as a reverse proxy would.
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from pathlib import Path

import pytest

from bots.client.errors import ClientError, InsecureURLError
from bots.client.transport import connection_tls, is_loopback_host
from tests.bots.arena_process import ArenaProcess, start_bot, stop_processes
from tests.relay import TcpRelay

needs_openssl = pytest.mark.skipif(
    shutil.which("openssl") is None, reason="the openssl command makes the test certificates"
)


def openssl(*args: str, cwd: Path) -> None:
    """Run one ``openssl`` command in ``cwd``."""
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_ca(directory: Path, name: str) -> tuple[Path, Path]:
    """A self-signed CA: its certificate and key files."""
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", key.name, "-out", cert.name, "-days", "1", "-subj", f"/CN={name}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=directory,
    )
    return cert, key


@pytest.fixture
def certificates(tmp_path: Path) -> dict[str, Path]:
    """``ca`` (signed the server's), ``other_ca`` (did not), ``cert`` and ``key``."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command makes the test certificates")
    directory = tmp_path / "tls"
    directory.mkdir()
    ca, ca_key = make_ca(directory, "test-ca")
    other_ca, _ = make_ca(directory, "other-ca")
    (directory / "server.ext").write_text(
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
        "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
    )
    openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost",
        cwd=directory,
    )
    openssl(
        "x509", "-req", "-in", "server.csr", "-CA", ca.name, "-CAkey", ca_key.name,
        "-CAcreateserial", "-out", "server.pem", "-days", "1", "-extfile", "server.ext",
        cwd=directory,
    )
    return {"ca": ca, "other_ca": other_ca, "cert": directory / "server.pem",
            "key": directory / "server.key"}


def server_context(certificates: dict[str, Path]) -> ssl.SSLContext:
    """The TLS terminator's context."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certificates["cert"], certificates["key"])
    return context


@needs_openssl
async def test_a_bot_plays_over_wss_verified_with_its_ca_file(
    tmp_path: Path, certificates: dict[str, Path]
) -> None:
    async with ArenaProcess(tmp_path, ("alice", "bob")) as arena:
        relay = TcpRelay(arena.port, tls=server_context(certificates))
        port = await relay.start()
        play = ("--game", "tictactoe", "--games", "1", "--strategy", "random:seed=1")
        alice = await start_bot(f"wss://localhost:{port}", "alice", arena.tokens["alice"],
                                "--ca-file", str(certificates["ca"]), *play)
        bob = await start_bot(arena.url, "bob", arena.tokens["bob"], *play)
        try:
            async with asyncio.timeout(30):
                (_, alice_log), _ = await asyncio.gather(alice.communicate(), bob.communicate())
            finished = await arena.matches("finished")
        finally:
            await stop_processes(alice, bob)
            await relay.close()
    assert alice.returncode == 0, alice_log.decode()
    assert relay.connections == 1
    assert len(finished) == 1 and set(finished[0]["players"]) == {"alice", "bob"}


@needs_openssl
@pytest.mark.parametrize("trust", ["system", "other_ca"])
async def test_an_untrusted_certificate_is_one_line_and_exit_2(
    tmp_path: Path, certificates: dict[str, Path], trust: str
) -> None:
    relay = TcpRelay(1, tls=server_context(certificates))  # the handshake fails before a relay
    port = await relay.start()
    ca_args = () if trust == "system" else ("--ca-file", str(certificates["other_ca"]))
    bot = await start_bot(f"wss://localhost:{port}", "alice", "a-token-never-sent",
                          "--strategy", "random", *ca_args)
    try:
        async with asyncio.timeout(20):
            _, stderr = await bot.communicate()
    finally:
        await stop_processes(bot)
        await relay.close()
    log = stderr.decode()
    errors = [line for line in log.splitlines() if " ERROR " in line]
    assert bot.returncode == 2, log
    assert len(errors) == 1 and "Traceback" not in log, log
    assert f"TLS certificate of wss://localhost:{port} not trusted" in errors[0]
    assert "unable to get local issuer certificate" in errors[0]
    assert ("--ca-file" in errors[0]) == (trust == "other_ca")
    assert "reconnecting" not in log


async def test_plain_ws_to_another_host_is_refused_unless_insecure() -> None:
    for url in ("ws://127.0.0.1:8765", "ws://127.9.0.1", "ws://localhost:1", "ws://[::1]:8765"):
        assert connection_tls(url) is None
    for url in ("ws://arena.example.org:8765", "ws://192.168.1.20:8765", "ws://[2001:db8::1]"):
        with pytest.raises(InsecureURLError, match="clear text"):
            connection_tls(url)
        assert connection_tls(url, insecure=True) is None
    with pytest.raises(ClientError, match="needs a wss:// URL"):
        connection_tls("ws://127.0.0.1:8765", ca_file="/etc/hostname")
    with pytest.raises(ClientError, match="bad server URL"):
        connection_tls("http://127.0.0.1:8765")
    assert isinstance(connection_tls("wss://arena.example.org"), ssl.SSLContext)
    assert is_loopback_host("LOCALHOST.") and not is_loopback_host("localhost.example.org")


async def test_cli_refuses_a_clear_text_token_and_an_unreadable_ca_file(tmp_path: Path) -> None:
    refused = await start_bot("ws://arena.example.org:8765", "alice", "secret-token-123",
                              "--strategy", "random")
    missing = await start_bot("wss://arena.example.org", "alice", "secret-token-123",
                              "--ca-file", str(tmp_path / "missing.pem"), "--strategy", "random")
    try:
        async with asyncio.timeout(20):
            (_, refused_log), (_, missing_log) = await asyncio.gather(
                refused.communicate(), missing.communicate()
            )
    finally:
        await stop_processes(refused, missing)
    assert refused.returncode == 2 and missing.returncode == 2
    assert "clear text" in refused_log.decode() and "--insecure" in refused_log.decode()
    assert "cannot load --ca-file" in missing_log.decode()
    for log in (refused_log, missing_log):
        assert b"secret-token-123" not in log and b"Traceback" not in log
