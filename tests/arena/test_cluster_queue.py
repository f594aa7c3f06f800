"""The shared seek queue's rules, with two nodes' queues in one process on a real PostgreSQL
database (each with its own store, lobby and node row); skipped where PostgreSQL is unreachable.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest
from cluster_process import query
from sqlalchemy import event
from test_store_postgres import pg_url, reset  # noqa: F401  (pg_url is a fixture)

from arena.cluster import seek_queue
from arena.cluster.channel import channel_of, notice
from arena.cluster.node import ClusterNode
from arena.cluster.seek_queue import RemoteSeat, SharedSeekQueue
from arena.play.lobby import Lobby, Pairing
from arena.store import Store
from arena.store import store as store_module
from arena.store.records import Arrival
from arena.store.tokens import hash_token
from protocol.errors import ProtocolError
from protocol.games import Termination
from protocol.messages import ErrorCode, TimeControl

TC = TimeControl(move_ms=1000, bank_ms=0)


@dataclass
class Node:
    """One node's side: its store (claimed as a node), lobby and queue."""

    store: Store
    lobby: Lobby
    queue: SharedSeekQueue
    playing: Counter[str]
    max_matches: dict[str, int]


async def make_node(url: str, seed: int) -> Node:
    store = await Store.open(url)
    node_id = await store.claim_node(None, allow_multi_node=True)
    playing: Counter[str] = Counter()
    max_matches: dict[str, int] = {}

    def has_capacity(bot: str) -> bool:
        return playing[bot] < max_matches.get(bot, 1)

    lobby = Lobby(has_capacity=has_capacity, rng=random.Random(seed))
    queue = SharedSeekQueue(
        store.seek_queue(node_id),
        lobby,
        has_capacity=has_capacity,
        playing=lambda bot: playing[bot],
        rng=random.Random(seed),
        notice=lambda remote, match_id: notice(
            remote.node_id, {"kind": "redirect", "bot": remote.bot, "match": match_id}
        ),
        on_started=lambda match, remote: None,
    )
    return Node(store, lobby, queue, playing, max_matches)


@pytest.fixture
def db(pg_url: str) -> str:  # noqa: F811  (the imported fixture)
    reset(pg_url)
    return pg_url


@pytest.fixture
async def nodes(db: str) -> AsyncIterator[tuple[Node, Node]]:
    a, b = await make_node(db, 1), await make_node(db, 2)
    yield a, b
    await a.store.close()
    await b.store.close()


async def rows(node: Node) -> list[tuple[str, str, bool]]:
    url = node.store.engine.url.render_as_string(hide_password=False)
    found = await query(url, "SELECT node_id, bot, movable FROM seek_queue ORDER BY id")
    return [(row["node_id"], row["bot"], row["movable"]) for row in found]


async def test_a_node_pairs_its_own_seekers_without_the_table(nodes: tuple[Node, Node]) -> None:
    a, _ = nodes
    a.lobby.seek("x", "connect4", TC, 1500.0)
    a.lobby.seek("y", "connect4", TC, 1500.0)
    [pairing] = await a.queue.pair()
    assert set(pairing.players) == {"x", "y"} and a.queue.remote_seat(pairing) is None
    assert a.queue.passes == 0 and not a.lobby.seeks and await rows(a) == []


async def test_leftovers_of_two_nodes_pair_and_the_later_node_hosts(
    nodes: tuple[Node, Node],
) -> None:
    a, b = nodes
    a.lobby.seek("x", "connect4", TC, 1500.0)
    assert await a.queue.pair() == []  # alone: into the table
    assert await rows(a) == [(a.queue.node_id, "x", True)]
    b.lobby.seek("y", "connect4", TC, 1520.0)
    b.lobby.seek("z", "tictactoe", TC, 1500.0)  # another game: stays
    [pairing] = await b.queue.pair()
    assert set(pairing.players) == {"x", "y"}
    assert b.queue.remote_seat(pairing) == RemoteSeat("x", a.queue.node_id)
    assert await rows(a) == [(b.queue.node_id, "z", True)]
    # x's node hears of the redirect: its seek is over, and the table stays as it is.
    a.queue.taken("x")
    assert not a.lobby.seeks and await a.queue.pair() == [] and len(await rows(a)) == 1


