"""Example-based tests of the wire messages, including every example in docs/protocol.md."""

import json
import re
from pathlib import Path
from typing import Literal

import pytest

from protocol.errors import ProtocolError
from protocol.games import get_game_class
from protocol.games.base import Termination
from protocol.messages import (
    CLIENT_MESSAGE_TYPES,
    MAX_BOT_MESSAGE_BYTES,
    MAX_SPECTATOR_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    SERVER_MESSAGE_TYPES,
    SPECTATOR_MESSAGE_TYPES,
    Analysis,
    Clocks,
    CloseCode,
    Error,
    ErrorCode,
    Event,
    GamesQuery,
    Hello,
    MatchEnd,
    MatchStart,
    Message,
    Move,
    Moved,
    MoveStat,
    Seek,
    Snapshot,
    TimeControl,
    Watch,
    YourTurn,
    parse_client_message,
    parse_server_message,
    principal_line,
)
from protocol.messages.server import TERMINATIONS

DOC = (Path(__file__).parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")
DOC_EXAMPLES = re.findall(r"```json\n(.*?)\n```", DOC, re.DOTALL)


def parse_any(text: str) -> Message:
    """Parse a documented example in whichever direction it travels."""
    kind = json.loads(text)["type"]
    try:
        return parse_client_message(text)
    except ProtocolError:
        if kind not in SERVER_MESSAGE_TYPES:
            raise
    return parse_server_message(text)


def _written_part(full: object, written: object) -> object:
    """``full`` restricted (recursively) to the keys ``written`` has."""
    if isinstance(full, dict) and isinstance(written, dict):
        return {k: _written_part(v, written[k]) for k, v in full.items() if k in written}
    if isinstance(full, list) and isinstance(written, list) and len(full) == len(written):
        return [_written_part(f, w) for f, w in zip(full, written, strict=True)]
    return full


def code_of(text: str | bytes, spectator: bool = False) -> str:
    """The error code a client frame is refused with."""
    limit = MAX_SPECTATOR_MESSAGE_BYTES if spectator else MAX_BOT_MESSAGE_BYTES
    with pytest.raises(ProtocolError) as info:
        parse_client_message(text, limit)
    return info.value.code


def test_pinned_constants() -> None:
    assert PROTOCOL_VERSION == 1
    assert MAX_BOT_MESSAGE_BYTES == 16384
    assert MAX_SPECTATOR_MESSAGE_BYTES == 1024
    assert (CloseCode.GOING_AWAY, CloseCode.POLICY_VIOLATION, CloseCode.MESSAGE_TOO_BIG) == (
        1001,
        1008,
        1009,
    )


def test_docs_have_an_example_of_every_message() -> None:
    documented = {(type(parse_any(text)).__name__) for text in DOC_EXAMPLES}
    every = {c.__name__ for c in (*CLIENT_MESSAGE_TYPES.values(), *SERVER_MESSAGE_TYPES.values())}
    assert documented == every


@pytest.mark.parametrize("text", DOC_EXAMPLES)
def test_doc_examples_parse_and_serialize_back(text: str) -> None:
    message = parse_any(text)
    again = json.loads(message.to_json())
    written = json.loads(text)
    assert _written_part(again, written) == written  # serializing adds only defaults
    assert parse_any(message.to_json()) == message


@pytest.mark.parametrize("code", list(ErrorCode))
def test_every_error_code_is_documented(code: ErrorCode) -> None:
    assert f"| `{code}` |" in DOC


@pytest.mark.parametrize("code", list(CloseCode))
def test_every_close_code_is_documented(code: CloseCode) -> None:
    assert f"| {int(code)} |" in DOC


def test_documented_positions_decode_in_their_games() -> None:
    for text in DOC_EXAMPLES:
        message = parse_any(text)
        game = getattr(message, "game", "connect4")
        for position in re.findall(r'"position":"([^"]*)"', text):
            get_game_class(game).decode(position)


def test_terminations_match_the_rules_enum() -> None:
    assert set(TERMINATIONS) == {t.value for t in Termination}


def test_serialization_is_compact_type_first_and_omits_null_options() -> None:
    seek = Seek("connect4", TimeControl(1000))
    assert seek.to_json() == (
        '{"type":"seek","game":"connect4","time_control":{"move_ms":1000,"bank_ms":0}}'
    )
    assert GamesQuery(id="q").to_dict() == {"type": "games", "id": "q"}
    # Required nullable fields stay, as explicit nulls.
    end = MatchEnd("m", None, "*", "aborted", None, None, False, "server stopped")
    assert json.loads(end.to_json())["winner"] is None


def test_messages_are_frozen_and_slotted() -> None:
    seek = Seek("connect4", TimeControl(1000))
    with pytest.raises(AttributeError):
        seek.game = "uttt"  # type: ignore[misc, unused-ignore]
    assert not hasattr(seek, "__dict__")


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"type":"move","match_id":"m","ply":true,"move":1}', ErrorCode.BAD_TYPE),
        ('{"type":"move","match_id":"m","ply":0,"move":1.0}', ErrorCode.BAD_TYPE),
        ('{"type":"move","match_id":"m","ply":0,"move":"1"}', ErrorCode.BAD_TYPE),
        ('{"type":"move","match_id":"m","ply":-1,"move":1}', ErrorCode.BAD_VALUE),
        ('{"type":"move","match_id":"m","ply":0,"move":1,"extra":0}', ErrorCode.UNKNOWN_FIELD),
        ('{"type":"move","match_id":"m","ply":0}', ErrorCode.MISSING_FIELD),
        ('{"type":"move","match_id":"m m","ply":0,"move":1}', ErrorCode.BAD_VALUE),
        ('{"type":"teleport"}', ErrorCode.UNKNOWN_TYPE),
        ('{"type":"welcome"}', ErrorCode.UNKNOWN_TYPE),  # a server message sent by a client
        ('{"type":7}', ErrorCode.BAD_MESSAGE),
        ('{"kind":"move"}', ErrorCode.BAD_MESSAGE),
        ("[1,2]", ErrorCode.BAD_MESSAGE),
        ('"hello"', ErrorCode.BAD_MESSAGE),
        ('{"type":"games","type":"games"}', ErrorCode.BAD_JSON),
        ("{'type':'games'}", ErrorCode.BAD_JSON),
        ('{"type":"seek","game":"Connect4","time_control":{"move_ms":1}}', ErrorCode.BAD_VALUE),
        ('{"type":"seek","game":"connect4","time_control":{"move_ms":0}}', ErrorCode.BAD_VALUE),
        ('{"type":"seek","game":"connect4","time_control":{}}', ErrorCode.MISSING_FIELD),
        ('{"type":"seek","game":"connect4","time_control":[]}', ErrorCode.BAD_TYPE),
        ('{"type":"hello","role":"bot","version":1,"token":"t"}', ErrorCode.MISSING_FIELD),
        ('{"type":"hello","role":"bot","version":1,"name":"a"}', ErrorCode.MISSING_FIELD),
        ('{"type":"hello","role":"admin","version":1}', ErrorCode.BAD_VALUE),
        ('{"type":"hello","role":"spectator","version":1,"max_matches":65}', ErrorCode.BAD_VALUE),
        ('{"type":"hello","role":"spectator","version":1,"name":"a b"}', ErrorCode.BAD_VALUE),
        ('{"type":"watch","since":3}', ErrorCode.MISSING_FIELD),
        ('{"type":"games","id":""}', ErrorCode.BAD_VALUE),
        ('{"type":"games","id":"' + "x" * 65 + '"}', ErrorCode.BAD_VALUE),
        ('{"type":"resign","match_id":"m","reason":"two\\nlines"}', ErrorCode.BAD_VALUE),
        ('{"type":"resign","match_id":"m","reason":"' + "x" * 201 + '"}', ErrorCode.BAD_VALUE),
    ],
)
def test_malformed_client_messages(text: str, code: ErrorCode) -> None:
    assert code_of(text) == code


