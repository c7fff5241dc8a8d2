"""RabbitMQ triggers in embedded mode against a real broker (Debian's ``rabbitmq-server``):
each message invokes the function once, failures are retried then dead-lettered, a broker
restart in the middle of a stream loses nothing, and the broker URL (a write-only secret)
never appears in an answer or a log line."""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import aio_pika
import httpx
import pytest

from tests.conftest import RunningGateway
from tests.integration.events.broker import USER, Broker, await_startup, ctl
from tests.integration.events.conftest import FAILING, invocations, wait_for
from tests.support import deploy

pytestmark = pytest.mark.integration

NS = "sless-acme"

#: prints the message id it got (the test counts distinct ids: idempotent on the id)
RECEIVER: dict[str, str | bytes] = {
    "handler.py": (
        "import sys, time\n"
        "def handle(event, context):\n"
        "    h = event['headers']\n"
        "    b = event['body']\n"
        "    time.sleep(float(b.get('sleep', 0)) if isinstance(b, dict) else 0)\n"
        "    # one write: calls run in threads, and print() writes its pieces separately\n"
        "    sys.stdout.write(f\"msg {h.get('sless-message-id')} attempt {h.get('sless-attempt')}"
        " trigger {h.get('sless-trigger')}\\n\")\n"
        "    sys.stdout.flush()\n"
        "    return {'got': event['body']}\n"
    )
}


def _path(kind: str, name: str, ns: str = NS) -> str:
    return f"/v1/namespaces/{ns}/{kind}/{name}"


def _runs(client: httpx.Client, function: str, trigger: str) -> list[dict[str, Any]]:
    return [r for r in invocations(client, NS, function) if r["trigger"] == trigger]


def _message_ids(client: httpx.Client, function: str) -> set[str]:
    logs = client.get(_path("functions", function) + "/logs", params={"tail": 1024 * 1024}).text
    return set(re.findall(r"msg (\S+) attempt", logs))


def _consumers(gateway: RunningGateway) -> Any:
    return gateway.app.api.state.platform.events.consumers  # type: ignore[attr-defined]


def _setup(
    acme: httpx.Client,
    broker: Broker,
    queue: str,
    files: dict[str, Any],
    **trigger: Any,
) -> dict[str, Any]:
    deploy(acme, NS, "fn", files)
    assert acme.put(_path("secrets", "broker"), json={"value": broker.url}).status_code == 201
    broker.declare(queue)
    body = {"type": "rabbitmq", "function": "fn", "url_secret": "broker", "queue": queue}
    created = acme.put(_path("triggers", "consume"), json={**body, **trigger})
    assert created.status_code == 201, created.text
    return body


def test_each_message_invokes_the_function_once_and_disabling_stops_consuming(
    queue: str, gateway: RunningGateway, acme: httpx.Client, rabbitmq: Broker
) -> None:
    body = _setup(acme, rabbitmq, queue, RECEIVER)
    spec = acme.get(_path("triggers", "consume")).json()["spec"]
    assert (spec["prefetch"], spec["max_attempts"], spec["queue"]) == (10, 5, queue)

    ids = [f"m-{i}" for i in range(20)]
    rabbitmq.publish(queue, [(i, f'{{"n": "{i}"}}'.encode()) for i in ids])
    runs = wait_for(
        lambda: len(_runs(acme, "fn", "consume")) >= 20 and _runs(acme, "fn", "consume"),
        "twenty invocations",
    )
    assert all(r["status"] == 200 for r in runs)
    wait_for(lambda: rabbitmq.count(queue) == 0, "the queue drained (acknowledged)")
    # the worker's output reaches the log a moment after its answer
    wait_for(lambda: _message_ids(acme, "fn") == set(ids), "every message id in the logs")
    time.sleep(1)
    assert len(_runs(acme, "fn", "consume")) == 20  # once each

    disabled = acme.put(_path("triggers", "consume"), json={**body, "enabled": False})
    assert disabled.status_code == 200
    assert disabled.json()["status"]["phase"] == "Suspended"
    wait_for(lambda: _consumers(gateway).consumer(NS, "consume") is None, "the consumer stopped")
    rabbitmq.publish(queue, [("late", b'{"n": "late"}')])
    time.sleep(2)
    assert rabbitmq.count(queue) == 1
    assert len(_runs(acme, "fn", "consume")) == 20

    acme.put(_path("triggers", "consume"), json=body)  # enabled again: the message is taken
    wait_for(lambda: len(_runs(acme, "fn", "consume")) == 21, "the late message")
    assert acme.delete(_path("triggers", "consume")).status_code == 200
    wait_for(lambda: _consumers(gateway).consumer(NS, "consume") is None, "the consumer stopped")


