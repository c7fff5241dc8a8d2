"""``sless up``: embedded PostgreSQL + gateway + local reconciler in one process."""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from sless.config import Settings
from sless.sandbox import sandbox_available
from sless.store import DataDirInUse, EmbeddedPostgres, SecretKeyError, cipher_for

log = logging.getLogger("sless")


def run_up(settings: Settings) -> None:
    import uvicorn

    from sless.gateway import create_app

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
        ok, reason = sandbox_available(settings.sandbox.bwrap)
        if not ok:
            raise click.ClickException(
                f"{reason}\nInstall bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap),"
                " or for development only, start with --unsafe-no-sandbox."
            )
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

    app = create_app(
        settings,
        database_url,
        on_admin_token=show_admin_token,
        sole_database_user=embedded is not None,
    )
    config = uvicorn.Config(
        app,
        host=settings.gateway.host,
        port=settings.gateway.port,
        lifespan="on",
        log_level="info",
        access_log=False,
        timeout_graceful_shutdown=int(settings.gateway.shutdown_grace_s),
        loop="uvloop",
        http=settings.gateway.http,
    )
    server = _graceful_server_class()(config)
    click.echo(
        f"sless gateway on http://{settings.gateway.host}:{settings.gateway.port}"
        f" (data in {settings.data_dir})",
        err=True,
    )
    try:
        server.run()
    finally:
        if embedded is not None:
            click.echo("Stopping embedded PostgreSQL", err=True)
            embedded.stop()
    if not server.started:
        raise click.ClickException("the gateway did not start (see the messages above)")


def _graceful_server_class() -> type:
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
) -> Settings:
    if data_dir is not None:
        settings.data_dir = data_dir
    if host is not None:
        settings.gateway.host = host
    if port is not None:
        settings.gateway.port = port
    if unsafe_no_sandbox:
        settings.sandbox.unsafe_no_sandbox = True
    return settings
