"""Validation against ``protocol/http-schema.json`` (which refers into ``protocol/schema.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

PROTOCOL = Path(__file__).parents[2] / "protocol"
HTTP_SCHEMA: dict[str, Any] = json.loads((PROTOCOL / "http-schema.json").read_text("utf-8"))
WIRE_SCHEMA: dict[str, Any] = json.loads((PROTOCOL / "schema.json").read_text("utf-8"))
ROUTES: dict[str, dict[str, Any]] = HTTP_SCHEMA["x-routes"]

_REGISTRY: Registry[Any] = Registry().with_resources(
    [
        ("schema.json", DRAFT202012.create_resource(WIRE_SCHEMA)),
        ("http-schema.json", DRAFT202012.create_resource(HTTP_SCHEMA)),
    ]
)


def check(schema: dict[str, Any], body: Any) -> None:
    """Raise ``jsonschema.ValidationError`` unless ``body`` satisfies ``schema``."""
    root = {**schema, "$defs": HTTP_SCHEMA["$defs"]}
    Draft202012Validator(
        root, registry=_REGISTRY, format_checker=Draft202012Validator.FORMAT_CHECKER
    ).validate(body)


def check_route(route: str, status: int, body: Any) -> None:
    """``body`` is what the schema documents for ``route`` answering ``status``.

    ``route`` is an ``x-routes`` key (``"POST /api/tournaments"``); a bare path means ``GET``.
    """
    check(ROUTES[route if " " in route else f"GET {route}"][str(status)], body)


def check_def(name: str, body: Any) -> None:
    """``body`` is a ``$defs/name`` of the HTTP schema."""
    check({"$ref": f"#/$defs/{name}"}, body)