def test_a_failing_function_is_retried_then_dead_lettered(
    queue: str, gateway: RunningGateway, acme: httpx.Client, rabbitmq: Broker
) -> None:
    _setup(acme, rabbitmq, queue, FAILING, max_attempts=3)
    rabbitmq.publish(queue, [("bad-1", b'{"n": 1}'), ("bad-2", b'{"n": 2}')])
    rabbitmq.declare(f"{queue}.dead")
    wait_for(lambda: rabbitmq.count(f"{queue}.dead") == 2, "two dead-lettered messages")
    # 2 messages x max_attempts (records are written in batches, a moment later)
    runs = wait_for(
        lambda: len(_runs(acme, "fn", "consume")) >= 6 and _runs(acme, "fn", "consume"),
        "six recorded attempts",
    )
    time.sleep(1)
    assert len(_runs(acme, "fn", "consume")) == 6
    assert all(r["status"] >= 500 for r in runs)
    assert rabbitmq.count(queue) == 0
    dead = rabbitmq.get(f"{queue}.dead")
    assert dead is not None
    assert dead.message_id in {"bad-1", "bad-2"}
    assert dead.headers["x-sless-attempts"] == 3
    assert dead.body in {b'{"n": 1}', b'{"n": 2}'}


#: refuses (400) what it cannot handle: a retry would not change the answer
PICKY: dict[str, str | bytes] = {
    "handler.py": (
        "def handle(event, context):\n"
        "    if event['body'].get('ok'):\n"
        "        return {'ok': True}\n"
        "    return {'statusCode': 400, 'body': 'refused'}\n"
    )
}


def test_an_exchange_binding_and_a_refused_message_dead_lettered_at_once(
    queue: str, gateway: RunningGateway, acme: httpx.Client, rabbitmq: Broker
) -> None:
    exchange = f"{queue}.ex"
    consumed = f"{NS}.consume"  # the platform's queue for an exchange trigger

    async def declare_exchange(channel: aio_pika.abc.AbstractChannel) -> None:
        await channel.declare_exchange(exchange, aio_pika.ExchangeType.TOPIC, durable=True)

    async def publish(channel: aio_pika.abc.AbstractChannel) -> None:
        ex = await channel.get_exchange(exchange)
        for key, body in [("order.new", b'{"ok": true}'), ("order.bad", b'{"ok": false}')]:
            await ex.publish(aio_pika.Message(body, message_id=key), routing_key=key)
        await ex.publish(aio_pika.Message(b'{"ok": true}'), routing_key="other.thing")

    async def cleanup(channel: aio_pika.abc.AbstractChannel) -> None:
        await channel.exchange_delete(exchange)

    rabbitmq.run(declare_exchange)
    try:
        deploy(acme, NS, "fn", PICKY)
        secret = {"value": rabbitmq.url}
        assert acme.put(_path("secrets", "broker"), json=secret).status_code == 201
        body = {
            "type": "rabbitmq",
            "function": "fn",
            "url_secret": "broker",
            "exchange": exchange,
            "routing_key": "order.*",
            "max_attempts": 4,
        }
        created = acme.put(_path("triggers", "consume"), json=body)
        assert created.status_code == 201, created.text
        assert created.json()["spec"]["routing_key"] == "order.*"
        wait_for(
            lambda: (c := _consumers(gateway).consumer(NS, "consume")) and c.consuming.is_set(),
            "the consumer bound to the exchange",
        )
        rabbitmq.run(publish)
        runs = wait_for(
            lambda: len(_runs(acme, "fn", "consume")) >= 2 and _runs(acme, "fn", "consume"),
            "two invocations",
        )
        assert sorted(r["status"] for r in runs) == [200, 400]
        wait_for(lambda: rabbitmq.count(f"{consumed}.dead") == 1, "the refused message")
        dead = rabbitmq.get(f"{consumed}.dead")
        assert dead is not None
        assert dead.message_id == "order.bad"
        assert dead.headers["x-sless-attempts"] == 1  # not retried
        assert dead.headers["x-sless-status"] == 400
        time.sleep(1)
        assert len(_runs(acme, "fn", "consume")) == 2  # other.thing is not bound
    finally:
        acme.delete(_path("triggers", "consume"))
        wait_for(lambda: _consumers(gateway).consumer(NS, "consume") is None, "the consumer gone")
        rabbitmq.run(cleanup)
        rabbitmq.delete_queues(consumed)


