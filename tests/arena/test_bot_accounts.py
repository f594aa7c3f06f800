"""Bot accounts: the name rule, token resets, bringing a removed bot back, and a running
server closing the connections of bots removed or whose token was reset."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import insert

from arena.errors import BotExistsError, InvalidBotNameError, NoSuchBotError
from arena.net.logins import Logins
from arena.provision import ensure_bot
from arena.server import ArenaServer
from arena.store import Store
from arena.store.models import Bot
from arena.store.tokens import hash_token
from protocol.messages import PROTOCOL_VERSION, MatchStart, Welcome, parse_client_message
from protocol.messages.values import BOT_NAME_PATTERN, NEW_BOT_NAME_PATTERN


@pytest.fixture
async def server(make_server: Any, tokens: dict[str, str]) -> ArenaServer:
    """The test server, checking the bots online against the database every 50 ms."""
    return await make_server(login_recheck_s=0.05)


GOOD_NAMES = ("a", "Z", "0", "_x", "mcts-200", "alpha_beta-2", "x" * 32)
BAD_NAMES = ("", "-x", "a.b", "a b", " a", "x" * 33, "é", "a/b", "..", ".hidden")


@pytest.mark.parametrize("name", GOOD_NAMES)
async def test_names_that_follow_the_rule_are_registered(store: Store, name: str) -> None:
    token = await store.add_bot(name)
    assert await store.authenticate(name, token) is not None


@pytest.mark.parametrize("name", BAD_NAMES)
async def test_names_that_break_the_rule_are_refused_with_the_rule(store: Store, name: str) -> None:
    with pytest.raises(InvalidBotNameError, match="letters, digits, '-' and '_'") as raised:
        await store.add_bot(name)
    assert isinstance(raised.value, ValueError)  # callers that caught ValueError still do
    assert await store.list_bots(include_inactive=True) == []


def test_the_wire_accepts_every_registrable_name() -> None:
    # New names are a subset of what messages carry, so every new bot can log in.
    for name in GOOD_NAMES:
        assert re.fullmatch(NEW_BOT_NAME_PATTERN, name) and re.fullmatch(BOT_NAME_PATTERN, name)
    assert not re.fullmatch(NEW_BOT_NAME_PATTERN, "a.b") and re.fullmatch(BOT_NAME_PATTERN, "a.b")


async def test_a_name_registered_before_the_rule_still_logs_in(
    store: Store, server: ArenaServer, connect_client: Any
) -> None:
    # Older versions let the CLI register dotted names; they are not renamed, and still work.
    async with store.engine.begin() as connection:
        await connection.execute(
            insert(Bot).values(
                name="old.bot",
                token_hash=hash_token("legacy-token"),
                created_at=_now(),
                active=True,
            )
        )
    client = await connect_client()
    await client.send(**_hello("old.bot", "legacy-token"))
    assert isinstance(await client.recv(), Welcome)


async def test_reset_token_replaces_the_token(store: Store) -> None:
    old = await store.add_bot("alice")
    new = await store.reset_token("alice")
    assert new != old
    assert await store.authenticate("alice", old) is None
    assert await store.authenticate("alice", new) is not None
    with pytest.raises(NoSuchBotError):
        await store.reset_token("nobody")


async def test_a_removed_bot_gets_a_token_only_when_brought_back(store: Store) -> None:
    await store.add_bot("alice")
    assert await store.remove_bot("alice")
    with pytest.raises(NoSuchBotError):
        await store.reset_token("alice")
    with pytest.raises(BotExistsError):
        await store.add_bot("alice")  # the name stays taken
    token = await store.reset_token("alice", reactivate=True)
    assert await store.authenticate("alice", token) is not None
    assert [bot.active for bot in await store.list_bots()] == [True]


async def test_ensure_bot_reissues_through_the_store(store: Store) -> None:
    first, action = await ensure_bot(store, "alice")
    assert action == "added"
    assert await ensure_bot(store, "alice", first) == (first, "kept")
    second, action = await ensure_bot(store, "alice", "lost")
    assert action == "reissued" and await store.authenticate("alice", second) is not None
    assert await store.authenticate("alice", first) is None


async def test_revoked_logins_names_removed_bots_and_reset_tokens(store: Store) -> None:
    tokens = {name: await store.add_bot(name) for name in ("alice", "bob", "carol")}
    logins = {name: hash_token(token) for name, token in tokens.items()}
    assert await store.revoked_logins(logins) == set()
    await store.reset_token("alice")
    await store.remove_bot("bob")
    assert await store.revoked_logins(logins) == {"alice", "bob"}
    assert await store.revoked_logins({"ghost": hash_token("x")}) == {"ghost"}


async def test_many_logins_are_checked_in_several_reads(store: Store) -> None:
    names = [f"bot-{i}" for i in range(1200)]
    async with store.engine.begin() as connection:
        await connection.execute(
            insert(Bot),
            [
                {"name": n, "token_hash": hash_token(n), "created_at": _now(), "active": True}
                for n in names
            ],
        )
    logins = {n: hash_token(n) for n in names}
    logins["bot-1100"] = hash_token("an old token")
    assert await store.revoked_logins(logins) == {"bot-1100"}


async def test_a_reset_token_closes_the_live_connection(
    store: Store,
    server: ArenaServer,
    start_match: Any,
    bot: Any,
    connect_client: Any,
    tokens: dict[str, str],
) -> None:
    pair = await start_match()
    alice = pair.seat(pair.names.index("alice"))
    bob = pair.seat(pair.names.index("bob"))
    carol = await bot("carol")
    new = await store.reset_token("alice")
    error = await alice.expect_error("auth_failed", timeout=3)
    assert "token was reset" in error.message
    assert await alice.closed() == 1008
    assert "alice" not in server.gateway.bots and "carol" in server.gateway.bots
    # The old token no longer logs in; the new one does, and takes the match back.
    again = await connect_client()
    await again.send(**_hello("alice", tokens["alice"]))
    await again.expect_error("auth_failed")
    tokens["alice"] = new
    back = await bot("alice")
    assert (await back.expect(MatchStart)).match_id == pair.match_id
    await carol.send(type="games", id="still-here")
    assert (await carol.recv()).type == "games"
    assert bob.ws.close_code is None


async def test_removing_a_bot_closes_its_connection(
    store: Store, bot: Any, caplog: pytest.LogCaptureFixture
) -> None:
    alice = await bot("alice")
    await store.remove_bot("alice")
    await alice.expect_error("auth_failed", timeout=3)
    assert await alice.closed() == 1008
    revoked = [r for r in caplog.records if getattr(r, "event", None) == "login_revoked"]
    assert [(r.levelname, r.bot) for r in revoked] == [("WARNING", "alice")]  # type: ignore[attr-defined]


async def test_a_hello_with_a_name_no_bot_may_have_says_so(
    server: ArenaServer, connect_client: Any
) -> None:
    client = await connect_client()
    await client.send(**_hello("-dash", "whatever"))
    error = await client.expect_error("auth_failed")
    assert error.message == (
        "unknown bot: '-dash' is not a valid bot name "
        "(1-32 letters, digits, '-' and '_', not starting with '-')"
    )
    other = await connect_client()
    await other.send(**_hello("has space", "whatever"))
    error = await other.expect_error("bad_value")
    assert "is not a valid bot name (1-32 letters" in error.message


def test_a_hello_parses_names_of_every_version() -> None:
    for name in ("alice", "old.bot", "-old"):
        message = parse_client_message(_json_hello(name))
        assert message.name == name  # type: ignore[union-attr]


def _hello(name: str, token: str) -> dict[str, Any]:
    return {"type": "hello", "role": "bot", "version": PROTOCOL_VERSION, "name": name,
            "token": token}  # fmt: skip


def _json_hello(name: str) -> str:
    return json.dumps(_hello(name, "t"))


def _now() -> datetime:
    return datetime.now(UTC)


class SlowRevoker:
    """The store's neighbour in ``Logins``: answers after ``release``, or fails."""

    def __init__(self, revoked: set[str], error: Exception | None = None) -> None:
        self.revoked, self.error = revoked, error
        self.asked: list[dict[str, str]] = []
        self.release = asyncio.Event()

    async def revoked_logins(self, logins: Mapping[str, str]) -> set[str]:
        self.asked.append(dict(logins))
        await self.release.wait()
        if self.error is not None:
            raise self.error
        return self.revoked & set(logins)


async def test_logins_keep_hashes_and_check_one_pass_at_a_time() -> None:
    revoker = SlowRevoker({"alice"})
    logins = Logins(revoker)
    logins.logged_in("alice", "t1")
    logins.logged_in("bob", "t2")
    first = asyncio.create_task(logins.revoked({"alice": "conn-a", "bob": "conn-b"}))
    await asyncio.sleep(0)
    assert await logins.revoked({"alice": "conn-a"}) == []  # a pass is running: no second
    revoker.release.set()
    assert await first == ["conn-a"]
    assert revoker.asked == [{"alice": hash_token("t1"), "bob": hash_token("t2")}]
    logins.left("alice")
    assert await logins.revoked({"bob": "conn-b"}) == []
    assert await logins.revoked({}) == []


async def test_logins_close_nothing_when_the_database_cannot_be_read() -> None:
    revoker = SlowRevoker({"alice"}, error=ConnectionError("database down"))
    revoker.release.set()
    logins = Logins(revoker)
    logins.logged_in("alice", "t1")
    assert await logins.revoked({"alice": "conn-a"}) == []
    revoker.error = None
    assert await logins.revoked({"alice": "conn-a"}) == ["conn-a"]  # the next pass works
