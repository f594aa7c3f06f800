"""The shared seek queue's rules, with two nodes' queues in one process on a real PostgreSQL
database (each with its own store, lobby and node row); skipped where PostgreSQL is unreachable.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg
import pytest
from cluster_process import query
from test_store_postgres import pg_url, reset  # noqa: F401  (pg_url is a fixture)

from arena.cluster import seek_queue
from arena.cluster.channel import channel_of, notice
from arena.cluster.node import ClusterNode
from arena.cluster.seek_queue import RemoteSeat, SharedSeekQueue
from arena.play.lobby import Lobby
from arena.store import Store
from protocol.errors import ProtocolError
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
        store.engine,
        node_id,
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
