"""``sless events``: the RabbitMQ trigger consumers of Kubernetes mode."""

from __future__ import annotations

import click

from sless.cli.options import load_settings


@click.command("events")
def events() -> None:
    """Run the RabbitMQ trigger consumers (Kubernetes mode).

    Consumes every enabled rabbitmq Trigger resource of every tenant and calls the
    functions' pods; the gateway starts no consumers in this mode. Needs
    SLESS_BACKEND=kubernetes and SLESS_DATABASE_URL (the gateways' database: broker URLs
    are tenant secrets there, and every message is an invocation record);
    SLESS_KUBERNETES_KUBECONFIG as for the operator. SIGTERM or Ctrl-C stops it cleanly:
    in-flight messages finish, or go back to the broker unacknowledged. Several replicas
    share the work (competing consumers).
    """
    from sless.cli.consumers import run_events

    run_events(load_settings())
