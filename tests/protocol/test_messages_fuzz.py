"""Property tests: whatever arrives, parsing ends in a message or one ProtocolError."""

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wire_samples import MESSAGE_CLASSES, WIRE_SETTINGS, json_values, wire_values

from protocol.errors import ProtocolError
from protocol.messages import (
    CLIENT_MESSAGE_TYPES,
    MAX_BOT_MESSAGE_BYTES,
    Error,
    ErrorCode,
    Message,
    parse_client_message,
    parse_server_message,
)
from protocol.messages.fields import field_table
from protocol.messages.jsontext import WRITERS
from protocol.messages.search import fast_analysis
from protocol.messages.spec import parse_object, to_json
from protocol.messages.values import Analysis, MoveStat

PARSER_CODES = {
    ErrorCode.BAD_JSON,
    ErrorCode.TOO_LARGE,
    ErrorCode.BAD_MESSAGE,
    ErrorCode.UNKNOWN_TYPE,
    ErrorCode.MISSING_FIELD,
    ErrorCode.UNKNOWN_FIELD,
    ErrorCode.BAD_TYPE,
    ErrorCode.BAD_VALUE,
}
PARSERS: list[Callable[[Any], Message]] = [parse_client_message, parse_server_message]


def parser_for(cls: type[Message]) -> Callable[[Any], Message]:
    """The parser of the direction ``cls`` travels in."""
    client = cls in CLIENT_MESSAGE_TYPES.values()
    return parse_client_message if client else parse_server_message


def outcome(parse: Callable[[Any], Message], frame: object) -> Message | ProtocolError:
    """Parse, returning the ProtocolError instead of raising; any other exception fails."""
    try:
        return parse(frame)
    except ProtocolError as exc:
        assert exc.code in PARSER_CODES
        # The server answers with Error.from_exception: it must itself be a valid message.
        reply = Error.from_exception(exc).to_json()
        assert parse_server_message(reply) == Error.from_exception(exc)
        return exc


def error_code(parse: Callable[[Any], Message], frame: object) -> str:
    """The code of the ProtocolError ``frame`` must raise."""
    result = outcome(parse, frame)
    assert isinstance(result, ProtocolError), f"{frame!r} parsed as {result!r}"
    return result.code


@pytest.mark.parametrize("cls", MESSAGE_CLASSES, ids=lambda c: c.type + "-" + c.__name__)
@settings(WIRE_SETTINGS, max_examples=26)
@given(data=st.data())
def test_round_trip(cls: type[Message], data: st.DataObject) -> None:
    message = data.draw(wire_values(cls))
    text = message.to_json()
    assert parser_for(cls)(text) == message
    assert parser_for(cls)(text.encode()) == message
    assert json.loads(text)["type"] == cls.type


@pytest.mark.parametrize("cls", MESSAGE_CLASSES, ids=lambda c: c.type + "-" + c.__name__)
@settings(WIRE_SETTINGS, max_examples=40)
@given(data=st.data())
def test_compiled_writer_matches_json_dumps(cls: type[Message], data: st.DataObject) -> None:
    # to_json is generated per class (protocol.messages.jsontext); it must write
    # exactly what the generic dict-and-json.dumps path writes.
    message = data.draw(wire_values(cls))
    assert message.to_json() == to_json(message.to_dict())


def test_compiled_writer_refuses_what_json_dumps_refuses() -> None:
    with pytest.raises(ValueError, match="not JSON compliant"):
        WRITERS[MoveStat](MoveStat(move=0, visits=1, value=float("nan")))
    with pytest.raises(ValueError, match="not JSON compliant"):
        to_json(MoveStat(move=0, visits=1, value=float("inf")).to_dict())


@settings(WIRE_SETTINGS, max_examples=200)
@given(json_values)
def test_arbitrary_json(value: Any) -> None:
    for parse in PARSERS:
        outcome(parse, json.dumps(value))


@settings(WIRE_SETTINGS, max_examples=100)
@given(st.sampled_from(sorted(CLIENT_MESSAGE_TYPES)), st.dictionaries(st.text(), json_values))
def test_arbitrary_fields_under_a_real_type(kind: str, fields: dict[str, Any]) -> None:
    for parse in PARSERS:
        outcome(parse, json.dumps({**fields, "type": kind}))


