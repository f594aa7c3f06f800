"""Whole numbers from text, parsed strictly: the one parser of every number a client or a
command line gives.

``int()`` and ``str.isdigit()`` accept far more than a number a person types:
``int("²")`` fails after ``"²".isdigit()`` said yes, ``int("٣")`` (Arabic-Indic)
and ``int("３")`` (fullwidth) succeed, ``int(" 3_0 ")`` is 30, and a
5,000-digit string costs a quadratic conversion or raises. ``parse_int``
accepts only ASCII digits (and a leading ``-`` where negatives are allowed),
at most ``MAX_DIGITS`` of them, within ``[low, high]``, and says what was
wrong in one short line (``NumberError``, a ``ValueError``).
"""

from __future__ import annotations

MAX_DIGITS = 18
"""Digits accepted at most: every limit in the arena fits, and the text stays short."""

_DIGITS = frozenset("0123456789")


class NumberError(ValueError):
    """Text that is not a whole number in range; the message is one line for the user."""


def parse_int(text: str, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """``text`` as an ``int`` in ``[low, high]``; ``NumberError`` naming ``name`` otherwise."""
    digits = text[1:] if text.startswith("-") and (low is None or low < 0) else text
    if not digits or len(digits) > MAX_DIGITS or not _DIGITS.issuperset(digits):
        raise NumberError(f"{name} must be {_range(low, high)}")
    value = int(text)
    if (low is not None and value < low) or (high is not None and value > high):
        raise NumberError(f"{name} must be {_range(low, high)}, not {value}")
    return value


def _range(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"a whole number from {low} to {high}"
    if low is not None:
        return f"a whole number of at least {low}"
    if high is not None:
        return f"a whole number of at most {high}"
    return "a whole number"