def test_a_broker_restart_in_the_middle_of_a_stream_loses_no_message(
    queue: str, gateway: RunningGateway, acme: httpx.Client, rabbitmq: Broker
) -> None:
    _setup(acme, rabbitmq, queue, RECEIVER, prefetch=2)
    ids = [f"s-{i}" for i in range(300)]
    rabbitmq.publish(queue, [(i, b'{"sleep": 0.05}') for i in ids])  # ~8 s of work
    wait_for(lambda: len(_message_ids(acme, "fn")) >= 30, "the stream under way")
    assert ctl("stop_app").returncode == 0
    try:
        assert len(_message_ids(acme, "fn")) < len(ids)  # the restart is in the middle
        time.sleep(1)
    finally:
        assert ctl("start_app").returncode == 0
        await_startup()
    seen = wait_for(
        lambda: len(found := _message_ids(acme, "fn")) == len(ids) and found,
        "every message processed after the restart",
        timeout=90,
        show=lambda: (
            f"{len(_message_ids(acme, 'fn'))} of {len(ids)}; missing"
            f" {sorted(set(ids) - _message_ids(acme, 'fn'))[:5]};"
            f" {ctl('list_queues', '-q', 'name', 'messages', 'messages_unacknowledged').stdout};"
            f" statuses {sorted({r['status'] for r in _runs(acme, 'fn', 'consume')})}"
            f" runs {len(_runs(acme, 'fn', 'consume'))}"
        ),
    )
    assert seen == set(ids)
    wait_for(lambda: rabbitmq.count(queue) == 0, "the queue drained (acknowledged)")
    assert rabbitmq.count(f"{queue}.dead") == 0
    consumer = _consumers(gateway).consumer(NS, "consume")
    assert consumer is not None
    assert consumer.consuming.is_set()  # the same consumer, reconnected