@settings(WIRE_SETTINGS, max_examples=200)
@given(st.text(max_size=200) | st.binary(max_size=200))
def test_arbitrary_text_and_bytes(frame: str | bytes) -> None:
    for parse in PARSERS:
        outcome(parse, frame)


@pytest.mark.parametrize("cls", MESSAGE_CLASSES, ids=lambda c: c.type + "-" + c.__name__)
@settings(WIRE_SETTINGS, max_examples=16)
@given(data=st.data())
def test_one_field_replaced_by_any_json(cls: type[Message], data: st.DataObject) -> None:
    raw = data.draw(wire_values(cls)).to_dict()
    key = data.draw(st.sampled_from(sorted(raw)))
    raw[key] = data.draw(json_values)
    outcome(parser_for(cls), json.dumps(raw))


@pytest.mark.parametrize("cls", MESSAGE_CLASSES, ids=lambda c: c.type + "-" + c.__name__)
@settings(WIRE_SETTINGS, max_examples=10)
@given(data=st.data())
def test_missing_and_unknown_fields(cls: type[Message], data: st.DataObject) -> None:
    raw = data.draw(wire_values(cls)).to_dict()
    parse = parser_for(cls)
    extra = data.draw(st.text(min_size=1, max_size=10).filter(lambda k: k not in raw))
    known = {f.name for f in field_table(cls)}
    expected = ErrorCode.BAD_VALUE if extra in known else ErrorCode.UNKNOWN_FIELD
    if extra not in known:
        assert error_code(parse, json.dumps({**raw, extra: 1})) == expected
    required = [f.name for f in field_table(cls) if f.required]
    if required:
        name = data.draw(st.sampled_from(required))
        del raw[name]
        assert error_code(parse, json.dumps(raw)) == ErrorCode.MISSING_FIELD


@pytest.mark.parametrize("cls", MESSAGE_CLASSES, ids=lambda c: c.type + "-" + c.__name__)
@settings(WIRE_SETTINGS, max_examples=10)
@given(data=st.data())
def test_booleans_are_not_numbers(cls: type[Message], data: st.DataObject) -> None:
    raw = data.draw(wire_values(cls)).to_dict()
    numeric = [k for k, v in raw.items() if type(v) in (int, float)]
    if numeric:
        raw[data.draw(st.sampled_from(numeric))] = data.draw(st.booleans())
        assert error_code(parser_for(cls), json.dumps(raw)) == ErrorCode.BAD_TYPE


@pytest.mark.parametrize("opener", ["[", '{"a":', '{"type":"move","analysis":'])
def test_deep_nesting(opener: str) -> None:
    text = opener * 100_000
    assert error_code(parse_client_message, text) == ErrorCode.TOO_LARGE
    assert error_code(parse_server_message, opener * 30_000) == ErrorCode.BAD_JSON
    assert error_code(parse_client_message, opener * 200) == ErrorCode.BAD_JSON
    closed = "[" * 5000 + "]" * 5000
    assert error_code(parse_server_message, closed) == ErrorCode.BAD_JSON


def test_brackets_inside_strings_are_not_nesting() -> None:
    text = json.dumps({"type": "error", "code": "x", "message": "[{" * 500 + '\\"'})
    assert parse_server_message(text) == Error("x", "[{" * 500 + '\\"')


def test_unterminated_strings_are_rejected_quickly() -> None:
    text = '["' + '\\"' * 4000
    assert error_code(parse_client_message, text) == ErrorCode.BAD_JSON


@pytest.mark.parametrize(
    ("literal", "code"),
    [
        ("1" * 5000, ErrorCode.BAD_JSON),  # over Python's integer digit limit
        ("1" + "0" * 400, ErrorCode.BAD_VALUE),
        ("-1" + "0" * 400, ErrorCode.BAD_VALUE),
        ("1e400", ErrorCode.BAD_TYPE),  # a float (inf) where an integer belongs
        ("NaN", ErrorCode.BAD_JSON),
        ("Infinity", ErrorCode.BAD_JSON),
        ("1.0", ErrorCode.BAD_TYPE),
    ],
)
def test_huge_and_odd_numbers_in_an_integer_field(literal: str, code: ErrorCode) -> None:
    text = '{"type":"move","match_id":"m","ply":' + literal + ',"move":3}'
    assert error_code(parse_client_message, text) == code


