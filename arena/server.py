"""The arena server: its parts wired together, started and stopped as one.

Usage, in-process (tests, ``arena demo``) or from ``arena serve``::

    async with ArenaServer(ArenaConfig(port=0)) as server:
        print(server.port)
        await server.wait_stopped()     # until shutdown() (e.g. on SIGTERM)

The parts, each in a module that says what it owns:

- ``arena.net.listener``: the one port (HTTP and websockets, optionally TLS);
- ``arena.net.gateway``: connections, hello and auth, limits, message routing;
- ``arena.play.registry`` and ``arena.play.match``: the live matches, each a
  synchronous ``Referee`` (``arena.play.referee``) in a thin async shell;
- ``arena.play.lobby`` and ``arena.play.matchmaker``: seeks, challenges, pairing;
- ``arena.live.spectators``: spectator feeds and the event sink (MQTT);
- ``arena.net.api``: the JSON API and the read-only queries; ``arena.live.viewer``: the web
  viewer's pages;
- ``arena.leaderboard``: the fitted leaderboards, cached, rebuilt after rated results
  (fitted in a child process with ``fit_process``), and the ``rating`` report that
  tells a rated match's players their rating after the refit;
- ``arena.store``: persistence, opened here unless one is injected;
- ``arena.cluster``: with ``allow_multi_node`` on PostgreSQL, this server as one
  node of several: the shared seek queue, redirects, orphan sweeps.

``assemble`` builds them in dependency order, each given what it needs when
made, nothing set afterwards (docs/architecture.md, "Assembly").

Every background task belongs to one ``Supervisor``. Shutdown (``shutdown``
or leaving the ``async with``) is one path: no new matches or hellos, live
matches aborted as the infrastructure's fault (unrated) and their ends
committed, every client told ``server_shutdown`` and closed with 1001,
the tasks cancelled, the fit process stopped, the store flushed and closed.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import random
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from arena import open_files, runtime
from arena.activity import MatchActivity
from arena.cluster import ClusterNode, default_public_url
from arena.errors import StartupError
from arena.figures import ServerFigures
from arena.leaderboard import Leaderboards
from arena.leaderboard.fit_process import FitProcess, Fitter
from arena.leaderboard.notices import RatingNotices
from arena.live.spectators import EventSink, RemoteFeeds, SpectatorHub
from arena.live.viewer import add_viewer_routes
from arena.metrics import SUMMARY_EVERY_S, ArenaMetrics
from arena.net.api import ArenaApi
from arena.net.crowd import Crowd, CrowdLimits
from arena.net.gateway import PING_SLICES, SERVER_NAME, Gateway, GatewayLimits
from arena.net.http import Router
from arena.net.limits import LoginThrottle
from arena.net.listener import Listener
from arena.net.presence import Presence, Seats
from arena.net.refusals import SUMMARY_EVERY_S as REFUSALS_EVERY_S
from arena.net.refusals import Refusals
from arena.net.signup import SignUp, SignUpLimits
from arena.net.websocket import WebSocketConnection
from arena.play.clock import Clock, MonotonicClock
from arena.play.guests import GuestLimits
from arena.play.lobby import Lobby, TimeLimits
from arena.play.match import ObserverGroup, Spawn
from arena.play.matchmaker import Matchmaker, PassWanted
from arena.play.rated_openings import RatedOpenings
from arena.play.referee import DEFAULT_GRACE_S
from arena.play.registry import MatchRegistry
from arena.ratings import DEFAULT_K, EloModel
from arena.store import DEFAULT_URL, Store
from arena.store.engine import is_sqlite
from arena.store.health import HealthState, StoreHealth
from arena.supervisor import Supervisor
from arena.tournaments.openings import balanced_suite
from protocol.messages import (
    HELLO_TIMEOUT_S,
    MAX_BOT_MESSAGE_BYTES,
    PROTOCOL_VERSION,
    RATE_LIMIT_BURST,
    RATE_LIMIT_PER_S,
    TimeControl,
)

if TYPE_CHECKING:
    from arena.tournaments.service import TournamentService

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ArenaConfig:
    """Everything ``ArenaServer`` can be told; defaults suit ``arena serve``."""

    host: str = "127.0.0.1"
    port: int = 8765
    db_url: str = DEFAULT_URL
    move_ms: int = 1000
    """Default per-move time for seeks and challenges (a request may name its own)."""
    bank_ms: int = 0
    grace_s: float = DEFAULT_GRACE_S
    k_factor: float = DEFAULT_K
    hello_timeout_s: float = HELLO_TIMEOUT_S
    ping_interval_s: float = 5.0
    """Websocket pings measure each bot's round trip, credited back on its clock."""
    ping_timeout_s: float = 20.0
    login_recheck_s: float = 2.0
    """How often the bots online are checked against the database: a bot removed, or whose
    token was reset (``arena bots``), is disconnected within this time."""
    rate_per_s: float = RATE_LIMIT_PER_S
    rate_burst: int = RATE_LIMIT_BURST
    max_protocol_errors: int = 20
    bot_queue_size: int = 1024
    spectator_queue_size: int = 256
    spectator_buffer: int = 256
    close_timeout_s: float = 5.0
    pairing_window_s: float = 0.5
    """How long seeks gather before a pairing pass, so close ratings can find each other."""
    rated_openings: bool = True
    """Rated ladder games start from the game's balanced openings, in colour-swapped pairs
    (``arena.play.rated_openings``); False: from the initial position, colours drawn."""
    pace_ms: int = 0
    """Pause between a move and the next turn, on nobody's clock (for people watching)."""
    leaderboard_refresh_s: float = 1.0
    """Least time between two rating fits of one game while rated results keep coming."""
    seed: int | None = None
    """Seeds colour assignment, for reproducible tests."""
    db_writer_process: bool = False
    """SQLite: write the group commits from a separate process (``arena serve`` does)."""
    fit_process: bool = False
    """Fit the leaderboards in a child process (``arena serve`` does); False: in a worker
    thread of the server (``arena.leaderboard.fit_process``)."""
    tls_cert: str | None = None
    """PEM certificate chain: serve ``wss://`` and ``https://`` (with ``tls_key``)."""
    tls_key: str | None = None
    allowed_origins: Sequence[str] = field(default_factory=tuple)
    """Browser origins besides the server's own that may open a websocket."""
    trust_proxy: bool = False
    """Take the client address from ``X-Forwarded-For`` (behind a reverse proxy)."""
    node_id: str | None = None
    """This server's node id in the database (default ``host-pid-random``)."""
    allow_multi_node: bool = False
    """PostgreSQL only, experimental: let several nodes share the database."""
    journal_path: str | None = None
    """Where the recovery journal goes (default: next to a SQLite file; see the store)."""
    public_url: str | None = None
    """Several nodes: where bots reach this one (default ``ws(s)://host:port``)."""
    summary_interval_s: float = SUMMARY_EVERY_S
    """How often the log gets a summary line (``arena.metrics``); 0 for never."""
    crowd: CrowdLimits = field(default_factory=CrowdLimits)
    """Connections per address and idle closes (``arena.net.crowd``)."""
    guests: GuestLimits = field(default_factory=GuestLimits)
    """Guest time controls, games at once and idle closes (``arena.play.guests``)."""
    registration: str = "closed"
    """``open``: anyone may create a bot with ``POST /api/bots`` (``arena.net.signup``)."""
    signup_limits: SignUpLimits = field(default_factory=SignUpLimits)
    """How many sign-ups an address and the server allow an hour."""

    @property
    def time_limits(self) -> TimeLimits:
        """The accepted time controls, with this config's default."""
        return TimeLimits(TimeControl(move_ms=self.move_ms, bank_ms=self.bank_ms))

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context for ``tls_cert``/``tls_key``, or None for plain TCP."""
        if self.tls_cert is None and self.tls_key is None:
            return None
        if self.tls_cert is None or self.tls_key is None:
            raise ValueError("TLS needs both a certificate and a key")
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.tls_cert, self.tls_key)
        return context


@dataclass(frozen=True, slots=True)
class Parts:
    """The server's parts, as ``assemble`` built them (in this order)."""

    store: Store
    hub: SpectatorHub
    activity: MatchActivity
    presence: Presence
    leaderboards: Leaderboards
    notices: RatingNotices
    registry: MatchRegistry
    seats: Seats
    lobby: Lobby
    cluster: ClusterNode | None
    matchmaker: Matchmaker
    api: ArenaApi
    gateway: Gateway
    tournaments: TournamentService | None
    figures: ServerFigures
    metrics: ArenaMetrics


