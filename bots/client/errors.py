"""The bot client's errors.

::

    ClientError                 root of the client errors (e.g. a malformed URL)
    ├── RefusedError            the server refused this bot for good: auth_failed,
    │                           unsupported_version, replaced, or a seek it can
    │                           never accept (no_such_game, bad_value); carries
    │                           ``code``. Retrying cannot help, so ``run`` raises.
    ├── InsecureURLError        a plain ws:// URL to a host that is not this
    │                           machine, without ``insecure``: the token would
    │                           cross the network in clear text
    └── TLSVerifyError          the server's TLS certificate failed verification
                                (unknown CA, wrong host name, expired)
"""

from __future__ import annotations


class ClientError(Exception):
    """Root of the bot client's errors."""


class RefusedError(ClientError):
    """The server refused this bot in a way retrying cannot fix; ``code`` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class InsecureURLError(ClientError):
    """A ``ws://`` URL to a remote host was given without allowing clear text."""


class TLSVerifyError(ClientError):
    """The server's certificate could not be verified; retrying cannot fix it."""