@pytest.mark.parametrize(
    ("literal", "code"),
    [("1e400", ErrorCode.BAD_VALUE), ("1" + "0" * 400, ErrorCode.BAD_VALUE), ("-0.0", None)],
)
def test_huge_numbers_in_a_float_field(literal: str, code: ErrorCode | None) -> None:
    text = '{"type":"move","match_id":"m","ply":0,"move":3,"analysis":{"value":' + literal + "}}"
    result = outcome(parse_client_message, text)
    assert (result.code if isinstance(result, ProtocolError) else None) == code


@pytest.mark.parametrize(
    "frame",
    [
        b"\xff\xfe{}",
        b'{"type":"games","id":"\xc3"}',
        b"\xef\xbb\xbf{}",  # a UTF-8 byte order mark is not JSON
        '{"type":"games","id":"\ud800"}',  # a str that cannot be UTF-8 at all
        "",
        b"",
        "\x00",
    ],
)
def test_not_utf8_json(frame: str | bytes) -> None:
    assert error_code(parse_client_message, frame) == ErrorCode.BAD_JSON


def test_escaped_lone_surrogate_in_a_string_field() -> None:
    text = '{"type":"error","code":"x","message":"\\ud800"}'
    assert error_code(parse_server_message, text) == ErrorCode.BAD_VALUE


@pytest.mark.parametrize("frame", [None, 42, ["a"], {"type": "games"}, bytearray(b"{}")])
def test_non_text_frames(frame: object) -> None:
    assert isinstance(outcome(parse_client_message, frame), ProtocolError)


def test_large_valid_client_messages_fit_the_bot_limit() -> None:
    # The biggest move a bot can send: full analysis and tree with the longest numbers.
    from protocol.messages import MAX_TREE_NODES, Analysis, Move, MoveStat, TreeNode

    stats = tuple(MoveStat(2**31 - 1, 2**53 - 1, -1.2345678901234567e-300) for _ in range(81))
    tree = tuple(
        TreeNode(2**31 - 1, 2**53 - 1, -1.2345678901234567e-300, i - 1 if i else None)
        for i in range(MAX_TREE_NODES)
    )
    analysis = Analysis(
        2**53 - 1,
        1.2345678901234567e300,
        -1.2345678901234567e-300,
        1024,
        stats,
        2**53 - 1,
        1.2345678901234567e300,
        pv=(80,) * 81,
        tree=tree,
    )
    move = Move("m" * 64, 1024, 2**31 - 1, analysis, id="\\" * 64)
    assert len(move.to_json().encode()) <= MAX_BOT_MESSAGE_BYTES
    assert parse_client_message(move.to_json()) == move


def _mutated(data: st.DataObject, value: Any) -> Any:
    """``value`` (decoded JSON) with one value somewhere inside replaced by any JSON."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        return {**value, key: _mutated(data, value[key])}
    if isinstance(value, list) and value and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(value) - 1))
        return [*value[:index], _mutated(data, value[index]), *value[index + 1 :]]
    return data.draw(json_values | st.integers() | st.floats())


@settings(WIRE_SETTINGS, max_examples=400)
@given(data=st.data())
def test_the_fast_analysis_path_agrees_with_the_full_parser(data: st.DataObject) -> None:
    raw = data.draw(wire_values(Analysis)).to_dict()
    if data.draw(st.booleans()):
        raw = _mutated(data, raw)
    fast = fast_analysis(raw, Analysis, MoveStat)
    try:
        full = parse_object(Analysis, raw, "analysis")
    except ProtocolError:
        assert fast is None  # the full parser words the error
        return
    assert fast is None or fast == full
    if fast is not None:  # the same value, down to the types
        assert WRITERS[Analysis](fast) == WRITERS[Analysis](full)