class Tournaments(Protocol):
    """Builds the tournament service from the parts it needs (``attach_tournaments``)."""

    def __call__(
        self,
        store: Store,
        registry: MatchRegistry,
        lobby: Lobby,
        seats: Seats,
        *,
        router: Router,
        spawn: Spawn,
        accepting: Callable[[], bool],
    ) -> TournamentService:
        """Create the scheduler, add its routes, start it."""
        ...


def assemble(
    config: ArenaConfig,
    store: Store,
    *,
    clock: Clock,
    sink: EventSink | None,
    spawn: Spawn,
    router: Router,
    crowd: Crowd,
    refusals: Refusals,
    loop_lag: runtime.LoopLag,
    health: Callable[[], tuple[int, dict[str, Any]]],
    remote: RemoteFeeds | None = None,
    orphans_ended: Callable[[list[str]], None] | None = None,
    tournaments: Tournaments | None = None,
    fitter: Fitter | None = None,
) -> Parts:
    """Build the server's parts in dependency order, each given what it needs when made.

    Nothing is set on a part after it is built: who is online is one table
    (``Presence``) made before the parts that ask about it and filled by the
    gateway, and the parts made before the matchmaker ask it for a pairing
    pass through ``PassWanted``. The optional parts are passed in: ``sink``
    (MQTT), ``remote`` and ``orphans_ended`` (the broker feed of the other
    nodes' matches), ``tournaments``, ``fitter`` (where the leaderboard fits run;
    default a worker thread); the cluster node is made when
    ``config`` allows several nodes on a database that can share.
    Adds the parts' routes to ``router``.
    """
    hub = SpectatorHub(sink, config.spectator_buffer, remote=remote)
    activity = MatchActivity()
    presence = Presence()
    pass_wanted = PassWanted()
    leaderboards = Leaderboards(
        store, refresh_s=config.leaderboard_refresh_s, spawn=spawn, fitter=fitter
    )
    notices = RatingNotices(
        leaderboards, tell=presence.tell_all, spawn=spawn, is_online=presence.is_online
    )
    registry = MatchRegistry(
        store,
        observer=ObserverGroup(hub, leaderboards, notices, activity),
        clock=clock,
        spawn=spawn,
        link_of=presence.link_of,
        ratings=leaderboards,
        match_options={"grace_s": config.grace_s, "pace_s": config.pace_ms / 1000.0},
        openings=(
            RatedOpenings(store.bot_pair_histories, lambda g: balanced_suite(g).openings)
            if config.rated_openings
            else None
        ),
        on_change=pass_wanted,
    )
    seats = Seats(presence, registry)
    lobby = Lobby(has_capacity=seats.has_capacity, rng=random.Random(config.seed))
    cluster = None
    if config.allow_multi_node and not is_sqlite(store.engine):
        cluster = ClusterNode(
            store,
            lobby,
            registry,
            link_of=presence.link_of,
            has_capacity=seats.has_capacity,
            spawn=spawn,
            rng=random.Random(config.seed),
            schedule=pass_wanted,
            orphans_ended=orphans_ended,
        )
    matchmaker = Matchmaker(
        lobby,
        registry,
        window_s=config.pairing_window_s,
        spawn=spawn,
        tell=presence.tell,
        store_problem=lambda: None if store.health.ok else store.health.reason,
        queue=None if cluster is None else cluster.queue,
        wanted=pass_wanted,
    )
    api = ArenaApi(
        store,
        registry,
        leaderboards,
        is_online=presence.is_online,
        health=health,
        guest_opponents=seats.guest_opponents,
    )
    gateway = Gateway(
        GatewayLimits(
            hello_timeout_s=config.hello_timeout_s,
            rate_per_s=config.rate_per_s,
            rate_burst=config.rate_burst,
            max_protocol_errors=config.max_protocol_errors,
            spectator_queue_size=config.spectator_queue_size,
            close_timeout_s=config.close_timeout_s,
            spectator_idle_s=config.crowd.spectator_idle_s,
            guests=config.guests,
        ),
        auth=store,
        queries=api,
        lobby=lobby,
        matchmaker=matchmaker,
        registry=registry,
        hub=hub,
        time_limits=config.time_limits,
        clock=clock,
        throttle=LoginThrottle(clock),
        refusals=refusals,
        presence=presence,
        seats=seats,
        placement=None if cluster is None else cluster.placement,
    )
    api.add_routes(router)
    SignUp(store, open_=config.registration == "open", limits=config.signup_limits).add_routes(
        router
    )
    service = None
    if tournaments is not None:
        service = tournaments(
            store,
            registry,
            lobby,
            seats,
            router=router,
            spawn=spawn,
            accepting=lambda: gateway.accepting,
        )
    figures = ServerFigures(
        matches=registry,
        gateway=gateway,
        lobby=lobby,
        crowd=crowd,
        refusals=refusals,
        activity=activity,
        store=store,
        loop_lag=loop_lag,
    )
    metrics = ArenaMetrics(figures)
    metrics.add_routes(router)
    return Parts(
        store=store,
        hub=hub,
        activity=activity,
        presence=presence,
        leaderboards=leaderboards,
        notices=notices,
        registry=registry,
        seats=seats,
        lobby=lobby,
        cluster=cluster,
        matchmaker=matchmaker,
        api=api,
        gateway=gateway,
        tournaments=service,
        figures=figures,
        metrics=metrics,
    )