def test_the_consumer_lag_is_exported_while_messages_wait(
    queue: str,
    gateway: RunningGateway,
    acme: httpx.Client,
    rabbitmq: Broker,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the consumer asks the broker every 0.2 s instead of every 10 s
    monkeypatch.setattr("sless.events.consuming.LAG_INTERVAL_S", 0.2)
    _setup(acme, rabbitmq, queue, RECEIVER, prefetch=1)
    wait_for(lambda: _consumers(gateway).consumer(NS, "consume") is not None, "the consumer")
    series = (
        'sless_rabbitmq_consumer_lag_messages{function_name="fn",namespace="sless-acme",'
        'trigger="consume"} '
    )

    def lag() -> float | None:
        found = [
            line.removeprefix(series)
            for line in gateway.admin.get("/metrics").text.splitlines()
            if line.startswith(series)
        ]
        return float(found[0]) if found else None

    wait_for(lambda: lag() == 0.0, "the lag of the empty queue")
    rabbitmq.publish(queue, [(f"l-{i}", b'{"sleep": 0.5}') for i in range(8)])  # ~4 s of work
    highest = wait_for(lambda: (got := lag()) is not None and got >= 4 and got, "a lag of 4+")
    assert highest <= 8
    # the tenant sees it among its own figures
    mine = acme.get(f"/v1/namespaces/{NS}/metrics").json()["functions"]["fn"]
    assert mine["sless_rabbitmq_consumer_lag_messages"].keys() == {"trigger=consume"}
    wait_for(lambda: len(_message_ids(acme, "fn")) == 8, "every message processed", timeout=60)
    wait_for(lambda: lag() == 0.0, "the lag back to 0")


def test_the_broker_url_secret_never_appears_in_answers_or_logs(
    queue: str,
    gateway: RunningGateway,
    acme: httpx.Client,
    rabbitmq: Broker,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    answers: list[str] = []

    def keep(response: httpx.Response) -> httpx.Response:
        answers.append(response.text)
        return response

    deploy(acme, NS, "fn", RECEIVER)
    put = keep(acme.put(_path("secrets", "broker"), json={"value": rabbitmq.url}))
    assert put.status_code == 201
    assert set(put.json()) == {"name", "created_at", "updated_at", "resource_version"}
    again = keep(acme.put(_path("secrets", "broker"), json={"value": rabbitmq.url}))
    assert again.status_code == 200
    listed = keep(acme.get(f"/v1/namespaces/{NS}/secrets")).json()
    assert [s["name"] for s in listed["secrets"]] == ["broker"]
    keep(acme.get(_path("secrets", "broker")))
    wrong = rabbitmq.url.replace(rabbitmq.password, rabbitmq.password + "-wrong")
    assert keep(acme.put(_path("secrets", "wrong"), json={"value": wrong})).status_code == 201
    bad_type = keep(acme.put(_path("secrets", "x"), json={"value": 123, "other": wrong}))
    assert bad_type.status_code == 422

    rabbitmq.declare(queue)
    body = {"type": "rabbitmq", "function": "fn", "url_secret": "broker", "queue": queue}
    assert keep(acme.put(_path("triggers", "good"), json=body)).status_code == 201
    failing = {**body, "url_secret": "wrong", "queue": f"{queue}.other"}
    assert keep(acme.put(_path("triggers", "refused"), json=failing)).status_code == 201
    # the gateway connects, not a sandbox: the cloud metadata address is refused
    metadata = f"amqp://{USER}:{rabbitmq.password}@169.254.169.254:5672/"
    assert acme.put(_path("secrets", "metadata"), json={"value": metadata}).status_code == 201
    to_metadata = {**body, "url_secret": "metadata", "queue": f"{queue}.meta"}
    assert keep(acme.put(_path("triggers", "metadata"), json=to_metadata)).status_code == 201
    keep(acme.get(f"/v1/namespaces/{NS}/triggers"))
    rabbitmq.publish(queue, [("one", b"{}")])
    wait_for(lambda: len(_runs(acme, "fn", "good")) == 1, "one invocation")
    wait_for(
        lambda: "broker connection failed" in caplog.text, "the refused connection to be logged"
    )
    wait_for(lambda: "cloud metadata): never reachable" in caplog.text, "the metadata address")
    keep(acme.get(_path("functions", "fn") + "/logs"))

    # the 4xx answers a caller gets wrong
    invalid = [
        ({**body, "url_secret": "missing"}, "secret 'missing' not found"),
        ({**body, "exchange": "ex", "routing_key": "k"}, "exactly one of queue or exchange"),
        ({"type": "rabbitmq", "function": "fn", "url_secret": "broker"}, "exactly one of"),
        ({**body, "routing_key": "k"}, "routing_key goes with exchange"),
        ({**body, "prefetch": 0}, "prefetch"),
        ({**body, "queue": "amq.reserved"}, "reserved"),
        ({"type": "rabbitmq", "function": "fn", "queue": queue}, "url_secret"),
        ({**body, "url_secret": "not-amqp"}, "must be amqp://"),
    ]
    assert acme.put(_path("secrets", "not-amqp"), json={"value": "http://x/"}).status_code == 201
    for spec, message in invalid:
        refused = keep(acme.put(_path("triggers", "bad"), json=spec))
        assert refused.status_code == 422, refused.text
        assert message in refused.json()["error"]["message"], refused.text

    assert acme.delete(_path("triggers", "refused")).status_code == 200
    assert acme.delete(_path("triggers", "metadata")).status_code == 200
    assert keep(acme.delete(_path("secrets", "wrong"))).status_code == 200
    assert acme.get(_path("secrets", "wrong")).status_code == 404

    for text in answers:
        assert rabbitmq.password not in text
    assert rabbitmq.password not in caplog.text
    for record in caplog.records:
        assert rabbitmq.password not in record.getMessage()
        assert rabbitmq.password not in repr(record.args)


def test_another_tenant_gets_404_on_secrets(
    gateway: RunningGateway, acme: httpx.Client, rabbitmq: Broker
) -> None:
    assert acme.put(_path("secrets", "broker"), json={"value": rabbitmq.url}).status_code == 201
    other = gateway.tenant("globex")
    for response in [
        other.get(f"/v1/namespaces/{NS}/secrets"),
        other.get(_path("secrets", "broker")),
        other.put(_path("secrets", "broker"), json={"value": "amqp://x"}),
        other.delete(_path("secrets", "broker")),
    ]:
        assert response.status_code == 404, response.text
    assert other.get("/v1/namespaces/sless-globex/secrets").json()["count"] == 0
    # a globex trigger cannot name acme's secret either
    deploy(other, "sless-globex", "fn", RECEIVER)
    spec = {"type": "rabbitmq", "function": "fn", "url_secret": "broker", "queue": "q"}
    refused = other.put(_path("triggers", "steal", "sless-globex"), json=spec)
    assert refused.status_code == 422
    # acme's secret is untouched
    assert acme.get(_path("secrets", "broker")).status_code == 200
    # deleting the tenant deletes its secrets
    assert gateway.admin.delete("/v1/admin/tenants/acme").status_code == 200
    again = gateway.tenant("acme")
    assert again.get(f"/v1/namespaces/{NS}/secrets").json()["count"] == 0
