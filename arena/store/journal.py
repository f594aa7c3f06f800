"""The recovery journal: what a closing store could not commit, replayed by the next open.

Where: ``<sqlite file>.recovery.jsonl`` next to a SQLite database; for
PostgreSQL ``$XDG_STATE_HOME/arena/<host>_<port>_<database>.recovery.jsonl``
(``~/.local/state`` when unset), unless a path is configured. If that path
cannot be written (its disk is full too), the journal goes to the fallback
``<temp dir>/arena-recovery/<hash of the URL>.recovery.jsonl``; ``Store.open``
replays both. A serving node also reserves room for its journal when it
claims the database (``<journal>.reserve``, ``DEFAULT_RESERVE_BYTES``),
and frees it just before writing one, so a full disk still takes it.

Format: UTF-8 JSON Lines. Each store that closes with writes left appends one
session: a header line, then its records in the order they must be written::

    {"journal": "arena-recovery", "version": 1, "written_at": "<ISO 8601>",
     "database": "<URL, password masked>", "node": "<node id or null>",
     "matches": 1, "moves": 2, "ends": 1}
    {"match": {<matches row; started_at/ended_at as ISO 8601>}}
    {"moves": "<match id>",
     "rows": [[ply, player, move, think_ms, rtt_ms, played_at, analysis], ...]}
    {"end": "<match id>", "values": {<the matches columns the end sets>}}

(``played_at`` in seconds since the epoch; ``analysis`` the stored JSON text or null.)
A journal file is replaced atomically (written to a temporary file, fsynced, renamed, directory
fsynced) under an exclusive lock on its directory, so concurrent closers
merge rather than overwrite, and a replay deletes only the content it
replayed. Replay is idempotent (``BatchSql``): match rows and moves are
inserted if absent, ends applied only to matches still live.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker

from arena.errors import RecoveryJournalError
from arena.ratings import RatingModel
from arena.store.batch_sql import BatchSql, PlainBatch
from arena.store.health import Pending, describe_failure
from arena.store.movebuffer import DEFAULT_MAX_ANALYSIS_BYTES, DEFAULT_MAX_PENDING

log = logging.getLogger("arena.store")

VERSION = 1
JOURNAL_ROW_BYTES = 128
"""Journal bytes per pending move without its report, rounded up (a row is some 45 bytes;
the largest numbers the store accepts make it about 70)."""

JOURNAL_ANALYSIS_FACTOR = 2
"""Journal bytes per character of report text: the text is a JSON string in the row, and
escaping at most doubles it (a report is ASCII JSON; only quotes and backslashes grow)."""

DEFAULT_RESERVE_BYTES = (
    DEFAULT_MAX_PENDING * JOURNAL_ROW_BYTES + JOURNAL_ANALYSIS_FACTOR * DEFAULT_MAX_ANALYSIS_BYTES
)
"""Room kept for the journal: the most moves the store holds unwritten, and the most report
text they can carry (``DEFAULT_MAX_ANALYSIS_BYTES``): 140.2 MiB
(docs/operations.md, "A full disk at shutdown")."""

_DATETIMES = ("started_at", "ended_at")


def default_journal_path(url: URL) -> Path:
    """Where the journal of the database at ``url`` goes unless configured."""
    return database_side_path(url, ".recovery.jsonl")


def database_side_path(url: URL, suffix: str) -> Path:
    """A file kept with the database at ``url``: ``<SQLite file><suffix>``, or for another
    database ``$XDG_STATE_HOME/arena/<host>_<port>_<database><suffix>``."""
    if url.get_backend_name() == "sqlite":
        return Path(f"{Path(url.database or 'arena.db').resolve()}{suffix}")
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    name = f"{url.host or 'localhost'}_{url.port or 5432}_{url.database or ''}"
    return Path(state) / "arena" / f"{name}{suffix}"


def fallback_journal_path(url: URL) -> Path:
    """Where the journal goes when its own path cannot be written: the temp directory."""
    key = url.set(password=None).render_as_string(hide_password=True)
    if url.get_backend_name() == "sqlite":
        key = str(Path(url.database or "").resolve())
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / "arena-recovery" / f"{digest}.recovery.jsonl"


@dataclass(frozen=True, slots=True)
class Loaded:
    """One journal file read for replay, and how to tell whether it changed since."""

    path: Path
    batches: list[PlainBatch]
    stamp: tuple[int, int, int]


def _stamp(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """An exclusive lock on ``directory`` (between processes; Linux and BSD ``flock``)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _encode(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def _row(values: dict[str, Any]) -> dict[str, Any]:
    return {key: _encode(value) for key, value in values.items()}


def _unrow(values: dict[str, Any]) -> dict[str, Any]:
    return {
        key: datetime.fromisoformat(value) if key in _DATETIMES and value is not None else value
        for key, value in values.items()
    }


def batch_counts(batch: PlainBatch) -> Pending:
    """How many new matches, moves and match ends ``batch`` holds."""
    moves = sum(len(rows) for _, rows in batch.moves)
    return Pending(len(batch.matches), moves, len(batch.finishes))


def encode_session(batch: PlainBatch, database: str, node: str | None) -> bytes:
    """One journal session for ``batch``: a header line and one line per record."""
    counts = batch_counts(batch)
    header = {
        "journal": "arena-recovery",
        "version": VERSION,
        "written_at": datetime.now(UTC).isoformat(),
        "database": database,
        "node": node,
        "matches": counts.matches,
        "moves": counts.moves,
        "ends": counts.ends,
    }
    records: list[dict[str, Any]] = [header]
    records += [{"match": _row(row)} for row in batch.matches]
    records += [{"moves": match_id, "rows": rows} for match_id, rows in batch.moves]
    records += [{"end": match_id, "values": _row(values)} for match_id, values in batch.finishes]
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)


