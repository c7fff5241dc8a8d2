"""``sless up``: embedded PostgreSQL + gateway + local reconciler in one process."""

from __future__ import annotations

import contextlib
import logging
import resource
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sless.config import Settings
from sless.sandbox import runsc_available, sandbox_available, seccomp_available
from sless.store import DataDirInUse, EmbeddedPostgres, SecretKeyError, cipher_for

if TYPE_CHECKING:
    from sless.gateway import Admission, Gateway
    from sless.gateway.platform import Platform

log = logging.getLogger("sless")

#: how long a thread holding the GIL keeps it when another asks (CPython's default: 5 ms)
GIL_SWITCH_INTERVAL_S = 0.001
#: file descriptors kept for everything but client connections (workers, PostgreSQL, logs)
RESERVED_FDS = 1024
#: connections the kernel queues for accept (capped by net.core.somaxconn)
LISTEN_BACKLOG = 1024


def run_up(settings: Settings) -> None:
    from sless.gateway import create_app

    _check_sandbox(settings)
    settings.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        # before PostgreSQL starts: production without a key stops here, in one line
        cipher_for(settings)
    except SecretKeyError as e:
        raise click.ClickException(str(e)) from None
    embedded: EmbeddedPostgres | None = None
    if settings.database.url is not None:
        database_url = settings.database.url.get_secret_value()
        click.echo("Using the PostgreSQL server from SLESS_DATABASE_URL", err=True)
    else:
        embedded = EmbeddedPostgres(settings.data_dir / "pg")
        click.echo(f"Starting embedded PostgreSQL in {embedded.data_dir}", err=True)
        try:
            database_url = embedded.start()
        except DataDirInUse as e:
            raise click.ClickException(str(e)) from None
        embedded.supervise()  # started again if it dies while the gateway runs

    def show_admin_token(token: str) -> None:
        click.echo("")
        click.secho("Provider admin token (shown once, store it now):", bold=True)
        click.echo(f"  export SLESS_ADMIN_TOKEN={token}")
        click.echo("")
        sys.stdout.flush()

    started: bool | None = None
    try:
        app = create_app(
            settings,
            database_url,
            on_admin_token=show_admin_token,
            sole_database_user=embedded is not None,
        )
        click.echo(
            f"sless gateway on http://{settings.gateway.host}:{settings.gateway.port}"
            f" (data in {settings.data_dir}, HTTP server {settings.gateway.http})",
            err=True,
        )
        _allow_connections(settings)
        if settings.gateway.http == "granian":
            started = _serve_granian(app, settings)
        else:
            started = _serve_uvicorn(app, settings)
    except KeyboardInterrupt:  # Ctrl-C before the server's own handlers were installed
        click.echo("Interrupted while starting", err=True)
    finally:
        # a second Ctrl-C now would leave PostgreSQL half-stopped (and click would end
        # the log with "Aborted!"): the stop finishes first; SIGTERM/SIGKILL still work
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if embedded is not None:
            click.echo("Stopping embedded PostgreSQL", err=True)
            embedded.stop()
    if started is False:
        raise click.ClickException("the gateway did not start (see the messages above)")
    click.echo("sless stopped cleanly", err=True)


def _check_sandbox(settings: Settings) -> None:
    """Refuse to start, in one line, without the sandbox and its seccomp filter (embedded
    mode), unless a development setting says otherwise (with a warning)."""
    if settings.sandbox.unsafe_no_sandbox and settings.sandbox.isolation == "gvisor":
        raise click.ClickException("--isolation gvisor and --unsafe-no-sandbox contradict")
    if settings.sandbox.unsafe_no_sandbox:
        if settings.environment == "production":
            raise click.ClickException("--unsafe-no-sandbox is refused in production")
        click.secho(
            "WARNING: functions run WITHOUT a sandbox (--unsafe-no-sandbox): any function can"
            " read this machine's files and reach its network. Never use this with"
            " untrusted code.",
            fg="red",
            err=True,
        )
    elif settings.backend != "kubernetes":  # Kubernetes mode: functions run in pods
        if not settings.sandbox.seccomp:
            if settings.environment == "production":
                raise click.ClickException("SLESS_SANDBOX_SECCOMP=false is refused in production")
            click.secho(
                "WARNING: workers run without their seccomp filter (SLESS_SANDBOX_SECCOMP="
                "false): for benchmarks only.",
                fg="red",
                err=True,
            )
        if settings.sandbox.isolation == "gvisor":
            _check_gvisor(settings)
            return
        ok, reason = seccomp_available()
        if not ok:  # never a sandbox without its filter
            raise click.ClickException(reason)
        ok, reason = sandbox_available(settings.sandbox.bwrap)
        if not ok:
            raise click.ClickException(
                f"{reason}\nInstall bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap),"
                " or for development only, start with --unsafe-no-sandbox."
            )


