"""The wire classes: ``Wire`` (any object on the wire) and ``Message`` (a top-level message).

Their fields are declared with the specs of ``fields``; ``parse_object`` builds
a class from decoded JSON with them, ``Message.to_json`` writes one with the
function ``jsontext`` compiled for its class, and ``fast_init`` gives the hot
classes a cheaper ``__init__``.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Callable
from typing import Any, ClassVar, Self

from protocol.errors import ProtocolError
from protocol.messages.codes import ErrorCode
from protocol.messages.fields import JsonDict, Rule, _bad_type, _fail, field_table, show
from protocol.messages.jsontext import WRITERS


class Wire:
    """Base of every wire dataclass: nested values and messages."""

    __slots__ = ()
    rules: ClassVar[tuple[Rule, ...]] = ()
    """Cross-field constraints checked after the fields parse."""

    def to_dict(self) -> JsonDict:
        """The JSON object; optional fields that are None are left out."""
        out: JsonDict = {}
        for f in field_table(type(self)):
            value = getattr(self, f.name)
            if value is None and f.default is None:
                continue
            out[f.name] = f.spec.dump(value)
        return out

    @classmethod
    def from_dict(cls, data: object, path: str = "") -> Self:
        """Parse a decoded JSON object (at ``path`` inside a message); raises ``ProtocolError``."""
        return parse_object(cls, data, path)


class Message(Wire):
    """Base of every top-level message; ``type`` names it on the wire."""

    __slots__ = ()
    type: ClassVar[str]
    """The value of the ``type`` field."""

    def to_dict(self) -> JsonDict:
        """The JSON object, ``type`` first."""
        return {"type": self.type, **Wire.to_dict(self)}

    def to_json(self) -> str:
        """Compact JSON text, ready to send as one websocket text frame.

        Written by a function compiled for the class (``jsontext``), equal to
        ``to_json(self.to_dict())``.
        """
        return WRITERS[type(self)](self)


def to_json(data: object) -> str:
    """Compact UTF-8-ready JSON; NaN is a bug and raises ``ValueError``."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


W = typing.TypeVar("W", bound=Wire)


_FAST_INIT = "__fast_init__"
"""Marks an ``__init__`` written by ``fast_init``."""


def fast_init(cls: type[W]) -> type[W]:
    """Give a frozen, slotted dataclass an ``__init__`` that sets its slots directly.

    Apply above ``@dataclass(frozen=True, slots=True)``. The ``__init__`` that
    ``dataclasses`` writes for a frozen class sets each field through
    ``object.__setattr__``, a generic attribute lookup per field; the server
    builds a ``move``, a ``moved`` and a ``your_turn`` per move (a ``moved``:
    2.8 us that way, 1.7 us this way). This ``__init__`` takes the same
    parameters, in the same order, with the same defaults, and sets each field
    with its slot's own setter (the object stays as frozen as before).
    """
    params = dataclasses.fields(cls)  # type: ignore[arg-type]
    if "__slots__" not in cls.__dict__ or not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        raise TypeError(f"{cls.__name__} must be a frozen dataclass with slots")
    names: dict[str, Any] = {}
    signature, body = [], []
    for index, f in enumerate(params):
        if f.init is False or f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: fast_init needs plain fields")
        names[f"_set{index}"] = cls.__dict__[f.name].__set__
        if f.default is dataclasses.MISSING:
            signature.append(f.name)
        else:
            names[f"_default{index}"] = f.default
            signature.append(f"{f.name}=_default{index}")
        body.append(f"    _set{index}(self, {f.name})")
    source = f"def __init__(self, {', '.join(signature)}):\n" + "\n".join(body or ["    pass"])
    exec(source, names)  # the source holds only the class's own field names
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    setattr(init, _FAST_INIT, True)
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


def has_fast_init(cls: type) -> bool:
    """Whether ``cls.__init__`` was written by ``fast_init``."""
    return getattr(cls.__dict__.get("__init__"), _FAST_INIT, False) is True


@dataclasses.dataclass(frozen=True, slots=True)
class _Parser:
    """What ``parse_object`` needs of a class, worked out once."""

    allowed: frozenset[str]
    fields: tuple[tuple[str, Callable[[object, str], Any], bool], ...]
    """(name, the spec's bound ``parse``, required) per field."""
    message_type: str | None
    rules: tuple[Rule, ...]


_PARSERS: dict[type, _Parser] = {}


def _parser(cls: type[Wire]) -> _Parser:
    cached = _PARSERS.get(cls)
    if cached is not None:
        return cached
    table = field_table(cls)
    message_type = cls.type if issubclass(cls, Message) else None
    allowed = {f.name for f in table} | ({"type"} if message_type is not None else set())
    _PARSERS[cls] = _Parser(
        frozenset(allowed),
        tuple((f.name, f.spec.parse, f.required) for f in table),
        message_type,
        cls.rules,
    )
    return _PARSERS[cls]


def parse_object(cls: type[W], data: object, path: str) -> W:
    """Build ``cls`` from a decoded JSON object, validating everything; raises ``ProtocolError``."""
    if type(data) is not dict:
        raise _bad_type(path, "object", data)
    plan = _parser(cls)
    prefix = f"{path}." if path else ""
    for key in data:
        if key not in plan.allowed:
            raise _fail(ErrorCode.UNKNOWN_FIELD, prefix + show(key, 60), "unknown field")
    expected = plan.message_type
    if expected is not None:
        if "type" not in data:
            raise _fail(ErrorCode.MISSING_FIELD, prefix + "type", "required field is missing")
        if type(data["type"]) is not str:
            raise _bad_type(prefix + "type", "string", data["type"])
        if data["type"] != expected:
            raise _fail(ErrorCode.BAD_VALUE, prefix + "type", f"expected {expected!r}")
    kwargs: dict[str, Any] = {}
    for name, parse, required in plan.fields:
        if name in data:
            kwargs[name] = parse(data[name], prefix + name)
        elif required:
            raise _fail(ErrorCode.MISSING_FIELD, prefix + name, "required field is missing")
    obj = cls(**kwargs)
    for rule in plan.rules:
        try:
            rule.check(obj)
        except ProtocolError as exc:
            raise ProtocolError(exc.code, prefix + exc.message) from None
    return obj
