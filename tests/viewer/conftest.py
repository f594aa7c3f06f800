"""Fixtures for the web viewer tests: a real arena server serving the viewer on port 0,
scripted websocket bots that report search analysis with their moves, and a real headless
Chromium driven by Playwright.

Chromium is Debian's ``/usr/bin/chromium`` (or ``$ARENA_CHROMIUM``); Playwright's own
browser downloads are not used. Screenshots go to ``test-artifacts/viewer/`` at the
repository root.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from playwright.async_api import Browser, ConsoleMessage, Page, async_playwright
from viewer_support import BotsFactory, PageFactory, ScriptedBot
from websockets.asyncio.client import connect

from arena.server import ArenaConfig, ArenaServer
from arena.store import Store
from protocol.messages import (
    PROTOCOL_VERSION,
    parse_server_message,
)

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "viewer"

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

BOT_NAMES = ("alpha", "beta", "gamma", "delta")


def chromium_path() -> str:
    """The Chromium binary to drive: ``$ARENA_CHROMIUM`` or the first one on PATH."""
    configured = os.environ.get("ARENA_CHROMIUM")
    if configured:
        return configured
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("Chromium is not installed: ./test.sh installs Debian's chromium as root")


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """A headless Chromium for one test (launching takes well under a second)."""
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=chromium_path(), args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def open_page(browser: Browser) -> AsyncIterator[PageFactory]:
    """Open pages in fresh browser contexts; any uncaught page error fails the test.

    ``await open_page(width=390, height=844, dark=True)`` emulates a phone in dark mode;
    ``expect_errors="404"`` tolerates console errors containing that text.
    """
    errors: list[str] = []

    async def factory(
        width: int = 1280, height: int = 900, dark: bool = False, expect_errors: str | None = None
    ) -> Page:
        context = await browser.new_context(
            viewport={"width": width, "height": height},
            color_scheme="dark" if dark else "light",
            reduced_motion="reduce",  # screenshots and assertions without mid-animation frames
        )
        page = await context.new_page()
        page.set_default_timeout(10_000)
        page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))

        def on_console(message: ConsoleMessage) -> None:
            if message.type == "error" and not (expect_errors and expect_errors in message.text):
                errors.append(f"console error: {message.text}")

        page.on("console", on_console)
        return page

    yield factory
    assert not errors, "\n".join(errors)


@pytest.fixture
def screenshot() -> Callable[[Page, str], Awaitable[Path]]:
    """Save a full-page screenshot under test-artifacts/viewer/ and print its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    async def take(page: Page, name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        await page.screenshot(path=str(path), full_page=True)
        print(f"screenshot: {path}")
        return path

    return take


@pytest.fixture
async def tokens(store: Store) -> dict[str, str]:
    """Registered bots: name -> token."""
    return {name: await store.add_bot(name) for name in BOT_NAMES}


@pytest.fixture
async def arena(store: Store, tokens: dict[str, str]) -> AsyncIterator[ArenaServer]:
    """The real arena server on 127.0.0.1 port 0, serving the viewer as ``arena serve`` does."""
    config = ArenaConfig(
        host="127.0.0.1",
        port=0,
        move_ms=30_000,
        grace_s=5.0,
        ping_interval_s=1.0,
        close_timeout_s=2.0,
        seed=7,
        # Off: the scripted bots' boards are counted and scripted from the initial position.
        rated_openings=False,
    )
    server = ArenaServer(config, store=store)
    await server.start()
    try:
        yield server
    finally:
        await server.shutdown()


@pytest.fixture
async def start_match(arena: ArenaServer, tokens: dict[str, str]) -> AsyncIterator[BotsFactory]:
    """Pair two scripted bots in a match: ``x, o = await start_match("connect4", gated=True)``.

    Returns the bots ordered by seat (player 0 first) once both have their match_start.
    """
    opened: list[ScriptedBot] = []
    seed = iter(range(100, 10_000))

    async def factory(
        game: str,
        names: tuple[str, str] = ("alpha", "beta"),
        gated: bool = False,
        move_ms: int = 30_000,
        scripts: tuple[list[int], list[int]] | None = None,
    ) -> tuple[ScriptedBot, ScriptedBot]:
        bots = []
        for name in names:
            ws = await connect(f"ws://127.0.0.1:{arena.port}/", compression=None)
            await ws.send(
                json.dumps(
                    {
                        "type": "hello",
                        "role": "bot",
                        "version": PROTOCOL_VERSION,
                        "name": name,
                        "token": tokens[name],
                    }
                )
            )
            welcome = parse_server_message(await asyncio.wait_for(ws.recv(), 5))
            assert welcome.type == "welcome", welcome
            bot = ScriptedBot(ws, name, next(seed), gated, scripts)
            bot.task = asyncio.create_task(bot.run(), name=f"bot-{name}")
            bots.append(bot)
            opened.append(bot)
        for bot in bots:
            await bot.seek(game, move_ms)
        starts = [await asyncio.wait_for(bot.started, 5) for bot in bots]
        first, second = bots
        return (first, second) if starts[0].you == 0 else (second, first)

    yield factory
    for bot in opened:
        await bot.ws.close()
        if bot.task is not None:
            bot.task.cancel()