def test_name_pattern_refuses_a_trailing_newline() -> None:
    assert code_of('{"type":"challenge","opponent":"bob\\n","game":"uttt",'
                   '"time_control":{"move_ms":5}}') == ErrorCode.BAD_VALUE  # fmt: skip


def test_errors_quote_the_message_id_as_ref() -> None:
    with pytest.raises(ProtocolError) as info:
        parse_client_message('{"type":"move","id":"req-9","match_id":"m","ply":0,"move":true}')
    assert (info.value.code, info.value.ref) == (ErrorCode.BAD_TYPE, "req-9")
    assert "move" in info.value.message
    reply = Error.from_exception(info.value)
    assert reply.ref == "req-9" and reply.code == "bad_type"
    with pytest.raises(ProtocolError) as info:
        parse_client_message('{"type":"nope","id":"req-10"}')
    assert info.value.ref == "req-10"
    with pytest.raises(ProtocolError) as info:
        parse_client_message('{"type":"nope","id":5}')
    assert info.value.ref is None


def test_nested_paths_in_error_messages() -> None:
    text = (
        '{"type":"move","match_id":"m","ply":0,"move":1,'
        '"analysis":{"moves":[{"move":1,"visits":1},{"move":2,"visits":-1}]}}'
    )
    with pytest.raises(ProtocolError, match=r"analysis\.moves\[1\]\.visits"):
        parse_client_message(text)


