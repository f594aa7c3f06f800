"""How the client reaches the server without giving its token away.

``wss://`` URLs are verified against the system's certificate authorities,
or against only the CAs of ``ca_file`` (a PEM file, for a private CA or a
self-signed server certificate). A plain ``ws://`` URL sends the token in
clear text, so it is refused for any host other than this machine
(``localhost``, ``127.0.0.0/8``, ``::1``) unless ``insecure`` is set (for a
private network you trust, such as a Compose network).

    context = connection_tls(url, ca_file=None, insecure=False)   # None for ws://
"""

from __future__ import annotations

import ipaddress
import ssl

from websockets.exceptions import InvalidURI
from websockets.uri import parse_uri

from bots.client.errors import ClientError, InsecureURLError, TLSVerifyError


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` (and ``*.localhost``) and loopback IP addresses."""
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def connection_tls(
    url: str, ca_file: str | None = None, insecure: bool = False
) -> ssl.SSLContext | None:
    """The TLS context for ``url`` (None for ``ws://``), after checking the URL is safe to use.

    Raises ``InsecureURLError`` for ``ws://`` to a remote host unless
    ``insecure``, and ``ClientError`` for a malformed URL, ``ca_file`` with a
    ``ws://`` URL, or a ``ca_file`` that cannot be read as PEM certificates.
    """
    try:
        uri = parse_uri(url)
    except InvalidURI as exc:
        raise ClientError(f"bad server URL {url!r}: {exc}") from exc
    if not uri.secure:
        if ca_file is not None:
            raise ClientError(f"--ca-file needs a wss:// URL, not {url!r}")
        if not insecure and not is_loopback_host(uri.host):
            raise InsecureURLError(
                f"{url} would send the bot's token in clear text to {uri.host}: use wss://, "
                "or pass --insecure if the network between is trusted"
            )
        return None
    try:
        return ssl.create_default_context(cafile=ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise ClientError(f"cannot load --ca-file {ca_file}: {exc}") from exc


def verify_failure(
    url: str, exc: ssl.SSLCertVerificationError, ca_file: str | None
) -> TLSVerifyError:
    """The one-line error for a certificate that failed verification."""
    reason = exc.verify_message or exc.reason or str(exc)
    where = f"--ca-file {ca_file}" if ca_file else "the system's certificate authorities"
    return TLSVerifyError(
        f"TLS certificate of {url} not trusted: {reason} (checked against {where})"
    )
