"""Frame text to message: size and UTF-8 checks, strict JSON decoding, dispatch on ``type``.

Every failure is a ``ProtocolError``; nothing raised inside the standard
library (``RecursionError``, ``ValueError`` from a 5000-digit integer,
``UnicodeDecodeError``) escapes.
"""

import json
import re
from collections.abc import Mapping
from typing import Any, NoReturn, TypeVar

from protocol.errors import MalformedMoveError, ProtocolError
from protocol.messages.codes import MAX_MOVE, MAX_NESTING_DEPTH, ErrorCode
from protocol.messages.fields import show
from protocol.messages.spec import Message, parse_object
from protocol.messages.values import REQUEST_ID

# Strings are skipped so brackets inside them do not count towards nesting. The
# closing quote is optional so an unterminated string is one linear match, not a
# retry from every later quote.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")

M = TypeVar("M", bound=Message)


def _reject_constant(name: str) -> NoReturn:
    raise ProtocolError(ErrorCode.BAD_JSON, f"{name} is not valid JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A repeated key means different parsers may see different messages.
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ProtocolError(ErrorCode.BAD_JSON, f"key {show(key)} is repeated")
            seen.add(key)
    return out


def _check_depth(text: str) -> None:
    """Refuse deep nesting before ``json`` recurses into it (it would raise RecursionError)."""
    if text.count("[") + text.count("{") <= MAX_NESTING_DEPTH:
        return
    depth = 0
    for char in _NOT_BRACKET.sub("", _STRING.sub("", text)):
        depth += 1 if char in "[{" else -1
        if depth > MAX_NESTING_DEPTH:
            raise ProtocolError(
                ErrorCode.BAD_JSON, f"JSON nests deeper than {MAX_NESTING_DEPTH} levels"
            )


_BINARY = (bytes, bytearray, memoryview)
"""Frame types decoded as UTF-8 (a tuple: ``bytes | ...`` would build a union per call)."""

# One decoder for every frame: ``json.loads`` with hooks would build a new one per call.
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_reject_constant)


def decode_frame(frame: object, max_bytes: int) -> object:
    """Decode one frame (str or UTF-8 bytes) of at most ``max_bytes`` bytes into a JSON value."""
    if isinstance(frame, _BINARY):
        raw = bytes(frame)
        if len(raw) > max_bytes:
            raise ProtocolError(ErrorCode.TOO_LARGE, f"message exceeds {max_bytes} bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError(ErrorCode.BAD_JSON, "message is not valid UTF-8") from None
    elif isinstance(frame, str):
        if len(frame) > max_bytes:  # every character is at least one byte
            raise ProtocolError(ErrorCode.TOO_LARGE, f"message exceeds {max_bytes} bytes")
        if frame.isascii():  # the usual case, and one byte per character
            size = len(frame)
        else:
            try:
                size = len(frame.encode("utf-8"))
            except UnicodeEncodeError:
                raise ProtocolError(ErrorCode.BAD_JSON, "message is not valid UTF-8") from None
        if size > max_bytes:
            raise ProtocolError(ErrorCode.TOO_LARGE, f"message exceeds {max_bytes} bytes")
        text = frame
    else:
        raise ProtocolError(ErrorCode.BAD_JSON, f"expected text, got {type(frame).__name__}")
    _check_depth(text)
    try:
        return _DECODER.decode(text)
    except RecursionError:  # unreachable after _check_depth; kept as a guarantee
        raise ProtocolError(ErrorCode.BAD_JSON, "JSON nests too deeply") from None
    except ValueError as exc:  # JSONDecodeError, and integers over the digit limit
        raise ProtocolError(ErrorCode.BAD_JSON, f"invalid JSON: {show(str(exc), 80)}") from None


def _request_id(data: dict[str, Any]) -> str | None:
    """The message's ``id`` if it is a valid one, to quote as ``ref`` in errors."""
    value = data.get("id")
    try:
        return REQUEST_ID.parse(value, "id") if value is not None else None
    except ProtocolError:
        return None


def parse_frame(frame: object, max_bytes: int, registry: Mapping[str, type[M]]) -> M:
    """Decode a frame and build the message its ``type`` names in ``registry``."""
    data = decode_frame(frame, max_bytes)
    if type(data) is not dict:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "a message must be a JSON object")
    ref = _request_id(data)
    kind = data.get("type")
    if type(kind) is not str:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, "a message needs a string 'type'", ref)
    cls = registry.get(kind)
    if cls is None:
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown message type {show(kind)}", ref)
    try:
        return parse_object(cls, data, "")
    except ProtocolError as exc:
        exc.ref = ref
        if kind == "move":
            _raise_if_malformed_move(data, exc)
        raise


def _raise_if_malformed_move(data: dict[str, Any], exc: ProtocolError) -> None:
    """Raise ``MalformedMoveError`` when only ``move`` is wrong in a move that names its turn."""
    match_id, ply, move = data.get("match_id"), data.get("ply"), data.get("move")
    if type(move) is int and 0 <= move <= MAX_MOVE:
        return  # the move itself is fine; something else is malformed
    if type(match_id) is not str or type(ply) is not int:
        return
    raise MalformedMoveError(exc.code, exc.message, exc.ref, match_id, ply, move) from None