def decode(data: bytes) -> list[PlainBatch]:
    """The sessions of a journal file, in order; ``ValueError`` names a bad line."""
    batches: list[PlainBatch] = []
    for number, line in enumerate(data.decode().splitlines(), 1):
        try:
            record = json.loads(line)
            if "journal" in record:
                if record["journal"] != "arena-recovery" or record["version"] != VERSION:
                    raise ValueError(f"unknown journal format {record!r}")
                batches.append(PlainBatch())
            elif not batches:
                raise ValueError("a record before any header")
            elif "match" in record:
                batches[-1].matches.append(_unrow(record["match"]))
            elif "moves" in record:
                # A row written before moves kept their analysis has six items.
                rows = [
                    (r[0], r[1], r[2], r[3], r[4], float(r[5]), r[6] if len(r) > 6 else None)
                    for r in record["rows"]
                ]
                batches[-1].moves.append((record["moves"], rows))
            elif "end" in record:
                batches[-1].finishes.append((record["end"], _unrow(record["values"])))
            else:
                raise ValueError("an unknown record")
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise ValueError(f"line {number}: {error}") from error
    return batches


def _write_atomically(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data``: temporary file, fsync, rename, directory fsync."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    _fsync_dir(path.parent)


class RecoveryJournal:
    """The journal files of one database: its own path and the fallback."""

    def __init__(self, path: Path, fallback: Path, database: str) -> None:
        self.path = path
        self.fallback = fallback
        self.database = database
        """The database URL (password masked), for the journal's header."""

    @property
    def reservation(self) -> Path:
        """The file that keeps room for the journal on its disk."""
        return self.path.with_name(self.path.name + ".reserve")

    def reserve(self, size: int) -> bool:
        """Allocate ``size`` bytes for the journal on its disk; False (logged) if it cannot."""
        if size <= 0:
            return False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.reservation, os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                os.posix_fallocate(fd, 0, size)
            finally:
                os.close(fd)
        except OSError as error:
            log.warning(
                "cannot reserve %d bytes for the recovery journal at %s (%s); if the disk fills"
                " up, the journal may have to go to %s",
                size,
                self.reservation,
                error.strerror or error,
                self.fallback,
            )
            self.release_reservation()
            return False
        return True

    def release_reservation(self) -> None:
        """Give the reserved room back to the disk."""
        with contextlib.suppress(FileNotFoundError):
            self.reservation.unlink()

    def write(self, session: bytes) -> Path:
        """Append ``session`` to the journal (own path, else fallback); returns the file written.

        Raises ``OSError`` (the last one) when neither place can be written.
        """
        self.release_reservation()
        failure: OSError | None = None
        for path in (self.path, self.fallback):
            try:
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                with _locked(path.parent):
                    old = path.read_bytes() if path.exists() else b""
                    _write_atomically(path, old + session)
                return path
            except OSError as error:
                log.error("cannot write the recovery journal %s: %s", path, error)
                failure = error
        assert failure is not None
        raise failure

    def load(self) -> list[Loaded]:
        """The journal files that exist, decoded; ``ValueError`` names a file and line."""
        found = []
        for path in (self.path, self.fallback):
            with contextlib.suppress(FileNotFoundError):
                with _locked(path.parent):
                    data, stamp = path.read_bytes(), _stamp(path)
                try:
                    found.append(Loaded(path, decode(data), stamp))
                except ValueError as error:
                    raise ValueError(f"{path}: {error}") from error
        return found

    def remove(self, loaded: Loaded) -> bool:
        """Delete a replayed file, unless it changed since it was read; True when deleted."""
        with _locked(loaded.path.parent):
            try:
                if _stamp(loaded.path) != loaded.stamp:
                    return False
                loaded.path.unlink()
            except OSError as error:
                if error.errno != errno.ENOENT:
                    raise
            _fsync_dir(loaded.path.parent)
        return True


async def replay(journal: RecoveryJournal, engine: AsyncEngine, rating_model: RatingModel) -> None:
    """Commit every journal file's content, then delete the file; raises ``RecoveryJournalError``.

    Each session commits in its own transaction; a file is deleted only once
    all of its sessions have committed (a failure leaves it whole, and a
    second replay of what did commit changes nothing).
    """
    sql = BatchSql(engine.dialect.name, rating_model)
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    while True:
        try:
            files = await asyncio.to_thread(journal.load)
        except (OSError, ValueError) as error:
            raise RecoveryJournalError(str(journal.path), str(error)) from error
        if not files:
            return
        for loaded in files:
            skipped = 0
            try:
                for batch in loaded.batches:
                    async with sessions() as session, session.begin():
                        outcomes = await session.run_sync(sql.write, batch)
                    skipped += sum(isinstance(outcome, Exception) for _, outcome in outcomes)
                removed = await asyncio.to_thread(journal.remove, loaded)
            except Exception as error:
                raise RecoveryJournalError(str(loaded.path), describe_failure(error)) from error
            total = Pending()
            for batch in loaded.batches:
                total += batch_counts(batch)
            log.warning(
                "replayed the recovery journal %s: %s (%d ends skipped: their match was"
                " already over)",
                loaded.path,
                total,
                skipped,
            )
            if not removed:
                break  # it grew meanwhile: read it again (what was replayed changes nothing)
        else:
            return


async def save_batch(journal: RecoveryJournal, batch: PlainBatch, node: str | None) -> str:
    """Write ``batch`` to the journal (logged); returns where it went, for its callers' errors."""
    counts = batch_counts(batch)
    data = encode_session(batch, journal.database, node)
    try:
        path = await asyncio.to_thread(journal.write, data)
    except OSError as error:
        log.critical(
            "LOST %s: neither %s nor %s could be written (%s)",
            counts,
            journal.path,
            journal.fallback,
            error,
        )
        return "the recovery journal could not be written either (see the log)"
    log.error(
        "the database failed: saved %s to the recovery journal %s; the next start on this"
        " database commits them",
        counts,
        path,
    )
    return f"it is saved in the recovery journal {path}"
