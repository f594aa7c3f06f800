"""The JSON Schema of the wire protocol, generated from the message dataclasses.

``python -m protocol.schema > protocol/schema.json`` regenerates the committed
file; a test fails when the two differ. The schema is derived from the same
field specs the parser uses, so it accepts exactly what the parser accepts,
with one caveat: integers must be written as integers (``1``, not ``1.0``),
which JSON Schema's ``"type": "integer"`` does not insist on.
"""

import json
from pathlib import Path
from typing import Any

from protocol.messages import CLIENT_MESSAGE_TYPES, PROTOCOL_VERSION, SERVER_MESSAGE_TYPES
from protocol.messages.fields import Array, Nullable, Obj, Spec, field_table
from protocol.messages.spec import Message, Wire

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _nested(spec: Spec) -> list[type[Wire]]:
    """Wire classes referenced by a spec, directly or through arrays and null."""
    if isinstance(spec, Obj):
        return [spec.cls]
    if isinstance(spec, Array):
        return _nested(spec.item)
    if isinstance(spec, Nullable):
        return _nested(spec.inner)
    return []


def _summary(cls: type) -> str:
    """The first paragraph of a class docstring, on one line."""
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(doc.split())


def class_schema(cls: type[Wire]) -> dict[str, Any]:
    """The object schema of one message or value class."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    if issubclass(cls, Message):
        properties["type"] = {"const": cls.type}
        required.append("type")
    for f in field_table(cls):
        properties[f.name] = f.spec.schema()
        if f.required:
            required.append(f.name)
        elif f.default is not None:
            properties[f.name]["default"] = f.spec.dump(f.default)
    out: dict[str, Any] = {
        "description": _summary(cls),
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    if cls.rules:
        out["allOf"] = [rule.schema(cls) for rule in cls.rules]
    return out


def build_schema() -> dict[str, Any]:
    """The whole schema: any client message or any server message, with ``$defs``."""
    client = list(CLIENT_MESSAGE_TYPES.values())
    server = list(SERVER_MESSAGE_TYPES.values())
    defs: dict[str, Any] = {
        "ClientMessage": {"oneOf": [{"$ref": f"#/$defs/{c.__name__}"} for c in client]},
        "ServerMessage": {"oneOf": [{"$ref": f"#/$defs/{c.__name__}"} for c in server]},
    }
    pending: list[type[Wire]] = [*client, *server]
    while pending:
        cls = pending.pop(0)
        if cls.__name__ in defs:
            continue
        defs[cls.__name__] = class_schema(cls)
        for f in field_table(cls):
            pending.extend(_nested(f.spec))
    return {
        "$schema": SCHEMA_DIALECT,
        "title": f"MCTS Arena wire protocol, version {PROTOCOL_VERSION}",
        "description": (
            "One JSON object per websocket text frame. ClientMessage is what clients send, "
            "ServerMessage what the server sends; see docs/protocol.md. Integers must be "
            "written without a fraction or exponent."
        ),
        "anyOf": [{"$ref": "#/$defs/ClientMessage"}, {"$ref": "#/$defs/ServerMessage"}],
        "$defs": defs,
    }


def render_schema() -> str:
    """The schema as the text committed in ``protocol/schema.json``."""
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"


def load_schema() -> dict[str, Any]:
    """The committed schema shipped with the package."""
    # Next to this module, not via importlib.resources("protocol"): under pytest a
    # tests/protocol directory can shadow the package name as a namespace package.
    text = (Path(__file__).parent / "schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def main() -> None:
    """Print the schema to standard output."""
    print(render_schema(), end="")


if __name__ == "__main__":
    main()