def test_spectator_limit_is_smaller() -> None:
    watch = Watch(match_id="m", id="x" * 60).to_json()
    padded = watch[:-1] + " " * (MAX_SPECTATOR_MESSAGE_BYTES - len(watch)) + "}"
    assert len(padded) == MAX_SPECTATOR_MESSAGE_BYTES
    assert parse_client_message(padded, MAX_SPECTATOR_MESSAGE_BYTES) == Watch("m", id="x" * 60)
    assert code_of(padded[:-1] + " }", spectator=True) == ErrorCode.TOO_LARGE
    assert parse_client_message(padded[:-1] + " }") == Watch("m", id="x" * 60)


def test_size_counts_utf8_bytes_not_characters() -> None:
    # Two-byte characters: fewer characters than the limit, more bytes of UTF-8.
    count = MAX_BOT_MESSAGE_BYTES // 2 + 50
    text = json.dumps({"type": "games", "id": "é" * count}, ensure_ascii=False)
    assert len(text) < MAX_BOT_MESSAGE_BYTES < len(text.encode())
    assert code_of(text) == ErrorCode.TOO_LARGE


def test_integers_are_accepted_where_numbers_belong() -> None:
    text = '{"type":"move","match_id":"m","ply":0,"move":1,"analysis":{"sims_per_s":10}}'
    move = parse_client_message(text)
    assert isinstance(move, Move) and move.analysis == Analysis(sims_per_s=10.0)
    negative = '{"type":"move","match_id":"m","ply":0,"move":1,"analysis":{"sims_per_s":-1}}'
    assert code_of(negative) == ErrorCode.BAD_VALUE


def test_hello_spectator_needs_no_credentials() -> None:
    hello = parse_client_message('{"type":"hello","role":"spectator","version":1}')
    assert hello == Hello("spectator", 1)
    assert Hello in CLIENT_MESSAGE_TYPES.values() and Hello not in SPECTATOR_MESSAGE_TYPES


def _moved() -> Moved:
    return Moved("m", 0, 0, 3, "......./......./......./......./......./...x... o", 5, _clocks())


def _clocks() -> Clocks:
    return Clocks((1000, 1000), (0, 0))


def test_event_kind_must_match_its_payload() -> None:
    good = Event("m", 1, "moved", moved=_moved(), analysis=Analysis(moves=(MoveStat(3, 10),)))
    assert parse_server_message(good.to_json()) == good
    for bad in (Event("m", 1, "moved"), Event("m", 1, "match_end", moved=_moved())):
        with pytest.raises(ProtocolError) as info:
            parse_server_message(bad.to_json())
        assert info.value.code in (ErrorCode.MISSING_FIELD, ErrorCode.BAD_VALUE)
    with pytest.raises(ProtocolError) as info:
        parse_server_message(Event("m", 0, "moved", moved=_moved()).to_json())
    assert info.value.code == ErrorCode.BAD_VALUE