def _check_gvisor(settings: Settings) -> None:
    """Refuse to start, in one line, when gVisor is asked and no usable runsc exists (never
    bubblewrap instead); otherwise fix the path and the platform the probe found."""
    runsc, reason = runsc_available(settings.sandbox.runsc, settings.sandbox.runsc_platform)
    if runsc is None:
        raise click.ClickException(f"--isolation gvisor: {reason}")
    settings.sandbox.runsc = runsc.runsc
    settings.sandbox.runsc_platform = runsc.platform
    click.echo(f"workers run under gVisor ({runsc.runsc}, platform {runsc.platform})", err=True)


def _serve_uvicorn(app: Gateway, settings: Settings) -> bool:
    """uvicorn on uvloop with the configured parser; True once it had started."""
    import uvicorn

    # uvicorn has no request-head timeout: the connection guard closes idle connections
    admission = _admitting(app, settings, idle_timeout_s=settings.gateway.header_timeout_s)
    config = uvicorn.Config(
        admission,
        host=settings.gateway.host,
        port=settings.gateway.port,
        lifespan="on",
        log_level="info",
        access_log=False,
        timeout_graceful_shutdown=int(settings.gateway.shutdown_grace_s),
        loop="uvloop",
        http=_http_protocol(app, admission, settings.gateway.http),
        # the app applies SLESS_GATEWAY_FORWARDED_ALLOW_IPS itself, whichever the server
        proxy_headers=False,
        # past it uvicorn answers new connections 503 and keeps serving the accepted ones
        limit_concurrency=settings.gateway.max_connections,
        backlog=LISTEN_BACKLOG,
    )
    server = graceful_server_class()(config)
    server.run()
    return bool(server.started)


def _http_protocol(app: Gateway, admission: Admission, http: str) -> Any:
    """uvicorn's ``http``: the gateway's own protocol class for httptools (sless.gateway.
    front: a bounded request head; ``express`` adds the express path), h11 by name."""
    from sless.gateway.express import Express
    from sless.gateway.front import front_protocol

    if http == "httptools":
        return front_protocol(None)
    if http != "express":
        return http

    started: list[Platform] = []

    def platform() -> Platform | None:
        # one lookup for the process's life (Starlette's ``State`` costs a microsecond)
        if not started and app.started:
            started.append(app.api.state.platform)
        return started[0] if started else None

    trusted = admission.limits.trusted_proxies
    return front_protocol(Express(platform, admission.activity, trusted))


