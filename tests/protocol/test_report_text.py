"""Reports checked in their text (``report_text``): a subset of the valid reports, read alike."""

import dataclasses
import json
import pickle
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from wire_samples import WIRE_SETTINGS, wire_values

from protocol.errors import ProtocolError
from protocol.messages.codes import MAX_ANALYSIS_MOVES
from protocol.messages.jsontext import WRITERS
from protocol.messages.report_text import CheckedAnalysis, checked_report
from protocol.messages.search import TreeNode
from protocol.messages.spec import parse_object
from protocol.messages.values import Analysis, MoveStat

MCTS_LIKE = Analysis(
    simulations=10000,
    sims_per_s=1118022.1,
    value=0.1809,
    moves=tuple(MoveStat(m, 7000 - 900 * m, 0.2158 - 0.07 * m) for m in range(7)),
    tree=(
        TreeNode(0, 6959, 0.2158),
        TreeNode(1, 6059, -0.1),
        TreeNode(0, 2100, -0.1034, 0),
        TreeNode(3, 1700, None, 0),
        TreeNode(2, 810, 0.0521, 3),
        TreeNode(5, 90, -1.0, 1),
    ),
)
"""A report as a built-in MCTS sends one."""


def write(report: Analysis) -> str:
    """The compact text every writer of this package makes of ``report``."""
    return WRITERS[Analysis](report)


def full(text: str) -> Analysis | ProtocolError | ValueError:
    """What the general parser makes of a report's text (its error, if it refuses it)."""
    try:
        return parse_object(Analysis, json.loads(text), "analysis")
    except (ProtocolError, ValueError) as error:
        return error


def test_reports_as_this_package_writes_them_are_checked_in_their_text() -> None:
    reports = [
        MCTS_LIKE,
        Analysis(),
        Analysis(nodes=123456, nodes_per_s=2.5e6, depth=12, pv=(3, 3, 4)),
        Analysis(moves=(MoveStat(0, 0),), tree=()),
        dataclasses.replace(MCTS_LIKE, value=-0.0, sims_per_s=1e-7),
    ]
    for report in reports:
        text = write(report)
        checked = checked_report(text)
        assert isinstance(checked, CheckedAnalysis), text
        assert checked.text == text and checked.candidate_count == len(report.moves)
        assert checked == report and report == checked and hash(checked) == hash(report)
        assert WRITERS[type(checked)](checked) == text == WRITERS[Analysis](report)


def test_a_checked_report_reads_as_the_analysis_it_holds() -> None:
    text = write(MCTS_LIKE)
    checked = checked_report(text)
    assert checked is not None
    assert checked.tree is not None and checked.tree[4] == TreeNode(2, 810, 0.0521, 3)
    assert repr(checked).endswith(repr(MCTS_LIKE)[len("Analysis") :])
    copy = pickle.loads(pickle.dumps(checked))
    assert type(copy) is Analysis and copy == MCTS_LIKE and copy.text == text
    trimmed = dataclasses.replace(checked, moves=checked.moves[:2], text=None)
    assert trimmed == dataclasses.replace(MCTS_LIKE, moves=MCTS_LIKE.moves[:2])
    assert trimmed.candidate_count == 2
    assert checked != dataclasses.replace(MCTS_LIKE, value=0.5)


def test_valid_reports_in_another_form_go_the_general_way() -> None:
    text = write(MCTS_LIKE)
    valid_elsewhere = [
        text.replace('"simulations":10000,"sims_per_s":1118022.1', '"sims_per_s":1,"nodes":1'),
        text.replace(",", ", "),
        text.replace('"value":0.1809', '"value":1.809e-001'),
        text.replace('"simulations":10000', '"simulations":9007199254740991'),  # 16 digits
        text.replace('"value":0.1809', '"value":0.' + "1" * 25),
    ]
    for other in valid_elsewhere:
        assert checked_report(other) is None, other
        assert isinstance(full(other), Analysis), other


def test_invalid_reports_are_never_checked() -> None:
    text = write(MCTS_LIKE)
    stats = ",".join(f'{{"move":{m},"visits":1}}' for m in range(MAX_ANALYSIS_MOVES + 1))
    invalid = [
        text.replace('"parent":3', '"parent":4'),  # not an earlier node
        text.replace('"parent":3', '"parent":5'),
        text.replace('"simulations":10000', '"simulations":010000'),
        text.replace('"sims_per_s":1118022.1', '"sims_per_s":-1118022.1'),
        text.replace('"value":0.1809', '"value":NaN'),
        text.replace('"value":0.1809', '"value":1e999'),
        text.replace('"moves":[', '"moves":null,"x":['),
        text[:-1],
        "{" + text,
        f'{{"moves":[{stats}]}}',
        '{"moves":[{"move":1,"visits":1,"move":2}]}',
    ]
    for bad in invalid:
        assert checked_report(bad) is None, bad
    assert not isinstance(full(invalid[0]), Analysis)


def _mutations(text: str, rng: random.Random) -> str:
    """``text`` with one small edit: a character dropped, doubled or replaced."""
    at = rng.randrange(len(text))
    edit = rng.choice(("drop", "double", "replace"))
    if edit == "drop":
        return text[:at] + text[at + 1 :]
    if edit == "double":
        return text[:at] + text[at] + text[at:]
    return text[:at] + rng.choice('0123456789-.,:{}[]"eEnul') + text[at + 1 :]


@settings(WIRE_SETTINGS, max_examples=400)
@given(report=wire_values(Analysis), seed=st.integers(0, 2**32 - 1), edits=st.integers(0, 3))
def test_what_is_checked_in_its_text_is_what_the_general_parser_reads(
    report: Analysis, seed: int, edits: int
) -> None:
    rng = random.Random(seed)
    text = write(report)
    for _ in range(edits):
        text = _mutations(text, rng)
    checked = checked_report(text)
    if checked is None:
        return
    general = full(text)
    assert isinstance(general, Analysis), text
    assert checked == general and checked.candidate_count == len(general.moves)
    assert WRITERS[Analysis](general) == WRITERS[type(checked)](checked)
