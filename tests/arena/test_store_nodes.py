"""Node ownership: one server per SQLite file, leases, and start-up clean-up of gone nodes' matches.

Other servers are real processes (``HOLDER`` below) on the same database;
"another machine" is a ``nodes`` row with a foreign scope, since the test
cannot start one. PostgreSQL cases run on the session's throwaway database.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, insert, select, update
from test_store import db_url  # noqa: F401  (a fixture: SQLite, then PostgreSQL)
from test_store_postgres import pg_url, reset  # noqa: F401  (pg_url is a fixture)

from arena.errors import LeaseLostError, NodeConflictError
from arena.store import HealthState, Store, StoreHealth
from arena.store.models import Match, Node
from arena.store.nodes import LEASE_S
from protocol.games import Termination

GAME = "connect4"
PLAYERS = ("alpha", "beta")

HOLDER = textwrap.dedent(
    """
    import asyncio, json, sys
    from arena.store import Store

    async def main(url: str, matches: int, multi: bool) -> None:
        store = await Store.open(url)
        node = await store.claim_node(allow_multi_node=multi)
        ids = [await store.create_match("connect4", ("alpha", "beta"), 1000, 0)
               for _ in range(matches)]
        print(json.dumps({"node": node, "matches": ids}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        await store.close()

    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3] == "multi"))
    """
)
"""A server holding the database: claims it, opens matches, says so, waits to be killed."""


class Holder:
    """A ``HOLDER`` process: its pid, node id and live matches."""

    def __init__(self, process: asyncio.subprocess.Process, node: str, matches: list[str]):
        self.process = process
        self.node = node
        self.matches = matches

    @property
    def pid(self) -> int:
        return self.process.pid

    async def kill(self) -> None:
        """SIGKILL, and reap it (a zombie would still look alive)."""
        self.process.kill()
        await self.process.wait()


async def start_holder(url: str, matches: int = 1, multi: bool = False) -> Holder:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        HOLDER,
        url,
        str(matches),
        "multi" if multi else "alone",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    async with asyncio.timeout(30):
        line = await process.stdout.readline()
    if not line:
        await process.wait()
        pytest.fail(f"the holder process exited with {process.returncode}")
    said = json.loads(line)
    return Holder(process, said["node"], said["matches"])


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path / 'arena.db'}"


@pytest.fixture
def postgres_url(pg_url: str) -> str:  # noqa: F811  (the imported fixture)
    reset(pg_url)
    return pg_url


@pytest.fixture
async def stores() -> AsyncIterator[list[Store]]:
    """Stores a test opens; all closed at the end."""
    opened: list[Store] = []
    yield opened
    for store in opened:
        await store.close()


async def open_store(stores: list[Store], url: str, bots: bool = False) -> Store:
    store = await Store.open(url)
    stores.append(store)
    if bots:
        for name in PLAYERS:
            await store.add_bot(name)
    return store


async def rows(store: Store, query: Any) -> list[Any]:
    async with store.engine.connect() as connection:
        return list((await connection.execute(query)).all())


async def execute(store: Store, statement: Any) -> None:
    async with store.engine.begin() as connection:
        await connection.execute(statement)


async def statuses(store: Store) -> dict[str, tuple[str, str | None]]:
    """Every match: (status, fault)."""
    found = await rows(store, select(Match.id, Match.status, Match.fault))
    return {match_id: (status, fault) for match_id, status, fault in found}


def foreign_node(node_id: str, expires_in_s: float) -> dict[str, Any]:
    """The ``nodes`` row of a server on another machine."""
    now = datetime.now(UTC)
    return {
        "id": node_id,
        "host": "elsewhere",
        "pid": 4242,
        "scope": "another-boot/pid:[1]",
        "pid_start": 7,
        "exclusive": True,
        "started_at": now - timedelta(hours=1),
        "heartbeat_at": now,
        "expires_at": now + timedelta(seconds=expires_in_s),
    }


# One server per database -----------------------------------------------------------


async def test_a_second_store_on_one_sqlite_file_is_refused_naming_the_holder(
    sqlite_url: str, stores: list[Store]
) -> None:
    first = await open_store(stores, sqlite_url)
    assert await first.claim_node("node-a") == "node-a"
    second = await open_store(stores, sqlite_url)
    with pytest.raises(NodeConflictError) as refused:
        await second.claim_node()
    error = refused.value
    assert (error.node_id, error.pid, error.host) == ("node-a", os.getpid(), socket.gethostname())
    assert re.fullmatch(
        f"database {re.escape(sqlite_url)} is in use by arena node node-a"
        rf" \(pid {os.getpid()} on {re.escape(socket.gethostname())},"
        r" since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, last heartbeat \d\d:\d\d:\d\d UTC\);"
        r" one arena server per SQLite database",
        str(error),
    )
    assert second.node_id is None
    await first.close()  # a clean release frees the database at once
    assert await second.claim_node("node-b") == "node-b"


async def test_a_server_process_holds_the_file_until_sigkill_frees_it_at_once(
    sqlite_url: str, stores: list[Store]
) -> None:
    store = await open_store(stores, sqlite_url, bots=True)
    holder = await start_holder(sqlite_url)
    try:
        with pytest.raises(NodeConflictError) as refused:
            await store.claim_node()
        assert (refused.value.node_id, refused.value.pid) == (holder.node, holder.pid)
    finally:
        await holder.kill()
    # Its lease has not expired, yet the dead pid frees the database at once.
    [(expires_at,)] = await rows(store, select(Node.expires_at).where(Node.id == holder.node))
    assert expires_at.replace(tzinfo=UTC) > datetime.now(UTC)
    node = await store.claim_node()
    assert [n for (n,) in await rows(store, select(Node.id))] == [node]
    assert await store.abort_orphans() == 1
    assert (await statuses(store))[holder.matches[0]] == ("aborted", "infrastructure")


async def test_two_claims_at_the_same_instant_one_wins(
    db_url: str,  # noqa: F811
    stores: list[Store],
) -> None:
    contenders = [await open_store(stores, db_url) for _ in range(3)]
    outcomes = await asyncio.gather(
        *(store.claim_node(f"node-{i}") for i, store in enumerate(contenders)),
        return_exceptions=True,
    )
    winners = [outcome for outcome in outcomes if isinstance(outcome, str)]
    assert len(winners) == 1, outcomes
    refusals = [outcome for outcome in outcomes if isinstance(outcome, NodeConflictError)]
    assert len(refusals) == 2 and {error.node_id for error in refusals} == set(winners)
    assert [n for (n,) in await rows(contenders[0], select(Node.id))] == winners


async def test_a_claim_is_held_from_its_commit_for_the_other_stores_of_its_process(
    db_url: str,  # noqa: F811
    stores: list[Store],
) -> None:
    # The race behind "two winners": a rival store of the same process reads the first
    # claim's row right after it commits, before the claiming coroutine has gone on. The
    # row names this very process, so unless it is already held, it looks like one of
    # the process's closed stores, and the rival would take the database over.
    first, rival = [await open_store(stores, db_url) for _ in range(2)]
    rival_outcome: list[object] = []
    write = first._write

    @asynccontextmanager
    async def write_then_rival() -> AsyncIterator[Any]:
        async with write() as session:
            yield session
        if not rival_outcome:  # the claim's own transaction only, not the heartbeats
            try:
                rival_outcome.append(await rival.claim_node("node-rival"))
            except NodeConflictError as error:
                rival_outcome.append(error)

    first._write = write_then_rival  # type: ignore[method-assign]
    node = await first.claim_node("node-first")
    assert isinstance(rival_outcome[0], NodeConflictError), rival_outcome
    assert rival_outcome[0].node_id == node == "node-first"
    assert [n for (n,) in await rows(rival, select(Node.id))] == ["node-first"]


async def test_a_lease_from_another_machine_holds_until_it_expires(
    db_url: str,  # noqa: F811
    stores: list[Store],
) -> None:
    store = await open_store(stores, db_url)
    await execute(store, insert(Node).values(foreign_node("far-away", expires_in_s=60)))
    with pytest.raises(NodeConflictError, match="arena node far-away \\(pid 4242 on elsewhere"):
        await store.claim_node()
    expired = datetime.now(UTC) - timedelta(seconds=1)
    await execute(store, update(Node).where(Node.id == "far-away").values(expires_at=expired))
    node = await store.claim_node()
    assert [n for (n,) in await rows(store, select(Node.id))] == [node]


async def test_a_stopped_server_keeps_its_lease_even_once_expired(
    sqlite_url: str, stores: list[Store]
) -> None:
    store = await open_store(stores, sqlite_url, bots=True)
    holder = await start_holder(sqlite_url)
    try:
        holder.process.send_signal(signal.SIGSTOP)
        expired = datetime.now(UTC) - timedelta(seconds=1)
        await execute(store, update(Node).where(Node.id == holder.node).values(expires_at=expired))
        # The very process (pid and start time) still exists: it may resume and write.
        with pytest.raises(NodeConflictError, match=f"pid {holder.pid} "):
            await store.claim_node()
    finally:
        await holder.kill()
    await store.claim_node()


# Matches and their owners ----------------------------------------------------------


async def test_matches_record_their_node_and_closing_releases_it(
    sqlite_url: str, stores: list[Store]
) -> None:
    store = await open_store(stores, sqlite_url, bots=True)
    node = await store.claim_node()
    finished = await store.create_match(GAME, PLAYERS, 1000, 0)
    await store.finish_match(finished, 0, Termination.LINE, None, True)
    left_live = await store.create_match(GAME, PLAYERS, 1000, 0)
    owners = dict(await rows(store, select(Match.id, Match.node_id)))
    assert owners == {finished: node, left_live: node}
    await store.close()
    after = await open_store(stores, sqlite_url)
    assert await rows(after, select(Node.id)) == []
    assert await statuses(after) == {
        finished: ("finished", None),
        left_live: ("aborted", "infrastructure"),
    }


async def test_orphan_cleanup_ends_only_the_matches_of_gone_nodes(
    sqlite_url: str, stores: list[Store]
) -> None:
    older = await open_store(stores, sqlite_url, bots=True)
    unowned = await older.create_match(GAME, PLAYERS, 1000, 0)  # as an older arena wrote it
    await older.close()
    holder = await start_holder(sqlite_url, matches=2)
    await holder.kill()
    store = await open_store(stores, sqlite_url)
    await store.claim_node()
    mine = [await store.create_match(GAME, PLAYERS, 1000, 0) for _ in range(2)]
    assert await store.abort_orphans() == 3
    assert await store.abort_orphans() == 0
    assert await statuses(store) == {
        unowned: ("aborted", "infrastructure"),
        **{match_id: ("aborted", "infrastructure") for match_id in holder.matches},
        **{match_id: ("live", None) for match_id in mine},
    }
    ended = select(Match.reason, Match.rated, Match.result).where(Match.status == "aborted")
    assert {tuple(row) for row in await rows(store, ended)} == {
        ("the server running the match stopped", False, "*")
    }


async def test_concurrent_cleaners_end_each_orphan_exactly_once(
    postgres_url: str, stores: list[Store]
) -> None:
    url = postgres_url
    older = await open_store(stores, url, bots=True)
    unowned = [await older.create_match(GAME, PLAYERS, 1000, 0) for _ in range(2)]
    foreign = await older.create_match(GAME, PLAYERS, 1000, 0)
    await execute(older, insert(Node).values(foreign_node("far-away", expires_in_s=-1)))
    await execute(older, update(Match).where(Match.id == foreign).values(node_id="far-away"))
    holder = await start_holder(url, matches=3, multi=True)
    await holder.kill()
    cleaners = [await open_store(stores, url) for _ in range(3)]
    live: list[str] = []
    for cleaner in cleaners:
        await cleaner.claim_node(allow_multi_node=True)
        live += [await cleaner.create_match(GAME, PLAYERS, 1000, 0) for _ in range(2)]
    orphans = [*unowned, foreign, *holder.matches]
    before = await rows(older, select(Match.id, Match.ended_at).where(Match.id.in_(orphans)))
    assert all(ended_at is None for _, ended_at in before)
    counts = await asyncio.gather(*(cleaner.abort_orphans() for cleaner in cleaners))
    assert sum(counts) == len(orphans)
    assert await statuses(older) == {
        **{match_id: ("aborted", "infrastructure") for match_id in orphans},
        **{match_id: ("live", None) for match_id in live},
    }
    # Gone nodes' rows are cleaned up with them; the live nodes stay registered.
    registered = {n for (n,) in await rows(older, select(Node.id))}
    assert registered == {cleaner.node_id for cleaner in cleaners}


async def test_nodes_share_postgresql_only_when_each_opts_in(
    postgres_url: str, stores: list[Store]
) -> None:
    first, second, third = [await open_store(stores, postgres_url) for _ in range(3)]
    await first.claim_node("alone")
    with pytest.raises(NodeConflictError, match="that node holds the database alone"):
        await second.claim_node(allow_multi_node=True)
    await first.close()
    await second.claim_node("shared-1", allow_multi_node=True)
    with pytest.raises(NodeConflictError, match="only with --allow-multi-node"):
        await third.claim_node("exclusive")
    assert await third.claim_node("shared-2", allow_multi_node=True) == "shared-2"


# The lease while running -------------------------------------------------------------


async def test_the_heartbeat_renews_the_lease(sqlite_url: str, stores: list[Store]) -> None:
    store = await open_store(stores, sqlite_url)
    node = await store.claim_node(heartbeat_s=0.05, lease_s=LEASE_S)
    query = select(Node.heartbeat_at, Node.expires_at).where(Node.id == node)
    [(first_beat, first_expiry)] = await rows(store, query)
    async with asyncio.timeout(5):
        while (await rows(store, query))[0][0] == first_beat:
            await asyncio.sleep(0.02)
    [(beat, expiry)] = await rows(store, query)
    assert beat > first_beat and expiry > first_expiry
    assert abs((expiry - beat).total_seconds() - LEASE_S) < 0.01


async def test_a_node_taken_over_loses_its_lease_and_opens_no_more_matches(
    sqlite_url: str, stores: list[Store]
) -> None:
    store = await open_store(stores, sqlite_url, bots=True)
    node = await store.claim_node(heartbeat_s=0.05, lease_s=1.0)
    lost = asyncio.Event()
    seen: list[StoreHealth] = []
    store.subscribe_health(lambda health: (seen.append(health), lost.set()))
    await execute(store, delete(Node).where(Node.id == node))  # as a node judging it gone would
    await asyncio.wait_for(lost.wait(), 5)
    assert [h.state for h in seen] == [HealthState.LEASE_LOST]
    assert f"node {node} is no longer registered" in store.health.reason
    with pytest.raises(LeaseLostError):
        await store.open_match(GAME, PLAYERS, 1000, 0)
