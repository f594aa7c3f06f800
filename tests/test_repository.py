"""Repository hygiene: the licence is shipped and named, and what ``arena demo`` writes
beside its database never shows up as a change to commit."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from arena.cli.demo import LOG_FILE, TOKENS_FILE
from arena.store.engine import DEFAULT_URL
from arena.store.journal import default_journal_path

ROOT = Path(__file__).resolve().parents[1]


def test_the_licence_file_is_the_one_pyproject_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text


def test_files_the_demo_writes_are_ignored_by_git() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    database = Path(make_url(DEFAULT_URL).database or "arena.db").name
    journal = default_journal_path(make_url(DEFAULT_URL)).name
    written = [TOKENS_FILE, LOG_FILE, database, f"{database}-wal", f"{database}-shm", journal]
    for directory in ("", "some/dir/"):
        paths = [f"{directory}{name}" for name in written]
        done = subprocess.run(
            ["git", "check-ignore", "--no-index", *paths],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        assert sorted(done.stdout.split()) == sorted(paths), done
    tracked = subprocess.run(
        ["git", "ls-files", "--", *written], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert tracked.stdout == ""
