"""Compiled JSON writers: one function per wire class, built from its field specs.

``Message.to_json`` is on the server's hot path (a ``moved`` and a
``your_turn`` per move). Going through ``to_dict`` and ``json.dumps``
builds a dict, walks it generically and constructs a new encoder on every
call; a writer generated once per class from the field table, the way
``dataclasses`` generates ``__init__``, writes the text directly and costs
about a third as much. Its output is byte for byte what
``json.dumps(obj.to_dict(), separators=(",", ":"), ensure_ascii=False,
allow_nan=False)`` gives for every valid value (a test checks every message
class against that).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

from protocol.messages.spec import (
    Array,
    Bool,
    Choice,
    Float,
    Int,
    Message,
    Nullable,
    Obj,
    Spec,
    Str,
    Wire,
    field_table,
)

Writer = Callable[[Any], str]
"""Turns one wire object into its compact JSON text."""

_int_text = int.__repr__


def _float_text(value: float) -> str:
    if type(value) is not float:  # an int in a float field, as json.dumps writes it
        return _int_text(value)
    if not math.isfinite(value):
        raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
    return float.__repr__(value)


def _bool_text(value: bool) -> str:
    return "true" if value else "false"


class _Writers(dict[type, Writer]):
    """Writers by class, compiled on first use."""

    def __missing__(self, cls: type) -> Writer:
        writer = _compile(cls)
        self[cls] = writer
        return writer


WRITERS = _Writers()
"""``WRITERS[cls](obj)`` is ``obj``'s JSON text; compiled the first time a class is written."""


def _value_writer(spec: Spec) -> Writer:
    """A function writing one value of ``spec`` (used for array items and nested values)."""
    if isinstance(spec, Int):
        return _int_text
    if isinstance(spec, Float):
        return _float_text
    if isinstance(spec, Bool):
        return _bool_text
    if isinstance(spec, Str | Choice):
        return encode_basestring
    if isinstance(spec, Obj):
        return WRITERS[spec.cls]  # compiled now: wire values never contain themselves
    if isinstance(spec, Nullable):
        inner = _value_writer(spec.inner)
        return lambda value: "null" if value is None else inner(value)
    if isinstance(spec, Array):
        item = _value_writer(spec.item)
        return lambda value: "[" + ",".join(map(item, value)) + "]"
    raise TypeError(f"no JSON writer for {type(spec).__name__}")


def _compile(cls: type) -> Writer:
    if not (isinstance(cls, type) and issubclass(cls, Wire)):
        raise TypeError(f"{cls!r} is not a wire class")
    names: dict[str, Any] = {"_int": _int_text, "_str": encode_basestring}
    # Per member: its key text, the attribute holding the value (None for the constant
    # ``type``), the function writing the value, and whether None leaves it out.
    members: list[tuple[str, str | None, str, bool]] = []
    if issubclass(cls, Message):
        members.append(('"type":' + encode_basestring(cls.type), None, "", False))
    for index, field in enumerate(field_table(cls)):
        if isinstance(field.spec, Int):
            write = "_int"
        elif isinstance(field.spec, Str | Choice):
            write = "_str"
        else:
            write = f"_w{index}"
            names[write] = _value_writer(field.spec)
        key = encode_basestring(field.name) + ":"
        members.append((key, field.name, write, field.default is None))
    if any(optional for *_, optional in members):
        lines = ["def write(obj):", "    parts = []"]
        for key, name, write, optional in members:
            if name is None:
                lines.append(f"    parts.append({key!r})")
            elif optional:
                lines += [
                    f"    value = obj.{name}",
                    f"    if value is not None: parts.append({key!r} + {write}(value))",
                ]
            else:
                lines.append(f"    parts.append({key!r} + {write}(obj.{name}))")
        lines.append("    return '{' + ','.join(parts) + '}'")
    else:
        # Every member is always written: one concatenation, constant text merged.
        pieces: list[str] = []
        literal = "{"
        for number, (key, name, write, _) in enumerate(members):
            literal += ("," if number else "") + key
            if name is not None:
                pieces += [repr(literal), f"{write}(obj.{name})"]
                literal = ""
        pieces.append(repr(literal + "}"))
        lines = ["def write(obj):", "    return " + " + ".join(pieces)]
    namespace: dict[str, Any] = {}
    exec("\n".join(lines), names, namespace)  # the source is built above from the field table
    writer: Writer = namespace["write"]
    writer.__qualname__ = f"{cls.__name__}.to_json"
    return writer
