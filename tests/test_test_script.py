"""``./test.sh``, the one test entry point (``.ci/run`` calls it): what it does where a
program is missing and apt-get is not allowed, and the tests that then skip with a reason."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("bash", "env", "id", "dirname", "python3")
"""All the commands ``test.sh --check`` needs: no apt program, no sudo."""


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can read (pytest's own tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="arena-test-sh-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path)


def bare_path(tmp_path: Path) -> str:
    """A PATH directory with only ``TOOLS``: chromium, node, npm, openssl, g++ and both forms of
    Docker Compose are missing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool, path="/usr/bin:/bin")  # the system's, readable by all
        assert found is not None, tool
        (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def check_as_nobody(tmp_path: Path, ci: bool) -> subprocess.CompletedProcess[str]:
    """``test.sh --check`` as the unprivileged user ``nobody``, with no standard input."""
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("needs root and runuser to act as an unprivileged user")
    env = {"PATH": bare_path(tmp_path), "HOME": str(tmp_path)}
    if ci:
        env["CI"] = "true"
    # A copy nobody can read: the checkout may sit in a directory private to root (mktemp -d).
    script = tmp_path / "test.sh"
    shutil.copyfile(ROOT / "test.sh", script)
    script.chmod(0o755)
    return subprocess.run(
        ["runuser", "-u", "nobody", "--", "env", "-i", *(f"{k}={v}" for k, v in env.items()),
         "bash", str(script), "--check"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_without_apt_rights_it_says_what_is_missing_and_goes_on(shared_dir: Path) -> None:
    done = check_as_nobody(shared_dir, ci=False)
    assert done.returncode == 0, done.stderr
    missing = "chromium nodejs npm openssl g++ docker-compose"
    assert f"missing {missing}, and installing needs root" in done.stderr
    assert f"sudo apt-get install {missing}" in done.stderr
    assert "skipped, each with its reason" in done.stderr


def test_in_ci_a_program_it_cannot_install_is_an_error(shared_dir: Path) -> None:
    done = check_as_nobody(shared_dir, ci=True)
    assert done.returncode == 1
    assert "CI=true: refusing to pass by skipping" in done.stderr


def test_ci_runs_the_same_script() -> None:
    assert "exec bash ./test.sh" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "./test.sh" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_tests_needing_a_missing_program_skip_with_the_reason(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_CHROMIUM"}
    env["PATH"] = bare_path(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
         "tests/viewer/test_viewer_labels.py", "tests/examples/test_js_bot.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Chromium is not installed" in done.stdout
    assert "Node.js is not installed" in done.stdout
    assert " passed" not in done.stdout.splitlines()[-1]  # everything there skipped
