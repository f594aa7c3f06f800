"""Field specs: one declaration per field drives parsing, serializing and the JSON Schema.

A message field is declared as ``name: Annotated[python_type, SomeSpec(...)]``.
The spec parses a decoded JSON value (raising ``ProtocolError`` with a code and
the field's path), dumps the Python value back to JSON, and describes itself as
JSON Schema, so the parser and ``protocol/schema.json`` cannot disagree.
Cross-field constraints are ``Rule`` objects on the class, with the same three
duties. The wire classes themselves (``Wire``, ``Message``) are in ``spec``.
"""

import dataclasses
import functools
import math
import re
import typing
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from protocol.errors import ProtocolError
from protocol.messages.codes import ErrorCode

JsonDict = dict[str, Any]

_SURROGATE = re.compile("[\ud800-\udfff]")


def show(value: object, limit: int = 40) -> str:
    """A short printable rendering of a value for error messages (inputs may be huge)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_kind(value: object) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def _fail(code: ErrorCode, path: str, detail: str) -> ProtocolError:
    return ProtocolError(code, f"{path or 'message'}: {detail}")


def _bad_type(path: str, expected: str, value: object) -> ProtocolError:
    return _fail(ErrorCode.BAD_TYPE, path, f"expected {expected}, got {json_kind(value)}")


class Spec(ABC):
    """How one field travels: parse from decoded JSON, dump to JSON, describe as schema."""

    __slots__ = ()

    @abstractmethod
    def parse(self, value: object, path: str) -> Any:
        """Validate a decoded JSON value and return the Python value; raises ``ProtocolError``."""

    def dump(self, value: Any) -> Any:
        """The JSON value for a Python value (identity for scalars)."""
        return value

    @abstractmethod
    def schema(self) -> JsonDict:
        """The JSON Schema (draft 2020-12) fragment accepting exactly what ``parse`` accepts."""


@dataclasses.dataclass(frozen=True, slots=True)
class Int(Spec):
    """A JSON integer (never a boolean, never ``1.0``) in ``lo..hi`` inclusive."""

    lo: int
    hi: int

    def parse(self, value: object, path: str) -> int:
        """Check type and range."""
        if type(value) is not int:
            raise _bad_type(path, "integer", value)
        if not self.lo <= value <= self.hi:
            raise _fail(ErrorCode.BAD_VALUE, path, f"{show(value)} is outside {self.lo}..{self.hi}")
        return value

    def schema(self) -> JsonDict:
        """An integer with bounds."""
        return {"type": "integer", "minimum": self.lo, "maximum": self.hi}


@dataclasses.dataclass(frozen=True, slots=True)
class Float(Spec):
    """A finite JSON number (an integer is accepted and becomes a float), optionally >= lo."""

    lo: float | None = None

    def parse(self, value: object, path: str) -> float:
        """Check type, finiteness and the lower bound."""
        if type(value) is int:
            try:
                value = float(value)
            except OverflowError:
                raise _fail(ErrorCode.BAD_VALUE, path, "number is too large") from None
        if type(value) is not float:
            raise _bad_type(path, "number", value)
        if not math.isfinite(value):
            raise _fail(ErrorCode.BAD_VALUE, path, "number must be finite")
        if self.lo is not None and value < self.lo:
            raise _fail(ErrorCode.BAD_VALUE, path, f"{value!r} is below {self.lo!r}")
        return value

    def schema(self) -> JsonDict:
        """A number, with the lower bound if any."""
        out: JsonDict = {"type": "number"}
        if self.lo is not None:
            out["minimum"] = self.lo
        return out


@dataclasses.dataclass(frozen=True, slots=True)
class Bool(Spec):
    """A JSON boolean."""

    def parse(self, value: object, path: str) -> bool:
        """Check type."""
        if type(value) is not bool:
            raise _bad_type(path, "boolean", value)
        return value

    def schema(self) -> JsonDict:
        """A boolean."""
        return {"type": "boolean"}


@dataclasses.dataclass(frozen=True, slots=True)
class Str(Spec):
    """A string of ``min_len..max_len`` code points, fully matching ``pattern`` if given.

    Lone surrogates (reachable through ``\\ud800`` escapes) are refused: they
    cannot be re-encoded as UTF-8 when the value is sent on.
    """

    max_len: int
    pattern: str | None = None
    min_len: int = 0
    meaning: str | None = None
    """What the value is, in words (``"a bot name (...)"``): errors say it is not one."""

    def parse(self, value: object, path: str) -> str:
        """Check type, length, encodability and pattern."""
        if type(value) is not str:
            raise _bad_type(path, "string", value)
        if self.meaning is not None and not (
            self.min_len <= len(value) <= self.max_len
            and (self.pattern is None or _compiled(self.pattern).fullmatch(value))
        ):
            raise _fail(ErrorCode.BAD_VALUE, path, f"{show(value)} is not {self.meaning}")
        if not self.min_len <= len(value) <= self.max_len:
            raise _fail(
                ErrorCode.BAD_VALUE,
                path,
                f"length {len(value)} is outside {self.min_len}..{self.max_len}",
            )
        if _SURROGATE.search(value):
            raise _fail(ErrorCode.BAD_VALUE, path, "string contains a lone surrogate")
        if self.pattern is not None and not _compiled(self.pattern).fullmatch(value):
            raise _fail(ErrorCode.BAD_VALUE, path, f"{show(value)} does not match {self.pattern}")
        return value

    def schema(self) -> JsonDict:
        """A string with length bounds and an anchored pattern."""
        out: JsonDict = {"type": "string", "minLength": self.min_len, "maxLength": self.max_len}
        if self.pattern is not None:
            out["pattern"] = f"^{self.pattern}$"
        return out


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@dataclasses.dataclass(frozen=True, slots=True)
class Choice(Spec):
    """A string from a fixed set."""

    values: tuple[str, ...]

    def parse(self, value: object, path: str) -> str:
        """Check type and membership."""
        if type(value) is not str:
            raise _bad_type(path, "string", value)
        if value not in self.values:
            raise _fail(
                ErrorCode.BAD_VALUE, path, f"{show(value)} is not one of {', '.join(self.values)}"
            )
        return value

    def schema(self) -> JsonDict:
        """A string enum."""
        return {"type": "string", "enum": list(self.values)}


@dataclasses.dataclass(frozen=True, slots=True)
class Array(Spec):
    """A JSON array of ``min_items..max_items`` items, parsed into a tuple."""

    item: Spec
    min_items: int = 0
    max_items: int = 0

    def parse(self, value: object, path: str) -> tuple[Any, ...]:
        """Check type and length, then every item."""
        if type(value) is not list:
            raise _bad_type(path, "array", value)
        if not self.min_items <= len(value) <= self.max_items:
            raise _fail(
                ErrorCode.BAD_VALUE,
                path,
                f"{len(value)} items, expected {self.min_items}..{self.max_items}",
            )
        return tuple(self.item.parse(v, f"{path}[{i}]") for i, v in enumerate(value))

    def dump(self, value: Any) -> Any:
        """A list of dumped items."""
        return [self.item.dump(v) for v in value]

    def schema(self) -> JsonDict:
        """An array with item schema and length bounds."""
        return {
            "type": "array",
            "items": self.item.schema(),
            "minItems": self.min_items,
            "maxItems": self.max_items,
        }


def Pair(item: Spec) -> Array:
    """Exactly two items: one per player."""
    return Array(item, 2, 2)


@dataclasses.dataclass(frozen=True, slots=True)
class Obj(Spec):
    """A nested JSON object parsed into a ``Wire`` dataclass (``cls``)."""

    cls: Any
    """The ``Wire`` class (typed loosely: ``spec`` builds on this module, not the reverse)."""

    def parse(self, value: object, path: str) -> Any:
        """Parse the object with the class's own field specs."""
        return self.cls.from_dict(value, path)

    def dump(self, value: Any) -> Any:
        """The nested object's dict."""
        return value.to_dict()

    def schema(self) -> JsonDict:
        """A reference to the class's definition."""
        return {"$ref": f"#/$defs/{self.cls.__name__}"}


