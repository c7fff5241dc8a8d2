"""Attack: a RabbitMQ trigger whose broker name answers a public address when the platform
checks it, and the provider's loopback broker when it connects (DNS rebinding).

The platform checks a trigger's broker against the rule of function egress before it
connects (tests/security/test_tenant_broker_reach.py). A check that resolves the name and
a connect that resolves it again can get two answers: the tenant owns the name's DNS and
answers with a short TTL. And a robust AMQP connection reconnects by itself, by name,
whenever the broker goes away, long after any check. Either way the platform would end up
on the provider's own broker (the test's RabbitMQ on 127.0.0.1 stands in for it, with the
credentials the tenant knows, as it would know ``guest``) and consume other tenants'
queues.

The tenant's "public" broker is a test host (tests/netns.py) at a documentation address,
198.51.100.2, which the egress rule does not refuse, forwarding to the test's RabbitMQ;
the name is answered by a resolver patched into this process (the gateway runs in it).
The platform must connect only to an address it checked, on every connect.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from sless.config import Settings
from sless.events import brokers
from tests.conftest import RunningGateway
from tests.integration.events.broker import Broker, consumers_of, queue, rabbitmq
from tests.netns import TestHost
from tests.support import deploy, wait_for

__all__ = ["queue", "rabbitmq"]  # fixtures

pytestmark = pytest.mark.integration

NS = "/v1/namespaces/sless-mallory"
HANDLER = {"handler.py": "def handle(event, context):\n    print('got', event['body'])\n"}
NAME = "localhost"
NEAR, FAR = "198.51.100.1", "198.51.100.2"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    settings.events.brokers_allowed = []  # the provider lists no broker of its own
    return settings


class Resolver:
    """What the platform's resolver (``sless.events.brokers._getaddrinfo``) answers for
    ``NAME``: ``answers`` in turn, the last one from then on. ``NAME`` is ``localhost``,
    which the system's own resolver answers with loopback: the answer a rebinding name
    gives to any lookup made elsewhere."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, answers: list[str]) -> None:
        self.answers = list(answers)
        self.asked = 0

        async def getaddrinfo(host: str, port: int) -> list[Any]:
            assert host == NAME, host
            self.asked += 1
            address = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
            return socket.getaddrinfo(address, port, socket.AF_INET, socket.SOCK_STREAM)

        monkeypatch.setattr(brokers, "_getaddrinfo", getaddrinfo)

    def answer(self, address: str) -> None:
        self.answers = [address]


class Forwarder:
    """The tenant's broker: accepts inside the test host on 5672 and relays each
    connection to the test's RabbitMQ; ``cut`` drops every connection and stops
    accepting (the broker "went away")."""

    def __init__(self, host: TestHost) -> None:
        #: False: a dud, each connection closed at once (it holds no queue)
        self.relay = True
        #: connections accepted so far
        self.accepted = 0
        self.server = host.listen(5672)
        self.open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            self.accepted += 1
            if not self.relay:
                client.close()
                continue
            upstream = socket.create_connection(("127.0.0.1", 5672), timeout=30)
            with self._lock:
                self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pipe, args=(a, b), daemon=True).start()

    def cut(self) -> None:
        with contextlib.suppress(OSError):
            self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()
        with self._lock:
            for sock in self.open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)


@pytest.fixture
def tenant_broker() -> Iterator[Forwarder]:
    if os.geteuid() != 0:
        pytest.fail("building a test host (ip netns, nft) needs root")
    host = TestHost(NEAR, FAR)
    forwarder = Forwarder(host)
    try:
        yield forwarder
    finally:
        forwarder.cut()
        host.remove()


def _trigger(gateway: RunningGateway, rabbitmq: Broker, queue: str) -> Any:
    mallory = gateway.tenant("mallory")
    deploy(mallory, "sless-mallory", "thief", HANDLER)
    url = rabbitmq.url.replace("127.0.0.1", NAME)
    assert mallory.put(f"{NS}/secrets/broker", json={"value": url}).status_code == 201
    rabbitmq.declare(queue)
    body = {"type": "rabbitmq", "function": "thief", "url_secret": "broker", "queue": queue}
    created = mallory.put(f"{NS}/triggers/steal", json=body)
    assert created.status_code == 201, created.text
    return mallory


def _refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the platform logged of refused connects (aio-pika's own records are skipped:
    some of them fail to format)."""
    said = [r.getMessage() for r in caplog.records if r.name.startswith("sless.")]
    return [m for m in said if "sless-mallory/steal" in m and "refused" in m]


def test_the_connect_goes_to_the_address_the_check_passed_not_a_new_lookup(
    gateway: RunningGateway,
    rabbitmq: Broker,
    queue: str,
    tenant_broker: Forwarder,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.INFO, logger="sless.events")
    tenant_broker.relay = False  # the public answer leads nowhere: the loopback one is the aim
    Resolver(monkeypatch, [FAR])  # the check's answer; any other lookup gets loopback
    rabbitmq.declare(queue)
    rabbitmq.publish(queue, [("m1", b'{"another": "tenant\'s message"}')])
    mallory = _trigger(gateway, rabbitmq, queue)
    wait_for(
        "two connects to the checked address, or a consumer on the provider's broker",
        lambda: tenant_broker.accepted >= 2 or consumers_of(queue) > 0,
        timeout=60,
    )
    assert consumers_of(queue) == 0, "the platform connected to the provider's broker"
    assert rabbitmq.count(queue) == 1, "a message left the provider's queue"
    assert "got" not in mallory.get(f"{NS}/functions/thief/logs").text
    assert rabbitmq.password not in caplog.text


def test_a_reconnect_after_the_broker_went_away_is_checked_again(
    gateway: RunningGateway,
    rabbitmq: Broker,
    queue: str,
    tenant_broker: Forwarder,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.INFO, logger="sless.events")
    resolver = Resolver(monkeypatch, [FAR])
    mallory = _trigger(gateway, rabbitmq, queue)
    # through the tenant's broker, as allowed: consuming, and a message reaches the function
    wait_for("the consumer on the tenant's broker", lambda: consumers_of(queue) == 1, timeout=60)
    rabbitmq.publish(queue, [("m1", b'{"n": 1}')])
    logs = f"{NS}/functions/thief/logs"
    wait_for("the first message handled", lambda: "got" in mallory.get(logs).text, timeout=60)
    # the name now answers loopback, and the broker goes away: every reconnect must check
    resolver.answer("127.0.0.1")
    before = len(_refusals(caplog))
    tenant_broker.cut()
    wait_for("two refused reconnects", lambda: len(_refusals(caplog)) >= before + 2, timeout=60)
    assert consumers_of(queue) == 0, "a reconnect went to the provider's broker"
    rabbitmq.publish(queue, [("m2", b'{"n": 2}')])
    wait_for("another refused reconnect", lambda: len(_refusals(caplog)) >= before + 3, timeout=60)
    assert consumers_of(queue) == 0, "a reconnect went to the provider's broker"
    assert rabbitmq.count(queue) == 1, "a message left the provider's queue"
    assert rabbitmq.password not in caplog.text
