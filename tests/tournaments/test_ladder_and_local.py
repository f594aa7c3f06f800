"""``arena ladder`` on a tiny configuration (real processes), its plot, and the local runner's
spec handling."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from arena.cli.local_tournament import bot_name, check_spec
from arena.errors import TournamentError
from arena.tournaments.ladder import Rung, ladder_specs, svg_plot

SVG = "{http://www.w3.org/2000/svg}"


def test_a_tiny_ladder_runs_and_writes_its_plot_table_and_status(tmp_path: Path) -> None:
    out = tmp_path / "report"
    command = [
        sys.executable, "-m", "arena", "ladder", "--db", str(tmp_path / "ladder.db"),
        "--game", "tictactoe", "--sims", "40,20", "--anchors", "random,greedy",
        "--games-per-pair", "2", "--move-ms", "2000", "--quiet",
    ]  # fmt: skip
    done = subprocess.run(
        [*command, "--out", str(out)], capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert f"wrote {out / 'ladder.svg'}" in done.stdout
    table = (out / "ladder.md").read_text()
    assert "| mcts-sims20-workers1 | 20 | +0 | 0 |" in table  # the reference, pinned to 0
    for bot, sims in (("mcts-sims20-workers1", 20), ("mcts-sims40-workers1", 40)):
        assert f"| {bot} | {sims} |" in table
    assert "arena ladder --db" in table  # how to make it again
    # 4 seats, each playing the next two: 5 pairs of bots, 2 games each.
    assert "10 games" in table
    # Each meeting's own games: one pair each, too few for a number.
    assert table.count("| 1 | too few games |  |") == 5
    tree = ET.parse(out / "ladder.svg")
    circles = tree.getroot().findall(f"{SVG}circle")
    assert len(circles) == 2  # one point per budget; the anchors are lines
    assert "ladder.json" in done.stdout
    # The report again from the stored games, with another reference: nothing is played.
    again = subprocess.run(
        [*command, "--out", str(tmp_path / "again"), "--report-only", "--reference", "greedy"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    retold = (tmp_path / "again" / "ladder.md").read_text()
    assert "| greedy | - | +0 | 0 |" in retold and "10 games" in retold


def test_the_plot_puts_budgets_left_to_right_and_higher_elo_higher() -> None:
    lines = [
        Rung("random", 0.0, 0.0, 10, None),
        Rung("mcts-50", 120.0, 40.0, 10, 50),
        Rung("mcts-100", 250.0, 40.0, 10, 100),
        Rung("mcts-200", 310.0, 60.0, 10, 200),
    ]
    root = ET.fromstring(svg_plot(lines, "test", "Elo"))
    points = [
        (float(c.get("cx", "nan")), float(c.get("cy", "nan"))) for c in root.iter(f"{SVG}circle")
    ]
    assert len(points) == 3
    assert points == sorted(points, key=lambda p: p[0])  # x grows with the budget
    assert [y for _, y in points] == sorted((y for _, y in points), reverse=True)
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert "random +0" in texts


def test_ladder_specs_put_the_anchors_first_and_budgets_in_order() -> None:
    assert ladder_specs([400, 100], ["random", "alphabeta"], 1000) == [
        "random", "alphabeta:time_ms=100", "mcts:sims=100,workers=1", "mcts:sims=400,workers=1",
    ]  # fmt: skip


def test_bot_names_come_from_specs() -> None:
    assert bot_name("mcts:sims=200") == "mcts-sims200"
    assert bot_name("alphabeta:time_ms=50") == "alphabeta-time_ms50"
    assert bot_name("random") == "random"
    assert bot_name("mcts:c=1.4") == "mcts-c1_4"  # no dots: names are letters, digits, - and _
    long = bot_name("mcts:sims=200000,workers=2,exploration=1.41421,seed=12345")
    assert len(long) <= 32 and long.startswith("mcts-sims200000")


def test_bad_specs_are_refused_before_anything_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TournamentError, match="unknown strategy 'alphazero'"):
        check_spec("alphazero", "connect4")
    with pytest.raises(TournamentError, match="unknown option 'depth'"):
        check_spec("mcts:depth=3", "connect4")
    with pytest.raises(TournamentError, match="option 'sims' needs an integer"):
        check_spec("mcts:sims=many", "connect4")
    check_spec("mcts:sims=200,engine=kernel", "uttt")
    # A game a bot cannot play: a compiled-kernel search for a game without a kernel.
    import bots.kernels

    monkeypatch.setattr(bots.kernels, "KERNEL_GAMES", ("connect4",))
    with pytest.raises(TournamentError, match="no compiled kernel plays uttt"):
        check_spec("mcts:sims=200,engine=kernel", "uttt")