@dataclasses.dataclass(frozen=True, slots=True)
class Nullable(Spec):
    """``null`` or what ``inner`` accepts."""

    inner: Spec

    def parse(self, value: object, path: str) -> Any:
        """None passes; anything else goes to ``inner``."""
        return None if value is None else self.inner.parse(value, path)

    def dump(self, value: Any) -> Any:
        """None stays null."""
        return None if value is None else self.inner.dump(value)

    def schema(self) -> JsonDict:
        """Either the inner schema or null."""
        return {"anyOf": [self.inner.schema(), {"type": "null"}]}


# Cross-field rules -----------------------------------------------------------


class Cond(ABC):
    """A condition on one field's parsed value (absent fields hold their default)."""

    __slots__ = ()

    @abstractmethod
    def holds(self, value: object) -> bool:
        """Whether the Python value satisfies the condition."""

    @abstractmethod
    def schema(self) -> JsonDict:
        """The JSON Schema for a present value satisfying the condition."""

    @abstractmethod
    def absent_ok(self, default: object) -> bool:
        """Whether an absent field (holding ``default``) satisfies the condition."""


@dataclasses.dataclass(frozen=True, slots=True)
class OneOf(Cond):
    """The value is one of the given constants."""

    values: tuple[object, ...]

    def holds(self, value: object) -> bool:
        """Membership with bool and int kept apart."""
        return any(type(value) is type(v) and value == v for v in self.values)

    def schema(self) -> JsonDict:
        """``const`` or ``enum``."""
        if len(self.values) == 1:
            return {"const": self.values[0]}
        return {"enum": list(self.values)}

    def absent_ok(self, default: object) -> bool:
        """An absent field passes when its default is allowed."""
        return default is not dataclasses.MISSING and self.holds(default)


