"""``bots list`` as a person reads it: plain text, whole sentences, every strategy."""

from __future__ import annotations

import subprocess
import sys

from bots.cli import plain_summary
from bots.strategy import STRATEGIES


def test_bots_list_is_plain_text_with_every_strategy() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bots.cli", "list"], capture_output=True, text=True, check=True
    )
    lines = done.stdout.splitlines()
    assert all(len(line) <= 88 for line in lines)
    assert "`" not in done.stdout and ":class:" not in done.stdout
    starts = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert starts == list(STRATEGIES)
    # Each summary is a whole first paragraph: it ends a sentence before the options.
    for index, line in enumerate(lines):
        if line.lstrip().startswith("options:"):
            assert lines[index - 1].endswith("."), lines[index - 1]


def test_plain_summary_drops_markup_and_keeps_the_first_paragraph() -> None:
    doc = """Search within ``time_ms`` using :class:`Pool`
    and `depth`.

    Details that are not shown.
    """
    assert plain_summary(doc) == "Search within time_ms using Pool and depth."
    assert plain_summary(None) == ""
