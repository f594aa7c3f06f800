"""The JSON Schema agrees with the dataclasses and with the parser."""

import json
import types
import typing
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wire_samples import MESSAGE_CLASSES, WIRE_SETTINGS, json_values, validate, wire_values

import protocol.messages
from protocol.errors import ProtocolError
from protocol.games import GAMES
from protocol.messages import (
    CLIENT_MESSAGE_TYPES,
    SERVER_MESSAGE_TYPES,
    Message,
    parse_client_message,
    parse_server_message,
)
from protocol.messages.fields import (
    Array,
    Bool,
    Choice,
    Float,
    Int,
    Nullable,
    Obj,
    Spec,
    Str,
    field_table,
)
from protocol.messages.spec import Wire
from protocol.schema import (
    HTTP_SCHEMA_FILE,
    build_schema,
    load_schema,
    render_http_schema,
    render_schema,
)

SCHEMA_FILE = Path(__file__).parents[2] / "protocol" / "schema.json"
SCHEMA = build_schema()


def wire_classes() -> list[type[Wire]]:
    """Every message and nested value class the schema defines."""
    names = set(SCHEMA["$defs"]) - {"ClientMessage", "ServerMessage"}
    return [getattr(protocol.messages, name) for name in sorted(names)]


def test_committed_schema_is_generated() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == render_schema(), (
        "protocol/schema.json is stale: run python -m protocol.schema > protocol/schema.json"
    )
    assert load_schema() == SCHEMA


def test_schema_is_draft_2020_12_with_both_directions() -> None:
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    client = [r["$ref"] for r in SCHEMA["$defs"]["ClientMessage"]["oneOf"]]
    server = [r["$ref"] for r in SCHEMA["$defs"]["ServerMessage"]["oneOf"]]
    assert client == [f"#/$defs/{c.__name__}" for c in CLIENT_MESSAGE_TYPES.values()]
    assert server == [f"#/$defs/{c.__name__}" for c in SERVER_MESSAGE_TYPES.values()]


def _spec_matches(spec: Spec, hint: Any) -> bool:
    """Whether a field spec parses into exactly the annotated Python type."""
    if isinstance(spec, Nullable):
        args = typing.get_args(hint)
        if type(hint) is not types.UnionType or type(None) not in args:
            return False
        rest = [a for a in args if a is not type(None)]
        return len(rest) == 1 and _spec_matches(spec.inner, rest[0])
    if isinstance(spec, Choice):
        if typing.get_origin(hint) is Literal:
            return set(typing.get_args(hint)) == set(spec.values)
        return hint is str
    if isinstance(spec, Array):
        if typing.get_origin(hint) is not tuple:
            return False
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return _spec_matches(spec.item, args[0])
        same = spec.min_items == spec.max_items == len(args)
        return same and all(_spec_matches(spec.item, a) for a in args)
    simple = {Int: int, Float: float, Bool: bool, Str: str}
    if isinstance(spec, Obj):
        return hint is spec.cls
    return hint is simple[type(spec)]


@pytest.mark.parametrize("cls", wire_classes(), ids=lambda c: c.__name__)
def test_schema_properties_equal_dataclass_fields(cls: type[Wire]) -> None:
    definition = SCHEMA["$defs"][cls.__name__]
    table = field_table(cls)
    names = [f.name for f in table]
    message = issubclass(cls, Message)
    assert list(definition["properties"]) == (["type"] if message else []) + names
    assert definition["required"] == (["type"] if message else []) + [
        f.name for f in table if f.required
    ]
    assert definition["additionalProperties"] is False
    hints = typing.get_type_hints(cls)
    for f in table:
        assert _spec_matches(f.spec, hints[f.name]), f"{cls.__name__}.{f.name}"
        assert definition["properties"][f.name] == {
            **f.spec.schema(),
            **({} if f.required or f.default is None else {"default": f.spec.dump(f.default)}),
        }


@pytest.mark.parametrize("cls", MESSAGE_CLASSES, ids=lambda c: c.type + "-" + c.__name__)
@settings(WIRE_SETTINGS, max_examples=20)
@given(data=st.data())
def test_valid_messages_validate(cls: type[Message], data: st.DataObject) -> None:
    raw = json.loads(data.draw(wire_values(cls)).to_json())
    assert validate(raw, SCHEMA, SCHEMA)
    direction = "ClientMessage" if cls in CLIENT_MESSAGE_TYPES.values() else "ServerMessage"
    assert validate(raw, SCHEMA["$defs"][direction], SCHEMA)


def _parses(cls: type[Message], raw: Any) -> bool:
    client = cls in CLIENT_MESSAGE_TYPES.values()
    parse = parse_client_message if client else parse_server_message
    try:
        parse(json.dumps(raw))
    except ProtocolError:
        return False
    return True


@st.composite
def _mutated(draw: st.DrawFn, cls: type[Message]) -> Any:
    """A valid message dict with one field (or one nested field) dropped or replaced."""
    raw = json.loads(draw(wire_values(cls)).to_json())
    target = raw
    # Descend into a nested object now and then, so nested rules are exercised too.
    nested = [k for k, v in raw.items() if isinstance(v, dict)]
    descend: bool = draw(st.booleans())
    if nested and descend:
        target = raw[draw(st.sampled_from(sorted(nested)))]
    key = draw(st.sampled_from(sorted(target)))
    action = draw(st.sampled_from(["drop", "replace", "null", "add"]))
    if action == "drop":
        del target[key]
    elif action == "null":
        target[key] = None
    elif action == "add":
        target[draw(st.text(max_size=6))] = draw(json_values)
    else:
        target[key] = draw(json_values | st.integers(-3, 3) | st.sampled_from(["", "x", "*"]))
    return raw


@pytest.mark.parametrize("cls", MESSAGE_CLASSES, ids=lambda c: c.type + "-" + c.__name__)
@settings(WIRE_SETTINGS, max_examples=40)
@given(data=st.data())
def test_schema_and_parser_agree_on_mutated_messages(
    cls: type[Message], data: st.DataObject
) -> None:
    raw = data.draw(_mutated(cls))
    direction = "ClientMessage" if cls in CLIENT_MESSAGE_TYPES.values() else "ServerMessage"
    assert validate(raw, SCHEMA["$defs"][direction], SCHEMA) == _parses(cls, raw), raw


def test_http_schema_game_names_are_the_registry() -> None:
    committed = HTTP_SCHEMA_FILE.read_text(encoding="utf-8")
    assert committed == render_http_schema(committed), (
        "protocol/http-schema.json's Game enum is stale: run python -m protocol.schema --write"
    )
    schema = json.loads(committed)
    assert schema["$defs"]["Game"]["enum"] == list(GAMES)
    # Every game field of the API refers to that one enum; none lists games by hand.
    assert committed.count('"$ref": "#/$defs/Game"') >= 2
    assert committed.count('"uttt-quick"') == 1