class ArenaServer:
    """The whole server; see the module docstring. Side effects are injectable.

    ``sink`` (MQTT's events), ``remote`` and ``orphans_ended`` (several nodes'
    broker feed) and ``health_extras`` (more ``/healthz`` fields, each a value
    or a function called per request) are the optional parts ``ArenaApp`` plugs in.
    """

    def __init__(
        self,
        config: ArenaConfig | None = None,
        *,
        store: Store | None = None,
        sink: EventSink | None = None,
        clock: Clock | None = None,
        router: Router | None = None,
        remote: RemoteFeeds | None = None,
        orphans_ended: Callable[[list[str]], None] | None = None,
        health_extras: dict[str, Any] | None = None,
    ) -> None:
        self.config = config or ArenaConfig()
        self._store = store
        self._owns_store = store is None
        self._clock: Clock = clock or MonotonicClock()
        self._sink = sink
        self._remote = remote
        self._orphans_ended = orphans_ended
        self.supervisor = Supervisor()
        self.router = router or Router()
        add_viewer_routes(self.router)
        self.health_extras: dict[str, Any] = dict(health_extras or {})
        """Extra ``/healthz`` fields (e.g. the MQTT publisher's status)."""
        self._parts: Parts | None = None
        self._fit_process = FitProcess() if self.config.fit_process else None
        self._listener: Listener | None = None
        self._lag = runtime.LoopLag()
        self._unsubscribe: Callable[[], None] = lambda: None
        self._stopping = False
        self._stopped = asyncio.Event()
        self._started_at = time.time()
        self.crowd = Crowd(self.config.crowd.max_per_address)
        """Open connections per client address (``arena.net.crowd``)."""
        self.refusals = Refusals()
        """Connections and requests refused at the door, by reason."""

    # The parts, once started ------------------------------------------------------

    @property
    def store(self) -> Store:
        """The store; available once started."""
        if self._store is None:
            raise RuntimeError("the server is not started")
        return self._store

    @property
    def parts(self) -> Parts:
        """Every part, once started."""
        if self._parts is None:
            raise RuntimeError("the server is not started")
        return self._parts

    @property
    def hub(self) -> SpectatorHub:
        """The spectator feeds and the event sink."""
        return self.parts.hub

    @property
    def activity(self) -> MatchActivity:
        """Match start and end log lines, and the counts ``/metrics`` reports."""
        return self.parts.activity

    @property
    def lobby(self) -> Lobby:
        """The seeks and challenges."""
        return self.parts.lobby

    @property
    def registry(self) -> MatchRegistry:
        """The live matches."""
        return self.parts.registry

    @property
    def matchmaker(self) -> Matchmaker:
        """The pairing passes."""
        return self.parts.matchmaker

    @property
    def gateway(self) -> Gateway:
        """The connections and bots online."""
        return self.parts.gateway

    @property
    def api(self) -> ArenaApi:
        """The read-only queries and the JSON API."""
        return self.parts.api

    @property
    def metrics(self) -> ArenaMetrics:
        """``/metrics`` and the log's summary line."""
        return self.parts.metrics

    @property
    def cluster(self) -> ClusterNode | None:
        """This server as a node of several (``allow_multi_node`` on PostgreSQL)."""
        return None if self._parts is None else self._parts.cluster

    @property
    def tournaments(self) -> TournamentService | None:
        """The tournament scheduler and its admin token, once started."""
        return None if self._parts is None else self._parts.tournaments

    @property
    def loop_lag(self) -> runtime.LoopLag:
        """How late the event loop runs (``/healthz``, ``/metrics``)."""
        return self._lag

    @property
    def leaderboards(self) -> Leaderboards:
        """The cached fitted leaderboards."""
        return self.parts.leaderboards

    @property
    def rating_notices(self) -> RatingNotices:
        """What tells each rated match's players their rating after the refit."""
        return self.parts.notices

    @property
    def port(self) -> int:
        """The port actually listened on (useful with port 0)."""
        if self._listener is None:
            raise RuntimeError("the server is not started")
        return self._listener.port

    # Lifecycle --------------------------------------------------------------------

    async def start(self) -> None:
        """Open the store (unless injected), end matches a crash left live, start listening.

        Raises ``StartupError`` (one line, nothing left running) when the server
        cannot start as configured.
        """
        try:
            await self._start()
        except BaseException:
            await self._undo_start()
            raise

    async def _start(self) -> None:
        config = self.config
        ssl_context = _ssl_context(config)
        # The port first: one in use fails the start before the database is touched.
        listener = self._listener = Listener(
            host=config.host,
            port=config.port,
            router=self.router,
            on_websocket=self._on_websocket,
            spawn=self.supervisor.spawn,
            max_message_bytes=MAX_BOT_MESSAGE_BYTES,
            queue_size=config.bot_queue_size,
            close_timeout_s=config.close_timeout_s,
            crowd=self.crowd,
            refusals=self.refusals,
            ssl_context=ssl_context,
            allowed_origins=config.allowed_origins,
            public_url=config.public_url,
            trust_proxy=config.trust_proxy,
        )
        try:
            await listener.bind()
        except OSError as exc:
            raise StartupError(_listen_error(config.host, config.port, exc)) from exc
        if self._store is None:
            self._store = await Store.open(
                config.db_url,
                create=True,
                rating_model=EloModel(config.k_factor),
                writer_process=config.db_writer_process,
                journal_path=config.journal_path,
            )
            # Ownership is the opener's: an injected store is claimed by whoever made it.
            node = await self._store.claim_node(
                config.node_id, allow_multi_node=config.allow_multi_node
            )
            aborted = await self._store.abort_orphans()
            log.info("serving the database as node %s", node)
            if aborted:
                log.warning("aborted %d matches left live by servers that are gone", aborted)
        store = self._store
        # Imported here: the statistics behind tournaments take a while to import, and
        # every ``arena`` command imports this module.
        from arena.tournaments.service import attach_tournaments

        parts = self._parts = assemble(
            config,
            store,
            clock=self._clock,
            sink=self._sink,
            spawn=self.supervisor.spawn,
            router=self.router,
            crowd=self.crowd,
            refusals=self.refusals,
            loop_lag=self._lag,
            health=self.health,
            remote=self._remote,
            orphans_ended=self._orphans_ended,
            tournaments=attach_tournaments,
            fitter=self._fit_process,
        )
        self._unsubscribe = store.subscribe_health(self._store_health_changed)
        gateway = parts.gateway
        # Every game's board before the first bot: pairing and live views use the one rating.
        await parts.leaderboards.refresh_all()
        await listener.start()
        if parts.cluster is not None:
            tls = ssl_context is not None
            url = config.public_url or default_public_url(config.host, self.port, tls)
            await parts.cluster.start(url)
        self.supervisor.every(
            config.ping_interval_s / PING_SLICES,
            lambda: gateway.keepalive(config.ping_timeout_s),
            "keepalive",
        )
        self.supervisor.every(REFUSALS_EVERY_S, self.refusals.log_summary, "refusals")
        self.supervisor.every(config.ping_interval_s, gateway.close_idle, "idle-close")

        def recheck_logins() -> None:
            self.supervisor.spawn(gateway.recheck_logins(), "login-recheck")

        self.supervisor.every(config.login_recheck_s, recheck_logins, "login-recheck")
        if config.summary_interval_s > 0:
            self.supervisor.every(config.summary_interval_s, parts.metrics.summary, "summary")
        open_files.raise_limit()  # once start-up can no longer fail: errors stay one line
        runtime.gc_pauses.install()
        self._lag.start()
        scheme = "wss" if ssl_context is not None else "ws"
        log.info("arena listening on %s://%s:%d", scheme, config.host, self.port)

    async def _undo_start(self) -> None:
        if self._listener is not None:
            self._listener.close()
        await self.supervisor.close(self.config.close_timeout_s)
        if self._fit_process is not None:
            await self._fit_process.close()
        if self.cluster is not None:
            await self.cluster.close()
        if self._store is not None and self._owns_store:
            await self._store.close()
            self._store = None

    def serving(self) -> None:
        """Start-up is over (``arena serve`` has settled its heap): pauses count from now."""
        runtime.gc_pauses.reset()
        self._lag.reset()

    def _store_health_changed(self, health: StoreHealth) -> None:
        if health.state is HealthState.LEASE_LOST:
            # Another node has ended this node's matches: serving on would contradict it.
            log.error("the database lease was lost (%s); shutting down", health.reason)
            self.supervisor.spawn(self.shutdown("this node lost its database lease"), "shutdown")
        elif health.ok and self._parts is not None:
            self.matchmaker.schedule()  # seekers held during the outage can be paired now

    def _on_websocket(self, conn: WebSocketConnection) -> None:
        if self._stopping or self._parts is None:
            conn.close(1001, "server shutting down")
            return
        self._parts.gateway.opened(conn)

    async def __aenter__(self) -> ArenaServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()

    async def wait_stopped(self) -> None:
        """Return once ``shutdown`` has completed."""
        await self._stopped.wait()

    async def shutdown(self, reason: str = "server shutting down") -> None:
        """Abort live matches (unrated), tell every client why, close with 1001. Idempotent."""
        if self._stopping:
            await self._stopped.wait()
            return
        self._stopping = True
        try:
            if self._parts is not None:
                parts = self._parts
                parts.matchmaker.stop()
                parts.gateway.accepting = False
                parts.registry.abort_all(reason)
                await parts.registry.wait_all(self.config.close_timeout_s)
                await parts.gateway.close_all(reason)
            if self._listener is not None:
                self._listener.close()
            self._lag.stop()
            self._unsubscribe()
            await self.supervisor.close(self.config.close_timeout_s)
            if self._fit_process is not None:
                await self._fit_process.close()
            if self.cluster is not None:
                await self.cluster.close()
        finally:
            if self._store is not None and self._owns_store:
                # Commits what it can; what it cannot goes to the recovery journal.
                await self._store.close()
            self._stopped.set()

    # Health -----------------------------------------------------------------------

    def health(self) -> tuple[int, dict[str, Any]]:
        """``/healthz``: 200 and ``ok``; 503 while stopping or while results cannot be stored."""
        parts = self._parts
        store = self._store.health if self._store is not None else None
        status = "ok"
        if self._stopping:
            status = "stopping"
        elif store is not None and not store.ok:
            status = "degraded"
        body: dict[str, Any] = {
            "status": status,
            "protocol_version": PROTOCOL_VERSION,
            "server": SERVER_NAME,
            "uptime_s": round(time.time() - self._started_at, 1),
        }
        if parts is not None:
            now = parts.figures.snapshot()
            body.update(
                bots_online=now.bots_online,
                connections=now.connections,
                live_matches=now.live_matches,
                spectators=now.spectators,
                seeks=now.seeks,
                failed_logins=now.failed_logins,
                open_connections=now.open_connections,
                addresses_connected=now.addresses_connected,
                refused=now.refused,
                gc=runtime.gc_pauses.status(),
                loop_lag_ms=now.loop_lag_ms,
            )
        if store is not None and not store.ok:
            body["store"] = store.reason
            body["store_state"] = store.state.value
            body["store_since"] = store.since.isoformat()
        body.update({k: v() if callable(v) else v for k, v in self.health_extras.items()})
        if parts is not None and parts.cluster is not None:
            body["cluster"] = parts.cluster.status()
        return (200 if status == "ok" else 503), body


def _ssl_context(config: ArenaConfig) -> ssl.SSLContext | None:
    try:
        return config.ssl_context()
    except (OSError, ssl.SSLError, ValueError) as exc:
        raise StartupError(f"--tls-cert/--tls-key: {exc}") from exc


def _listen_error(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} is in use; pass --port (0 picks a free one)"
    if exc.errno in (errno.EADDRNOTAVAIL, errno.EACCES) or isinstance(exc, socket.gaierror):
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}; check --host and --port"
    return f"cannot listen on {host}:{port}: {exc}"