async def test_a_bot_playing_on_its_node_is_paired_only_there(nodes: tuple[Node, Node]) -> None:
    a, b = nodes
    a.playing["x"], a.max_matches["x"] = 1, 2  # x plays a match on a and seeks another
    a.lobby.seek("x", "connect4", TC, 1500.0)
    await a.queue.pair()
    assert await rows(a) == [(a.queue.node_id, "x", False)]
    b.lobby.seek("y", "connect4", TC, 1500.0)
    assert await b.queue.pair() == []  # y may not take x away from a
    a.playing["x"] = 0  # x's match on a ended: it may move now
    assert await a.queue.pair() != []  # a pairs them: y comes to a


async def test_withdrawn_seeks_leave_the_table_and_a_lost_redirect_requeues(
    nodes: tuple[Node, Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = nodes
    a.lobby.seek("x", "connect4", TC, 1500.0)
    a.lobby.seek("w", "uttt", TC, 1500.0)
    await a.queue.pair()
    a.lobby.cancel_seek("w")
    assert a.queue.wants_pass(retry_s=60.0)  # the table lags the lobby
    await a.queue.pair()
    assert [bot for _, bot, _ in await rows(a)] == ["x"]
    b.lobby.seek("y", "connect4", TC, 1500.0)
    assert len(await b.queue.pair()) == 1  # b took x; suppose b dies before telling a
    monkeypatch.setattr(seek_queue, "REDIRECT_WAIT_S", 0.0)
    await a.queue.pair()  # sees x's row gone: waits for the redirect...
    await a.queue.pair()  # ...which never came: x is queued again
    assert [bot for _, bot, _ in await rows(a)] == ["x"] and len(a.lobby.seeks) == 1


async def test_the_pass_that_pairs_across_nodes_notifies_the_remote_node_as_it_commits(
    nodes: tuple[Node, Node],
) -> None:
    a, b = nodes
    heard: asyncio.Queue[dict[str, str]] = asyncio.Queue()
    dsn = a.store.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
    listener = await asyncpg.connect(dsn, timeout=5)
    try:
        await listener.add_listener(
            channel_of(a.queue.node_id), lambda *args: heard.put_nowait(json.loads(args[3]))
        )
        a.lobby.seek("x", "connect4", TC, 1500.0)
        assert await a.queue.pair() == []
        assert heard.empty()  # a pass that pairs nothing sends nothing
        b.lobby.seek("y", "connect4", TC, 1500.0)
        [pairing] = await b.queue.pair()
        # The match id is chosen by the pass, and the notice that moves x names it.
        assert pairing.match_id is not None
        message = await asyncio.wait_for(heard.get(), timeout=5)
        assert message == {"kind": "redirect", "bot": "x", "match": pairing.match_id}
        # A pairing of two seekers of one node moves no one: no id chosen, no notice.
        b.lobby.seek("u", "connect4", TC, 1500.0)
        b.lobby.seek("v", "connect4", TC, 1500.0)
        [local] = await b.queue.pair()
        assert local.match_id is None and b.queue.remote_seat(local) is None
        await asyncio.sleep(0.2)
        assert heard.empty()
    finally:
        await listener.close()


class _Registry:
    """The registry's part a node's notices use: no match here until ``started``."""

    def __init__(self) -> None:
        self.matches: dict[str, _Match] = {}

    def get(self, match_id: str) -> _Match:
        if match_id not in self.matches:
            raise ProtocolError(ErrorCode.NO_SUCH_MATCH, match_id)
        return self.matches[match_id]

    def playing(self, bot: str) -> int:
        return 0


@dataclass
class _Match:
    match_id: str
    aborted: str = ""

    def abort(self, reason: str) -> None:
        self.aborted = reason


async def test_a_refusal_that_outruns_the_match_s_start_ends_it_once_started(db: str) -> None:
    store = await Store.open(db)
    await store.claim_node(None, allow_multi_node=True)
    registry = _Registry()
    lobby = Lobby(has_capacity=lambda bot: True, rng=random.Random(3))
    # Of the registry, only get and playing are used here.
    node = ClusterNode(
        store,
        lobby,
        registry,  # type: ignore[arg-type]
        link_of=lambda bot: None,
        has_capacity=lambda bot: True,
        spawn=lambda coro, name: asyncio.get_running_loop().create_task(coro),
        rng=random.Random(3),
    )
    try:
        early, late = _Match("m-early"), _Match("m-late")
        node._heard({"kind": "refused", "bot": "x", "match": early.match_id})
        registry.matches[late.match_id] = late
        node._heard({"kind": "refused", "bot": "y", "match": late.match_id})
        assert "y could not move" in late.aborted  # started already: ended at once
        node._started(early, RemoteSeat("x", "node-b"))  # type: ignore[arg-type]
        assert "x could not move" in early.aborted
        again = _Match("m-early")
        node._started(again, RemoteSeat("x", "node-b"))  # type: ignore[arg-type]
        assert again.aborted == ""  # a refusal counts once
    finally:
        await store.close()


async def test_a_pass_through_the_table_is_two_statements_each_committed_alone(
    nodes: tuple[Node, Node],
) -> None:
    a, b = nodes
    statements = autocommits_of(a.store, b.store)
    a.lobby.seek("x", "connect4", TC, 1500.0)
    assert await a.queue.pair() == []
    b.lobby.seek("y", "connect4", TC, 1500.0)
    [pairing] = await b.queue.pair()
    assert set(pairing.players) == {"x", "y"}
    # a: its seek in and the queue read; b: the same, then the pair taken. No BEGIN and no
    # COMMIT: the queue's lock is held only while PostgreSQL runs one of these statements.
    sync, take = "SELECT * FROM seek_queue_sync", "SELECT * FROM seek_queue_take"
    assert statements == [(sync, True), (sync, True), (take, True)]


async def leftover(node: Node, bot: str, game: str = "connect4") -> None:
    """``bot`` seeks ``game`` on ``node``, and a pass puts it into the queue (no one to pair)."""
    node.lobby.seek(bot, game, TC, 1500.0)
    assert await node.queue.pair() == []


def before_take(
    monkeypatch: pytest.MonkeyPatch, node: Node, step: Callable[[], Awaitable[list[Pairing]]]
) -> list[list[Pairing]]:
    """Run ``step`` once, when ``node``'s next pass has read the queue and is about to take;
    what it returned is in the list returned (once it ran)."""
    take = node.queue._take
    calls: list[list[Pairing]] = []

    async def racing(*args: Any) -> Any:
        if not calls:
            calls.append(await asyncio.wait_for(step(), timeout=5))
        return await take(*args)

    monkeypatch.setattr(node.queue, "_take", racing)
    return calls


async def test_another_node_pairs_while_a_pass_is_between_its_read_and_its_take(
    nodes: tuple[Node, Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = nodes
    a.playing["x"], a.max_matches["x"] = 1, 2  # x plays on a: only a may pair it
    a.lobby.seek("x", "connect4", TC, 1500.0)
    a.lobby.seek("w", "uttt", TC, 1500.0)
    assert await a.queue.pair() == []
    b.lobby.seek("y", "connect4", TC, 1500.0)
    b.lobby.seek("z", "uttt", TC, 1500.0)
    # b reads x (not movable), w, y, z and plans w-z; before it takes, a's pass runs (it
    # would wait forever if b held the queue's lock): a pairs x-y and w-z, both hosted on a.
    a_pairs = before_take(monkeypatch, b, a.queue.pair)
    assert await b.queue.pair() == []  # b's pair was gone: it read the queue again
    [paired] = a_pairs
    assert sorted(sorted(p.players) for p in paired) == [["w", "z"], ["x", "y"]]
    assert await rows(a) == []
    # b's seeks wait for their redirects, as when a had paired them outright.
    assert len(b.lobby.seeks) == 2 and not b.queue.wants_pass(retry_s=60.0)


async def test_the_take_skips_a_pair_whose_other_seek_can_no_longer_move(
    nodes: tuple[Node, Node], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = nodes
    a.lobby.seek("x", "connect4", TC, 1500.0)
    assert await a.queue.pair() == []
    b.playing["y"], b.max_matches["y"] = 1, 2  # y plays on b: only b may pair it
    b.lobby.seek("y", "connect4", TC, 1500.0)

    async def x_starts_a_match_on_a() -> list[Pairing]:
        a.playing["x"], a.max_matches["x"] = 1, 2
        return await a.queue.pair()  # which marks x not movable (and cannot pair y)

    on_a = before_take(monkeypatch, b, x_starts_a_match_on_a)
    assert await b.queue.pair() == [] and on_a == [[]]
    assert sorted(await rows(a)) == sorted(
        [(a.queue.node_id, "x", False), (b.queue.node_id, "y", False)]
    )


async def test_a_pass_starts_the_match_whose_player_travels_first(
    nodes: tuple[Node, Node],
) -> None:
    a, b = nodes
    await leftover(a, "x", "uttt")
    b.lobby.seek("u", "connect4", TC, 1500.0)
    b.lobby.seek("v", "connect4", TC, 1500.0)
    b.lobby.seek("y", "uttt", TC, 1500.0)
    across, here = await b.queue.pair()
    assert set(across.players) == {"x", "y"} and b.queue.remote_seat(across) is not None
    assert set(here.players) == {"u", "v"}


async def test_the_host_checks_the_travelling_bot_s_login_against_the_take_s_read(
    nodes: tuple[Node, Node],
) -> None:
    a, b = nodes
    tokens = {name: await a.store.add_bot(name) for name in ("alpha", "beta", "gamma")}
    rated = await a.store.create_match("connect4", ("alpha", "gamma"), 1000, 0)
    await a.store.finish_match(rated, 0, Termination.LINE, None, True)
    assert await a.store.authenticate("alpha", tokens["alpha"]) is not None
    a.lobby.seek("alpha", "connect4", TC, 1516.0)
    assert await a.queue.pair() == []
    arrivals: list[Arrival] = []
    b.queue._arriving = arrivals.append
    await b.store.authenticate("beta", tokens["beta"])
    b.lobby.seek("beta", "connect4", TC, 1500.0)
    [pairing] = await b.queue.pair()
    [arrival] = arrivals
    assert (arrival.bot, arrival.ratings) == ("alpha", {"connect4": 1516.0})
    b.store.expect_login(arrival)
    reads: list[str] = []
    event.listen(b.store.engine.sync_engine, "before_cursor_execute", lambda *a: reads.append(a[2]))
    # Starting the match and alpha's login on b read nothing...
    match_id = await b.store.open_match("connect4", pairing.players, 1000, 0)
    assert await b.store.rating_hint("alpha", "connect4") == 1516.0
    assert await b.store.authenticate("alpha", tokens["alpha"]) is not None
    assert reads == []
    # ...once: the next login, or a wrong token, is checked by the database.
    assert await b.store.authenticate("alpha", tokens["beta"]) is None
    assert reads
    await b.store.flush()
    assert (await b.store.get_match(match_id)) is not None


async def test_an_expected_login_counts_once_and_only_for_a_while(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await Store.open(db)
    try:
        token = await store.add_bot("alpha")
        await store.authenticate("alpha", token)
        # What the pass read, the database says too; a stale read is never used twice.
        stale = Arrival("alpha", store._bot_ids["alpha"], hash_token("old"), datetime.now(UTC), {})
        store.expect_login(stale)
        assert await store.authenticate("alpha", token) is not None  # no match: the database
        assert await store.authenticate("alpha", "old") is None  # used up
        store.expect_login(stale)
        assert await store.authenticate("alpha", "old") is not None  # the pass's word, once
        monkeypatch.setattr(store_module, "ARRIVAL_TTL_S", -1.0)
        store.expect_login(stale)
        assert await store.authenticate("alpha", "old") is None  # too late: the database
    finally:
        await store.close()


def statements_of(*stores: Store) -> list[str]:
    """The statements ``stores`` send from now on, each cut at its first parenthesis."""
    sent: list[str] = []
    for store in stores:
        event.listen(
            store.engine.sync_engine,
            "before_cursor_execute",
            lambda *args: sent.append(args[2].split("(")[0]),
        )
    return sent


def autocommits_of(*stores: Store) -> list[tuple[str, bool]]:
    """The statements ``stores`` send from now on (cut at the first parenthesis), each with
    whether the driver sent it in autocommit: no BEGIN before it, no COMMIT after it."""
    sent: list[tuple[str, bool]] = []

    def executed(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sent.append((statement.split("(")[0], conn.connection.dbapi_connection.autocommit))

    for store in stores:
        event.listen(store.engine.sync_engine, "before_cursor_execute", executed)
    return sent


async def read_ahead(node: Node) -> None:
    """A pairing window opens on ``node``: its queue reads the table meanwhile."""
    node.queue.prefetch()
    await asyncio.sleep(0.1)


async def test_a_pass_takes_a_pair_the_queue_showed_during_its_window_in_one_round_trip(
    nodes: tuple[Node, Node],
) -> None:
    a, b = nodes
    await leftover(a, "x")
    b.lobby.seek("y", "connect4", TC, 1500.0)
    b.lobby.seek("z", "uttt", TC, 1500.0)
    sent = statements_of(a.store, b.store)
    await read_ahead(b)  # the window opens: the queue is read meanwhile
    batches = [batch async for batch in b.queue.batches()]
    # The pair with x is taken before y's seek ever had a row; then z is synced.
    [[pairing]] = batches
    assert set(pairing.players) == {"x", "y"} and b.queue.remote_seat(pairing) is not None
    assert sent == [
        "SELECT * FROM seek_queue ORDER BY id",
        "SELECT * FROM seek_queue_take",
        "SELECT * FROM seek_queue_sync",
    ]
    assert await rows(a) == [(b.queue.node_id, "z", True)]


async def test_a_pair_the_window_s_read_showed_but_gone_since_is_not_taken(
    nodes: tuple[Node, Node],
) -> None:
    a, b = nodes
    await leftover(a, "x")
    b.lobby.seek("y", "connect4", TC, 1500.0)
    await read_ahead(b)
    a.lobby.cancel_seek("x")  # x's seek is withdrawn after b read the queue
    assert await a.queue.pair() == []
    assert await b.queue.pair() == []  # x's row was gone: y is queued instead
    assert await rows(a) == [(b.queue.node_id, "y", True)]


async def test_a_read_of_the_queue_from_long_ago_is_not_used(nodes: tuple[Node, Node]) -> None:
    a, b = nodes
    await leftover(a, "x")
    await read_ahead(b)
    b.queue._snapshot_at -= seek_queue.SNAPSHOT_MAX_AGE_S  # its pass did not run then
    b.lobby.seek("y", "connect4", TC, 1500.0)
    sent = statements_of(a.store, b.store)
    [pairing] = await b.queue.pair()
    assert set(pairing.players) == {"x", "y"}
    assert sent == ["SELECT * FROM seek_queue_sync", "SELECT * FROM seek_queue_take"]


class _Link:
    """A bot's connection as a node's redirect uses it."""

    def __init__(self) -> None:
        self.sent: list[object] = []
        self.closed = False

    def send(self, message: object) -> None:
        self.sent.append(message)

    def close(self, code: int, reason: str) -> None:
        self.closed = True


async def test_a_bot_redirected_away_logs_in_again_without_a_read_when_it_comes_back(
    db: str,
) -> None:
    store = await Store.open(db)
    await store.claim_node(None, allow_multi_node=True)
    link = _Link()
    node = ClusterNode(
        store,
        Lobby(has_capacity=lambda bot: True, rng=random.Random(4)),
        _Registry(),  # type: ignore[arg-type]
        link_of=lambda bot: link,  # type: ignore[arg-type, return-value]
        has_capacity=lambda bot: True,
        spawn=lambda coro, name: asyncio.get_running_loop().create_task(coro),
        rng=random.Random(4),
    )
    try:
        token = await store.add_bot("alpha")
        assert await store.authenticate("alpha", token) is not None
        message: dict[str, object] = {"kind": "redirect", "bot": "alpha", "match": "m1"}
        message.update(url="ws://b", node="b")
        node._heard(message)
        assert link.closed and [type(m).__name__ for m in link.sent] == ["Redirect"]
        sent = statements_of(store)
        # Back from its match on b, alpha logs in here without a read; once.
        assert await store.authenticate("alpha", token) is not None and sent == []
        assert await store.authenticate("alpha", token) is not None and sent != []
    finally:
        await store.close()


async def test_where_a_bot_plays_is_one_statement_that_commits_alone(
    nodes: tuple[Node, Node],
) -> None:
    a, b = nodes
    await a.store.add_bot("alpha")
    await a.store.add_bot("beta")
    b_directory = b.store.directory(b.queue.node_id)
    statements = autocommits_of(b.store)
    assert await b_directory.hosted_elsewhere("alpha") is None  # a bot's hello waits for this
    match_id = await a.store.create_match("connect4", ("alpha", "beta"), 1000, 0)
    hosted = await b_directory.hosted_elsewhere("alpha")
    assert hosted is not None and (hosted.match_id, hosted.gone) == (match_id, False)
    assert hosted.node_id == a.queue.node_id
    # Each sent outside a transaction; the database's clock is read with the match.
    assert [alone for _, alone in statements] == [True, True]
