"""The server's log: a level, and a format for people (``text``) or for machines (``json``).

``configure(level, fmt)`` sets up the root logger once, for ``arena serve``.
In ``text`` a record is one line, ``time LEVEL logger: message``. In
``json`` (JSON Lines) it is one object per line with ``time`` (UTC, ISO
8601), ``level``, ``logger`` and ``message``, plus the record's structured
fields: whatever the code passed as ``extra`` (``match_id``, ``players``,
``remote``, ...), so a log pipeline need not parse the message. A
traceback, when there is one, goes under ``exception``.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

LEVELS = ("debug", "info", "warning", "error")
FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# Every attribute a plain LogRecord has: anything else on a record came from ``extra``.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
}


def fields(record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields a record was given through ``extra``."""
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


class JsonFormatter(logging.Formatter):
    """One JSON object per record; see the module docstring."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON."""
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in fields(record).items():
            out.setdefault(key, value)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


def configure(level: str = "info", fmt: str = "text", stream: TextIO | None = None) -> None:
    """Send every log record at ``level`` or above to ``stream`` (stderr) in format ``fmt``.

    Replaces the root logger's handlers. Alembic's and websockets' own chatter is
    kept at warnings unless ``level`` is ``debug``. Raises ``ValueError`` for an unknown
    level or format.
    """
    if level not in LEVELS:
        raise ValueError(f"log level must be one of {', '.join(LEVELS)}, not {level!r}")
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # Migrations run at every start, and websockets repeats our connection lines in its
    # own words: both speak only when asked.
    for chatty in ("alembic", "websockets"):
        logging.getLogger(chatty).setLevel(logging.DEBUG if level == "debug" else logging.WARNING)