def _serve_granian(app: Gateway, settings: Settings) -> bool:
    """granian's embedded server on this process's uvloop; True once it had started.

    HTTP/1.1 only (no h2c) with WebSockets (only ``/fn/...`` of a ``websocket: true``
    function accepts them, docs/websockets.md), no access log.
    Ctrl-C / SIGTERM stop it gracefully: requests in flight finish (for up to
    ``shutdown_grace_s``), the ASGI lifespan stops the platform, and this returns, so the
    embedded PostgreSQL is stopped after it.
    """
    import asyncio

    import uvloop
    from granian.constants import HTTPModes, Interfaces
    from granian.http import HTTP1Settings
    from granian.log import LogLevels
    from granian.server.embed import Server

    gateway = settings.gateway
    server = Server(
        _admitting(app, settings, idle_timeout_s=None),  # hyper bounds the request head
        address=gateway.host,
        port=gateway.port,
        interface=Interfaces.ASGI,
        http=HTTPModes.http1,
        # header_read_timeout runs from the connection's start (or its previous response)
        # to the end of the request head, whatever the pace of the bytes: a slowloris
        # connection is closed after it, and so is an idle keep-alive one
        http1_settings=HTTP1Settings(
            keep_alive=True, header_read_timeout=int(gateway.header_timeout_s * 1000)
        ),
        websockets=True,
        log_level=LogLevels.warning,
        log_access=False,
        # backpressure is the connections granian holds at once (its default, the backlog,
        # 128, let ~150 slow connections starve everyone); past it, new connections wait
        # in the listen queue and the accepted ones keep being served
        backlog=LISTEN_BACKLOG,
        backpressure=gateway.max_connections,
    )
    server.workers_kill_timeout = max(1, int(settings.gateway.shutdown_grace_s))
    # granian warns at every start that its embedded server is experimental; that server
    # is the one sless chose and tests (request smuggling, shutdown, the whole suite), so
    # the notice only alarms users. Its other warnings still show.
    logging.getLogger("_granian").addFilter(_NotExperimentalNotice())
    # granian's Rust thread takes the GIL to hand each request to the loop and each answer
    # back; with CPython's 5 ms switch interval it could wait that long behind a busy loop
    # thread, several times per call (docs/PERFORMANCE.md: p99 at 16 connections)
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, server.stop)
        try:
            await server.serve()
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    uvloop.run(serve())
    return app.started


def _admitting(app: Gateway, settings: Settings, *, idle_timeout_s: float | None) -> Admission:
    """``app`` behind the body deadline, the per-client caps and the connection guard."""
    from sless.gateway import (
        Activity,
        Admission,
        AdmissionLimits,
        ConnectionGuard,
        GuardLimits,
        listening_families,
        trusted_proxies,
    )

    gateway = settings.gateway
    trusted = trusted_proxies(gateway.forwarded_allow_ips)
    activity = Activity()
    guard = ConnectionGuard(
        GuardLimits(
            port=gateway.port,
            max_per_client=gateway.max_connections_per_client,
            trusted_proxies=trusted,
            idle_timeout_s=idle_timeout_s,
            families=listening_families(gateway.host),
        ),
        activity,
    )
    limits = AdmissionLimits(
        body_timeout_s=gateway.body_timeout_s,
        body_min_rate_bytes_per_s=gateway.body_min_rate_bytes_per_s,
        max_per_client=gateway.max_connections_per_client,
        trusted_proxies=trusted,
    )
    return Admission(app, limits, activity, guard.run)


def _allow_connections(settings: Settings) -> None:
    """Raise the open-file limit to its hard limit, and ``max_connections`` to fit in it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        wanted = hard if hard != resource.RLIM_INFINITY else 1 << 20
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
    room = max(16, soft - RESERVED_FDS)
    if settings.gateway.max_connections > room:
        log.warning(
            "SLESS_GATEWAY_MAX_CONNECTIONS=%d does not fit in the open-file limit (%d,"
            " %d kept for workers and PostgreSQL): using %d",
            settings.gateway.max_connections,
            soft,
            RESERVED_FDS,
            room,
        )
        settings.gateway.max_connections = room


class _NotExperimentalNotice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "Embedded server is experimental!"


def graceful_server_class() -> type:
    import uvicorn

    class GracefulServer(uvicorn.Server):
        """Ctrl-C / SIGTERM shut down gracefully and then *return*.

        Plain uvicorn re-raises the signal after its shutdown, which would kill the
        process before the embedded PostgreSQL is stopped.
        """

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            signals = (signal.SIGINT, signal.SIGTERM)
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in signals}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    return GracefulServer


def apply_overrides(
    settings: Settings,
    *,
    data_dir: Path | None,
    host: str | None,
    port: int | None,
    unsafe_no_sandbox: bool,
    isolation: str | None = None,
) -> Settings:
    if data_dir is not None:
        settings.data_dir = data_dir
    if host is not None:
        settings.gateway.host = host
    if port is not None:
        settings.gateway.port = port
    if unsafe_no_sandbox:
        settings.sandbox.unsafe_no_sandbox = True
    if isolation == "gvisor":
        settings.sandbox.isolation = "gvisor"
    elif isolation == "bubblewrap":
        settings.sandbox.isolation = "bubblewrap"
    return settings