@dataclasses.dataclass(frozen=True, slots=True)
class NotNull(Cond):
    """The field is present and not null."""

    def holds(self, value: object) -> bool:
        """Not None."""
        return value is not None

    def schema(self) -> JsonDict:
        """Anything but null."""
        return {"not": {"type": "null"}}

    def absent_ok(self, default: object) -> bool:
        """Absence means null here."""
        return False


@dataclasses.dataclass(frozen=True, slots=True)
class IsNull(Cond):
    """The field is absent or null."""

    def holds(self, value: object) -> bool:
        """None."""
        return value is None

    def schema(self) -> JsonDict:
        """Null."""
        return {"type": "null"}

    def absent_ok(self, default: object) -> bool:
        """Only nullable fields with a None default are used with IsNull."""
        return default is None


@dataclasses.dataclass(frozen=True, slots=True)
class Rule:
    """If every ``when`` condition holds, every ``then`` condition must hold."""

    when: Mapping[str, Cond]
    then: Mapping[str, Cond]
    why: str

    def check(self, obj: object) -> None:
        """Raise ``missing_field`` / ``bad_value`` when ``obj`` breaks the rule."""
        if not all(cond.holds(getattr(obj, name)) for name, cond in self.when.items()):
            return
        for name, cond in self.then.items():
            value = getattr(obj, name)
            if not cond.holds(value):
                code = ErrorCode.MISSING_FIELD if isinstance(cond, NotNull) else ErrorCode.BAD_VALUE
                raise _fail(code, name, self.why)

    def schema(self, cls: type) -> JsonDict:
        """An ``if``/``then`` pair."""
        return {"if": _conds_schema(cls, self.when), "then": _conds_schema(cls, self.then)}


def _conds_schema(cls: type, conds: Mapping[str, Cond]) -> JsonDict:
    defaults = {f.name: f.default for f in field_table(cls)}
    required = [name for name, cond in conds.items() if not cond.absent_ok(defaults[name])]
    out: JsonDict = {"properties": {name: cond.schema() for name, cond in conds.items()}}
    if required:
        out["required"] = required
    return out


# Classes made of specs ---------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class FieldInfo:
    """One wire field of a ``Wire`` class: its name, spec and default (MISSING if required)."""

    name: str
    spec: Spec
    default: object

    @property
    def required(self) -> bool:
        """Whether the field must be present on the wire."""
        return self.default is dataclasses.MISSING


_TABLES: dict[type, tuple[FieldInfo, ...]] = {}

NOT_WIRE: Mapping[str, object] = {"wire": False}
"""``dataclasses.field`` metadata of a field that is no wire field: not parsed, written,
compared or in the schema (e.g. ``Analysis.text``, the JSON text it was parsed from)."""


def field_table(cls: type) -> tuple[FieldInfo, ...]:
    """The wire fields of a dataclass whose fields are ``Annotated[..., Spec]`` (cached)."""
    cached = _TABLES.get(cls)
    if cached is not None:
        return cached
    hints = typing.get_type_hints(cls, include_extras=True)
    table = []
    for f in dataclasses.fields(cls):
        if f.metadata.get("wire") is False:
            continue  # kept by the object, never on the wire (``NOT_WIRE``)
        specs = [m for m in getattr(hints[f.name], "__metadata__", ()) if isinstance(m, Spec)]
        if len(specs) != 1:
            raise TypeError(f"{cls.__name__}.{f.name} needs exactly one Spec in Annotated[...]")
        table.append(FieldInfo(f.name, specs[0], f.default))
    _TABLES[cls] = tuple(table)
    return _TABLES[cls]
