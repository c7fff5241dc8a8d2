"""``sless events``: the RabbitMQ trigger consumers of Kubernetes mode, as their own process.

Logs go to stderr. They never hold the broker URLs (the consumers log connection errors by
type only) nor the database URL; the AMQP client libraries are kept at WARNING, their
debug output being the one place a connection's parameters could show up.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

import asyncpg
import click

from sless.config import Settings
from sless.errors import SlessError

#: third-party loggers held at WARNING (their INFO/DEBUG lines describe connections)
_QUIET = ("aio_pika", "aiormq", "pamqp", "asyncio")


def configure_logging(level: int = logging.INFO) -> None:
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for name in _QUIET:
        logging.getLogger(name).setLevel(max(level, logging.WARNING))


def run_events(settings: Settings) -> None:
    """Run until SIGTERM or SIGINT; refuse what cannot work, with one line on stderr."""
    from sless.events import serve_events

    if settings.backend != "kubernetes":
        raise click.ClickException(
            "sless events runs in Kubernetes mode (SLESS_BACKEND=kubernetes); in embedded"
            " mode the gateway (sless up) consumes the rabbitmq triggers itself"
        )
    if settings.database.url is None:
        raise click.ClickException(
            "SLESS_DATABASE_URL is not set: the consumers read the tenants' secrets and"
            " write invocation records there (the gateways' database)"
        )
    from sless.store import SecretKeyError, cipher_for

    try:
        cipher_for(settings)
    except SecretKeyError as e:
        raise click.ClickException(str(e)) from None
    database_url = settings.database.url.get_secret_value()
    configure_logging()

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await serve_events(settings, database_url, stop)

    try:
        asyncio.run(main())
    except SlessError as e:  # the Kubernetes API did not answer, or refused us
        raise click.ClickException(f"sless events could not start: {e.message}") from None
    except (OSError, asyncpg.PostgresError) as e:
        # never the exception's text: a connection error may quote the database address
        raise click.ClickException(
            f"sless events could not start: the database is unavailable ({type(e).__name__})"
        ) from None
