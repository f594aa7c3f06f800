"""Test helpers for the wire protocol: hypothesis strategies and a tiny JSON Schema validator.

The strategies are derived from the same field specs as the parser, so they
cover every message type; the validator implements just the JSON Schema
keywords ``protocol/schema.json`` uses, so schema and parser can be compared.
"""

import re
from dataclasses import replace
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

from protocol.messages import CLIENT_MESSAGE_TYPES, SERVER_MESSAGE_TYPES
from protocol.messages.fields import (
    Array,
    Bool,
    Choice,
    Float,
    Int,
    IsNull,
    NotNull,
    Nullable,
    Obj,
    OneOf,
    Spec,
    Str,
    field_table,
)
from protocol.messages.search import TreeNode, TreeSpec
from protocol.messages.spec import Message, Wire

MESSAGE_CLASSES: list[type[Message]] = [
    *CLIENT_MESSAGE_TYPES.values(),
    *SERVER_MESSAGE_TYPES.values(),
]

WIRE_SETTINGS = settings(derandomize=True, deadline=None, database=None)
"""Parent settings of every property test here: reproducible, no timing flakiness."""


def spec_values(spec: Spec) -> st.SearchStrategy[Any]:
    """Valid Python values for a field spec."""
    if isinstance(spec, Int):
        return st.integers(spec.lo, spec.hi)
    if isinstance(spec, Float):
        return st.floats(
            min_value=spec.lo, allow_nan=False, allow_infinity=False, allow_subnormal=False
        )
    if isinstance(spec, Bool):
        return st.booleans()
    if isinstance(spec, Choice):
        return st.sampled_from(spec.values)
    if isinstance(spec, Str):
        if spec.pattern is not None:
            return st.from_regex(spec.pattern, fullmatch=True)
        return st.text(min_size=spec.min_len, max_size=spec.max_len)
    if isinstance(spec, TreeSpec):
        # Each parent an earlier node, as the spec requires.
        return st.lists(wire_values(TreeNode), max_size=4).map(
            lambda nodes: tuple(
                replace(n, parent=None if n.parent is None or not i else n.parent % i)
                for i, n in enumerate(nodes)
            )
        )
    if isinstance(spec, Array):
        return st.lists(
            spec_values(spec.item), min_size=spec.min_items, max_size=min(spec.max_items, 4)
        ).map(tuple)
    if isinstance(spec, Obj):
        return wire_values(spec.cls)
    if isinstance(spec, Nullable):
        return st.none() | spec_values(spec.inner)
    raise TypeError(f"no strategy for {spec!r}")


@st.composite
def _wire(draw: st.DrawFn, cls: type[Wire]) -> Wire:
    kwargs: dict[str, Any] = {}
    for f in field_table(cls):
        if f.required or draw(st.booleans()):
            kwargs[f.name] = draw(spec_values(f.spec))
        else:
            kwargs[f.name] = f.default
    # Repair cross-field rules; no rule's "then" field is another rule's "when" field.
    for rule in cls.rules:
        if not all(c.holds(kwargs[name]) for name, c in rule.when.items()):
            continue
        for name, cond in rule.then.items():
            if cond.holds(kwargs[name]):
                continue
            spec = next(f.spec for f in field_table(cls) if f.name == name)
            if isinstance(cond, NotNull):
                assert isinstance(spec, Nullable)
                kwargs[name] = draw(spec_values(spec.inner))
            elif isinstance(cond, IsNull):
                kwargs[name] = None
            elif isinstance(cond, OneOf):
                kwargs[name] = draw(st.sampled_from(cond.values))
    return cls(**kwargs)


def wire_values(cls: type[Wire]) -> st.SearchStrategy[Any]:
    """Valid instances of a message or value class."""
    return _wire(cls)


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
"""Arbitrary (finite) JSON values."""


# A tiny JSON Schema validator ----------------------------------------------


def _is_type(value: Any, name: str) -> bool:
    # Stricter than JSON Schema on "integer": 1.0 is not one here, as in the parser.
    checks = {
        "null": value is None,
        "boolean": type(value) is bool,
        "integer": type(value) is int,
        "number": type(value) in (int, float),
        "string": type(value) is str,
        "array": type(value) is list,
        "object": type(value) is dict,
    }
    return checks[name]


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def validate(value: Any, schema: dict[str, Any], root: dict[str, Any]) -> bool:
    """Whether ``value`` satisfies ``schema`` (the subset of 2020-12 our schema uses)."""
    known = {
        "$ref", "anyOf", "oneOf", "allOf", "if", "then", "not", "type", "const", "enum",
        "minimum", "maximum", "minLength", "maxLength", "pattern", "items", "minItems",
        "maxItems", "properties", "required", "additionalProperties", "description",
        "default", "$schema", "title", "$defs",
    }  # fmt: skip
    unknown = set(schema) - known
    assert not unknown, f"validator does not implement {unknown}"
    checks: list[bool] = []
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        checks.append(validate(value, root["$defs"][name], root))
    if "anyOf" in schema:
        checks.append(any(validate(value, s, root) for s in schema["anyOf"]))
    if "oneOf" in schema:
        checks.append(sum(validate(value, s, root) for s in schema["oneOf"]) == 1)
    if "allOf" in schema:
        checks.append(all(validate(value, s, root) for s in schema["allOf"]))
    if "if" in schema and validate(value, schema["if"], root):
        checks.append(validate(value, schema.get("then", {}), root))
    if "not" in schema:
        checks.append(not validate(value, schema["not"], root))
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        checks.append(any(_is_type(value, t) for t in types))
    if "const" in schema:
        checks.append(_same(value, schema["const"]))
    if "enum" in schema:
        checks.append(any(_same(value, v) for v in schema["enum"]))
    if type(value) in (int, float):
        checks.append(value >= schema.get("minimum", value))
        checks.append(value <= schema.get("maximum", value))
    if type(value) is str:
        checks.append(schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", 1e18))
        if "pattern" in schema:
            # ECMA "$" is end of input; Python's also matches before a final newline.
            checks.append(re.search(schema["pattern"].replace("$", r"\Z"), value) is not None)
    if type(value) is list:
        checks.append(schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", 1e18))
        if "items" in schema:
            checks.append(all(validate(v, schema["items"], root) for v in value))
    if type(value) is dict:
        props = schema.get("properties", {})
        checks.append(all(k in value for k in schema.get("required", ())))
        checks.append(all(validate(value[k], s, root) for k, s in props.items() if k in value))
        if schema.get("additionalProperties", True) is False:
            checks.append(all(k in props for k in value))
    return all(checks)
