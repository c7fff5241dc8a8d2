"""Attack: a tenant points a RabbitMQ trigger at the provider's own broker.

The gateway (embedded mode; ``sless events`` in Kubernetes mode) connects to a trigger's
broker itself, from the machine's network, so no sandbox and no egress allowlist stand in
the way. A broker on the machine's loopback (RabbitMQ's ``guest`` works from there only,
which is exactly where the gateway connects from) or in the provider's private network
holds other tenants' queues. The test's broker on 127.0.0.1 stands in for it; the tenant
knows its credentials here, as it would know ``guest``.

Unless the provider lists that broker (``SLESS_EVENTS_BROKERS_ALLOWED``), the platform never
connects to it: no consumer registers on the queue and no message reaches the function.
The same rule as function egress decides (``sless.models.reach``).
"""

from __future__ import annotations

import logging

import pytest

from sless.config import Settings
from tests.conftest import RunningGateway
from tests.integration.events.broker import Broker, consumers_of, queue, rabbitmq
from tests.support import deploy, wait_for

__all__ = ["queue", "rabbitmq"]  # fixtures

pytestmark = pytest.mark.integration

NS = "/v1/namespaces/sless-mallory"
HANDLER = {"handler.py": "def handle(event, context):\n    print('stolen', event['body'])\n"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.events.brokers_allowed = []  # the provider lists no broker of its own
    return settings


def test_a_trigger_on_the_providers_loopback_broker_never_connects(
    gateway: RunningGateway, rabbitmq: Broker, queue: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="sless.events")
    mallory = gateway.tenant("mallory")
    deploy(mallory, "sless-mallory", "thief", HANDLER)
    assert mallory.put(f"{NS}/secrets/broker", json={"value": rabbitmq.url}).status_code == 201
    rabbitmq.declare(queue)
    rabbitmq.publish(queue, [("m1", b'{"another": "tenant\'s message"}')])
    body = {"type": "rabbitmq", "function": "thief", "url_secret": "broker", "queue": queue}
    created = mallory.put(f"{NS}/triggers/steal", json=body)
    assert created.status_code == 201, created.text
    # the consumer's first try at the broker ends one way or the other, in its log
    tried = wait_for(
        "the consumer's first try",
        lambda: [r.getMessage() for r in caplog.records if "sless-mallory/steal" in r.getMessage()],
        timeout=30,
    )
    assert "refused" in tried[0], tried
    assert rabbitmq.password not in caplog.text
    assert consumers_of(queue) == 0, "the platform connected to the provider's broker"
    assert rabbitmq.count(queue) == 1, "a message left the provider's queue"
    assert "stolen" not in mallory.get(f"{NS}/functions/thief/logs").text
