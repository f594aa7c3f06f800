"""A small real filesystem to fill up: a 2 MiB tmpfs (root only; tests skip where it cannot
be mounted, saying why)."""

from __future__ import annotations

import errno
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs mounted at ``tmp_path/disk``, unmounted at the end."""
    mount = tmp_path / "disk"
    mount.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.strip()}")
    try:
        yield mount
    finally:
        if subprocess.run(["umount", str(mount)], check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, name: str = "filler", leave: int = 0) -> Path:
    """Fill ``disk`` with one file, to the last byte but ``leave``; returns the file (delete
    it to free the room)."""
    spare = disk / f"{name}.spare"
    if leave:
        spare.write_bytes(b"\0" * leave)
    filler = disk / name
    with filler.open("wb", buffering=0) as out:
        for size in (1 << 16, 1 << 12, 1):
            try:
                while True:
                    out.write(b"\0" * size)
            except OSError as error:
                assert error.errno == errno.ENOSPC
    if leave:
        spare.unlink()
    return filler
