"""A search report checked in its text, its objects built only when something reads them.

A bot may send an ``analysis`` with every move, and the server checks each
one. Decoding a built-in MCTS's report (7 candidates and a 24-node tree,
1.5 KB) and checking its values (``search.fast_analysis``) took about 55 us
and made some 60 objects, which the collector then scanned and the server
freed again: with a report on every move the server spent about 130 us more
per move (bench.load ``--analysis tree``), and nothing on the server reads
those objects unless someone watches the match. The store keeps the text.

``checked_report`` checks a report in the compact form every writer of this
package makes (``Analysis.to_json``: fields in their declared order, no
whitespace, no escapes, numbers no longer than they need be) with one
regular expression, plus one pass over the tree's parents. Numbers are
held to fewer digits than the limits allow (a move below 10^9, a count
below 10^15, a depth below 1000, a float of at most 15 digits before its
point, 24 after it and a two-digit exponent), so every text it accepts is
valid; a valid report it does not accept (another key order, a longer
number) goes to ``fast_analysis`` as before. What it accepts becomes a
``CheckedAnalysis``: an ``Analysis`` holding the text and the number of
candidate moves, whose fields are decoded from the text the first time one
is read (a spectator's feed, ``repr``, an equality), by the same
``fast_analysis``. A test holds the two paths to the same results.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from protocol.messages.codes import MAX_ANALYSIS_MOVES
from protocol.messages.search import MAX_TREE_NODES, fast_analysis
from protocol.messages.values import Analysis, MoveStat

# Possessive quantifiers: a number's digits never need giving back, and not recording
# where they could be makes the whole match about a third faster.
_MOVE = r"(?:[1-9][0-9]{0,8}+|0)"
_COUNT = r"(?:[1-9][0-9]{0,14}+|0)"
_DEPTH = r"(?:[1-9][0-9]{0,2}+|0)"
_POSITIVE = r"(?:[1-9][0-9]{0,14}+|0)(?:\.[0-9]{1,24}+)?+(?:[eE][-+]?[0-9]{1,2}+)?+"
_NUMBER = rf"-?{_POSITIVE}"
_STAT = rf'\{{"move":{_MOVE},"visits":{_COUNT}(?:,"value":(?:{_NUMBER}|null))?\}}'
_NODE = (
    rf'\{{"move":{_MOVE},"visits":{_COUNT}(?:,"value":(?:{_NUMBER}|null))?'
    r'(?:,"parent":(?:0|[1-9][0-9]?|null))?\}'
)


def _member(key: str, value: str) -> str:
    """One optional ``"key":value,`` (the members are matched each with a comma after)."""
    return f'(?:"{key}":{value},)?'


def _list(item: str, most: int) -> str:
    return rf"\[(?:{item}(?:,{item}){{0,{most - 1}}})?\]"


_REPORT = re.compile(
    _member("simulations", rf"(?:{_COUNT}|null)")
    + _member("sims_per_s", rf"(?:{_POSITIVE}|null)")
    + _member("value", rf"(?:{_NUMBER}|null)")
    + _member("depth", rf"(?:{_DEPTH}|null)")
    + _member("moves", rf"(?P<moves>{_list(_STAT, MAX_ANALYSIS_MOVES)})")
    + _member("nodes", rf"(?:{_COUNT}|null)")
    + _member("nodes_per_s", rf"(?:{_POSITIVE}|null)")
    + _member("pv", rf"(?:{_list(_MOVE, MAX_ANALYSIS_MOVES)}|null)")
    + _member("tree", rf"(?:(?P<tree>{_list(_NODE, MAX_TREE_NODES)})|null)")
)
"""A report's members in ``Analysis``'s field order, each optional and followed by a comma."""

_FIELDS = tuple(field.name for field in dataclasses.fields(Analysis) if field.name != "text")
_SETTERS = {name: Analysis.__dict__[name].__set__ for name in (*_FIELDS, "text")}


def checked_report(text: str) -> CheckedAnalysis | None:
    """The report ``text`` holds, if ``text`` is a valid report in the compact form, else
    None (check it the general way)."""
    if len(text) < 2 or text[0] != "{" or text[-1] != "}":
        return None
    inner = text[1:-1]
    found = _REPORT.fullmatch(inner + "," if inner else "")
    if found is None:
        return None
    tree = found.group("tree")
    if tree is not None:
        # The form is known now: a node opens with "{" and a parent is a node's last member,
        # so the text before each "parent" tells whose it is.
        pieces = tree.split('"parent":')
        index = pieces[0].count("{") - 1
        for piece in pieces[1:]:
            parent = piece[: piece.index("}")]
            if parent != "null" and int(parent) >= index:
                return None  # the full parser words it
            index += piece.count("{")
    moves = found.group("moves")
    return CheckedAnalysis.of_text(text, moves.count("{") if moves else 0)


class CheckedAnalysis(Analysis):
    """An ``Analysis`` known valid from its text (``checked_report``), its fields decoded from
    that text the first time one is read. Equal to the ``Analysis`` of the same fields."""

    __slots__ = ("_candidates",)

    @classmethod
    def of_text(cls, text: str, candidates: int) -> CheckedAnalysis:
        """The report ``text`` holds, with ``candidates`` moves: only ``checked_report``
        knows that ``text`` is valid. (Built with every field, as ``dataclasses.replace``
        builds one, it is an ordinary ``Analysis``.)"""
        report = object.__new__(cls)
        _SETTERS["text"](report, text)
        object.__setattr__(report, "_candidates", candidates)
        return report

    @property
    def candidate_count(self) -> int:
        """``len(self.moves)``, counted when the text was checked."""
        try:
            count: int = object.__getattribute__(self, "_candidates")
        except AttributeError:  # built with its fields (``dataclasses.replace``)
            return len(self.moves)
        return count

    def __getattr__(self, name: str) -> Any:
        # Called only for a field not decoded yet (an unset slot): decode them all.
        if name not in _SETTERS:
            raise AttributeError(name)
        text: str = object.__getattribute__(self, "text")  # set by ``of_text``
        full = fast_analysis(json.loads(text), Analysis, MoveStat)
        if full is None:  # checked_report accepted what fast_analysis refuses: a bug
            raise AssertionError(f"a checked report is not valid: {text!r}")
        for field in _FIELDS:
            _SETTERS[field](self, getattr(full, field))
        return getattr(self, name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Analysis):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _FIELDS)

    __hash__ = Analysis.__hash__

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as a plain Analysis (the fields are decoded, the text kept).
        return (Analysis, tuple(getattr(self, name) for name in (*_FIELDS, "text")))