def test_nested_messages_keep_and_check_their_type() -> None:
    raw = json.loads(Event("m", 1, "moved", moved=_moved()).to_json())
    assert raw["moved"]["type"] == "moved"
    raw["moved"]["type"] = "match_end"
    with pytest.raises(ProtocolError) as info:
        parse_server_message(json.dumps(raw))
    assert info.value.code == ErrorCode.BAD_VALUE
    del raw["moved"]["type"]
    with pytest.raises(ProtocolError) as info:
        parse_server_message(json.dumps(raw))
    assert info.value.code == ErrorCode.MISSING_FIELD


@pytest.mark.parametrize(
    ("winner", "result", "fault", "faulty", "ok"),
    [
        (0, "1-0", None, None, True),
        (1, "0-1", "bot", 0, True),
        (None, "*", "infrastructure", None, True),
        (None, "1/2-1/2", None, None, True),
        (0, "0-1", None, None, False),
        (None, "1-0", None, None, False),
        (1, "0-1", None, 0, False),
        (1, "0-1", "bot", None, False),
    ],
)
def test_match_end_consistency(
    winner: int | None, result: str, fault: str | None, faulty: int | None, ok: bool
) -> None:
    end = MatchEnd("m", winner, result, "timeout", fault, faulty, True, "")
    if ok:
        assert parse_server_message(end.to_json()) == end
    else:
        with pytest.raises(ProtocolError):
            parse_server_message(end.to_json())


def test_snapshot_status_and_end_agree() -> None:
    end = MatchEnd("m", 0, "1-0", "resign", None, None, False, "resigned")
    cases: list[tuple[Literal["live", "finished"], MatchEnd | None, bool]] = [
        ("live", None, True),
        ("finished", end, True),
        ("live", end, False),
        ("finished", None, False),
    ]
    for status, ending, ok in cases:
        snap = Snapshot(
            "m", "tictactoe", ("a", "b"), None, TimeControl(100), (4,), "..././... o",
            _clocks(), status, 1, ending,
        )  # fmt: skip
        if ok:
            assert parse_server_message(snap.to_json()) == snap
        else:
            with pytest.raises(ProtocolError):
                parse_server_message(snap.to_json())


def test_server_messages_are_not_client_messages() -> None:
    turn = YourTurn("m", 0, "..././... x", (0, 1), 100, 0)
    assert parse_server_message(turn.to_json()) == turn
    assert code_of(turn.to_json()) == ErrorCode.UNKNOWN_TYPE
    start = MatchStart("m", "uttt", ("a", "b"), 1, TimeControl(5), ".", (), 0, _clocks())
    assert parse_server_message(start.to_json().encode()) == start


def test_search_tree_parses_and_round_trips() -> None:
    text = (
        '{"type":"move","match_id":"m","ply":0,"move":3,"analysis":{"moves":[],"tree":['
        '{"move":3,"visits":9,"value":0.5},{"move":2,"visits":5,"value":-0.25,"parent":0},'
        '{"move":4,"visits":3,"parent":0},{"move":1,"visits":1,"parent":1}]}}'
    )
    move = parse_client_message(text)
    assert isinstance(move, Move) and move.analysis is not None and move.analysis.tree
    assert move.to_json() == text
    assert principal_line(move.analysis.tree) == [0, 1, 3]


@pytest.mark.parametrize(
    ("nodes", "error"),
    [
        ('[{"move":3,"visits":1,"parent":0}]', r"tree\[0\]\.parent: 0 is not the index"),
        ('[{"move":3,"visits":1},{"move":3,"visits":1,"parent":2}]', r"tree\[1\]\.parent"),
        ('[{"move":3,"visits":1,"depth":2}]', r"tree\[0\]\.'depth': unknown field"),
        ("[" + ",".join(['{"move":1,"visits":1}'] * 65) + "]", r"65 items, expected 0\.\.64"),
    ],
)
def test_bad_search_trees_are_refused(nodes: str, error: str) -> None:
    text = f'{{"type":"move","match_id":"m","ply":0,"move":3,"analysis":{{"tree":{nodes}}}}}'
    with pytest.raises(ProtocolError, match=error):
        parse_client_message(text)
