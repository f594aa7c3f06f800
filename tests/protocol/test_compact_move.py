"""The compact-move fast path accepts a subset of what the full parser accepts, identically."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.errors import ProtocolError
from protocol.messages import (
    CLIENT_MESSAGE_TYPES,
    MAX_BOT_MESSAGE_BYTES,
    ErrorCode,
    Move,
    parse_client_message,
)
from protocol.messages.codec import parse_frame
from protocol.messages.codes import MAX_MOVE, MAX_PLY
from protocol.messages.compact_move import parse_compact_move


def full_parse(frame: str) -> Move | ProtocolError:
    """What the general parser makes of ``frame`` (its error, if it refuses it)."""
    try:
        parsed = parse_frame(frame, MAX_BOT_MESSAGE_BYTES, CLIENT_MESSAGE_TYPES)
    except ProtocolError as exc:
        return exc
    assert isinstance(parsed, Move)
    return parsed


# Ids that are valid half of the time; otherwise near them: quotes, backslashes,
# spaces, non-ASCII, empty or too long.
near_ids = st.one_of(
    st.from_regex(r"[A-Za-z0-9_.:-]{1,64}", fullmatch=True),
    st.text(alphabet=st.sampled_from('aZ9_.:-~!#[]{}" \\/\u00e9\u2028'), max_size=70),
)
near_ints = st.one_of(
    st.integers(min_value=-3, max_value=MAX_PLY + 3),
    st.sampled_from([MAX_PLY, MAX_PLY + 1, MAX_MOVE, MAX_MOVE + 1, 10**12]),
    st.integers(min_value=-3, max_value=MAX_MOVE + 3),
)


def compact(match_id: str, ply: int, move: int, request_id: str | None) -> str:
    """A move as ``Move.to_json`` would write it, whatever the values."""
    text = f'{{"type":"move","match_id":{json.dumps(match_id)},"ply":{ply},"move":{move}'
    if request_id is not None:
        text += f',"id":{json.dumps(request_id)}'
    return text + "}"


@settings(max_examples=1000)
@given(near_ids, near_ints, near_ints, st.none() | near_ids)
def test_the_fast_path_agrees_with_the_full_parser_or_declines(
    match_id: str, ply: int, move: int, request_id: str | None
) -> None:
    frame = compact(match_id, ply, move, request_id)
    fast = parse_compact_move(frame)
    full = full_parse(frame)
    if fast is not None:
        assert fast == full
    elif not isinstance(full, ProtocolError):
        # Declining is only right for what the compact form cannot hold.
        assert request_id is not None and any(c in request_id for c in '"\\')
    # parse_client_message is whichever applies: same message, or the same error.
    try:
        assert parse_client_message(frame) == full
    except ProtocolError as exc:
        assert isinstance(full, ProtocolError)
        assert (exc.code, exc.message, exc.ref) == (full.code, full.message, full.ref)


@given(
    st.from_regex(r"[A-Za-z0-9_.:-]{1,64}", fullmatch=True),
    st.integers(min_value=0, max_value=MAX_PLY),
    st.integers(min_value=0, max_value=MAX_MOVE),
    st.none() | st.from_regex(r"[!#-\[\]-~]{1,64}", fullmatch=True),
)
def test_every_valid_move_as_to_json_writes_it_takes_the_fast_path(
    match_id: str, ply: int, move: int, request_id: str | None
) -> None:
    message = Move(match_id=match_id, ply=ply, move=move, id=request_id)
    assert parse_compact_move(message.to_json()) == message


@settings(max_examples=1000)
@given(st.text(max_size=120))
def test_arbitrary_text_is_never_misread(text: str) -> None:
    fast = parse_compact_move(text)
    if fast is not None:
        assert fast == full_parse(text)


def test_other_spellings_of_a_valid_move_go_the_long_way_to_the_same_message() -> None:
    expected = Move(match_id="m7", ply=3, move=2, id="r1")
    for frame in [
        '{"type": "move", "match_id": "m7", "ply": 3, "move": 2, "id": "r1"}',
        '{"match_id":"m7","type":"move","ply":3,"move":2,"id":"r1"}',
        '{"type":"move","match_id":"m\\u0037","ply":3,"move":2,"id":"r1"}',
        '{"type":"move","match_id":"m7","ply":3,"move":2,"analysis":null,"id":"r1"}',
    ]:
        assert parse_compact_move(frame) is None
        assert parse_client_message(frame) == expected


def test_near_misses_get_the_full_parsers_errors() -> None:
    cases = {
        '{"type":"move","match_id":"m7","ply":3,"move":2,"id":"r1"} ': None,  # valid JSON
        '{"type":"move","match_id":"m7","ply":1025,"move":2}': ErrorCode.BAD_VALUE,
        '{"type":"move","match_id":"m7","ply":3,"move":2147483648}': ErrorCode.BAD_VALUE,
        '{"type":"move","match_id":"m7","ply":03,"move":2}': ErrorCode.BAD_JSON,
        '{"type":"move","match_id":"m7","ply":3,"move":2,"move":2}': ErrorCode.BAD_JSON,
        '{"type":"move","match_id":"","ply":3,"move":2}': ErrorCode.BAD_VALUE,
    }
    for frame, code in cases.items():
        assert parse_compact_move(frame) is None
        if code is None:
            assert parse_client_message(frame) == Move(match_id="m7", ply=3, move=2, id="r1")
            continue
        try:
            parse_client_message(frame)
        except ProtocolError as exc:
            assert exc.code == code
        else:
            raise AssertionError(f"{frame!r} was accepted")


def test_a_compact_move_over_the_size_limit_is_still_too_large() -> None:
    frame = Move(match_id="m7", ply=3, move=2).to_json()
    try:
        parse_client_message(frame, max_bytes=len(frame) - 1)
    except ProtocolError as exc:
        assert exc.code == ErrorCode.TOO_LARGE
    else:
        raise AssertionError("accepted over the limit")


REPORT = (
    '{"simulations":900,"sims_per_s":45000.5,"value":0.25,"moves":[{"move":3,"visits":600,'
    '"value":0.3},{"move":2,"visits":300}],"pv":[3,3],"tree":[{"move":3,"visits":600,'
    '"value":0.3},{"move":3,"visits":400,"value":-0.2,"parent":0}]}'
)


def test_a_compact_move_with_an_analysis_takes_the_fast_path_and_keeps_its_text() -> None:
    for suffix in ("}", ',"id":"r1"}'):
        frame = f'{{"type":"move","match_id":"m7","ply":3,"move":2,"analysis":{REPORT}{suffix}'
        fast = parse_compact_move(frame)
        assert fast is not None and fast == full_parse(frame)
        assert fast.analysis is not None and fast.analysis.text == REPORT
        # What Move.to_json writes (analysis, then id) is this same compact form.
        assert parse_compact_move(fast.to_json()) == fast


def test_reports_the_fast_path_must_not_take_go_the_long_way() -> None:
    head = '{"type":"move","match_id":"m7","ply":3,"move":2,"analysis":'
    repeated = REPORT.replace('{"move":2,"visits":300}', '{"move":2,"visits":300,"move":4}')
    cases = {
        repeated: ErrorCode.BAD_JSON,  # the plain decoder would keep the last "move"
        REPORT.replace('"pv"', '"who"'): ErrorCode.UNKNOWN_FIELD,
        REPORT.replace("0.25", "NaN"): ErrorCode.BAD_JSON,
        REPORT.replace('"parent":0', '"parent":1'): ErrorCode.BAD_VALUE,
        REPORT[:-1] + ',"depth":' + "[" * 40 + "]" * 40 + "}": ErrorCode.BAD_JSON,
        REPORT + ',"id":"r1"},"id":"r2"': ErrorCode.BAD_JSON,
    }
    for report, code in cases.items():
        frame = f"{head}{report}}}"
        assert parse_compact_move(frame) is None, report
        try:
            parse_client_message(frame)
        except ProtocolError as exc:
            assert exc.code == code, report
        else:
            raise AssertionError(f"{report!r} was accepted")


def test_a_report_with_whitespace_or_escapes_is_kept_parsed_not_as_text() -> None:
    head = '{"type":"move","match_id":"m7","ply":3,"move":2,"analysis":'
    for report in (REPORT.replace(",", ", "), REPORT.replace('"pv"', '"p\\u0076"')):
        fast = parse_compact_move(f"{head}{report}}}")
        assert fast is not None and fast.analysis is not None and fast.analysis.text is None
        assert fast == full_parse(f"{head}{REPORT}}}")
