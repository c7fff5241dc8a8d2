"""A real RabbitMQ for the tests that need one (Debian's ``rabbitmq-server``), shared by
``tests/integration/events/`` (embedded mode) and ``tests/kube/`` (the ``sless events``
process in Kubernetes mode).

The broker is started at most once per test session however many modules use the
``rabbitmq`` fixture: each module that imports it registers its own copy of the fixture
with pytest, and the copies share one reference-counted broker (``_acquire``/``_release``),
so a second copy never changes the password the first one handed out.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import aio_pika
import pytest

USER = "sless-test"


def ctl(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["rabbitmqctl", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def await_startup(deadline_s: float = 90) -> None:
    deadline = time.monotonic() + deadline_s
    while ctl("await_startup", "--timeout", "10", timeout=30).returncode != 0:
        if time.monotonic() > deadline:
            raise RuntimeError("rabbitmq-server did not start")
        time.sleep(1)


@dataclass(frozen=True)
class Broker:
    url: str
    password: str

    def run(self, coro_fn: Any, *args: Any) -> Any:
        """Run ``coro_fn(channel, *args)`` on a fresh connection (from a synchronous test)."""

        async def go() -> Any:
            connection = await aio_pika.connect(self.url)
            try:
                channel = await connection.channel()
                return await coro_fn(channel, *args)
            finally:
                await connection.close()

        return asyncio.run(go())

    def declare(self, queue: str) -> None:
        async def declare(channel: aio_pika.abc.AbstractChannel) -> None:
            await channel.declare_queue(queue, durable=True)

        self.run(declare)

    def publish(self, queue: str, bodies: list[tuple[str, bytes]], **kwargs: Any) -> None:
        async def publish(channel: aio_pika.abc.AbstractChannel) -> None:
            for message_id, body in bodies:
                message = aio_pika.Message(
                    body,
                    message_id=message_id,
                    content_type="application/json",
                    delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
                    **kwargs,
                )
                await channel.default_exchange.publish(message, routing_key=queue)

        self.run(publish)

    def count(self, queue: str) -> int:
        async def count(channel: aio_pika.abc.AbstractChannel) -> int:
            declared = await channel.declare_queue(queue, passive=True)
            n = declared.declaration_result.message_count
            return int(n or 0)

        result: int = self.run(count)
        return result

    def get(self, queue: str) -> aio_pika.abc.AbstractIncomingMessage | None:
        async def get(
            channel: aio_pika.abc.AbstractChannel,
        ) -> aio_pika.abc.AbstractIncomingMessage | None:
            declared = await channel.declare_queue(queue, passive=True)
            message = await declared.get(fail=False)
            if message is not None:
                await message.ack()
            return message

        return self.run(get)  # type: ignore[no-any-return]

    def delete_queues(self, prefix: str) -> None:
        listed = ctl("list_queues", "-q", "--no-table-headers", "name").stdout.split()
        mine = [n for n in listed if n == prefix or n.startswith(prefix + ".")]

        async def delete(channel: aio_pika.abc.AbstractChannel) -> None:
            for name in mine:
                await channel.queue_delete(name)

        self.run(delete)


_lock = threading.Lock()
_users = 0
_shared: Broker | None = None
_started = False


def consumers_of(queue_name: str) -> int:
    """How many consumers the broker has on ``queue_name`` (0: none, or no such queue)."""
    listed = ctl("list_queues", "-q", "--no-table-headers", "name", "consumers").stdout
    for line in listed.splitlines():
        name, _, count = line.partition("\t")
        if name.strip() == queue_name:
            return int(count)
    return 0


def _acquire() -> Broker:
    """The running broker, started (and installed with apt, as root) on first use, with a
    user whose password is unique to this session."""
    global _users, _shared, _started
    with _lock:
        if _shared is not None:
            _users += 1
            return _shared
        if shutil.which("rabbitmq-server") is None:
            if os.geteuid() != 0:
                pytest.skip("rabbitmq-server is not installed and installing it needs root")
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            subprocess.run(
                ["apt-get", "install", "-y", "-qq", "rabbitmq-server"],
                check=True,
                env=env,
                capture_output=True,
                timeout=600,
            )
        if ctl("status", timeout=30).returncode != 0:
            subprocess.run(["rabbitmq-server", "-detached"], check=True, timeout=60)
            _started = True
        else:  # the node may run with its app stopped (an interrupted restart): else a no-op
            ctl("start_app")
        await_startup()
        password = "pw-" + secrets.token_hex(16)
        if ctl("add_user", USER, password).returncode != 0:
            assert ctl("change_password", USER, password).returncode == 0
        assert ctl("set_permissions", "-p", "/", USER, ".*", ".*", ".*").returncode == 0
        _shared = Broker(f"amqp://{USER}:{password}@127.0.0.1:5672/", password)
        _users = 1
        return _shared


def _release() -> None:
    """The last user out deletes the test user, and stops the broker if it started it."""
    global _users, _shared, _started
    with _lock:
        _users -= 1
        if _users > 0:
            return
        _shared = None
        ctl("delete_user", USER)
        if _started:
            _started = False
            ctl("stop", timeout=120)


@pytest.fixture(scope="session")
def rabbitmq() -> Iterator[Broker]:
    """A real RabbitMQ, running for the whole session (see the module docstring)."""
    broker = _acquire()
    try:
        yield broker
    finally:
        _release()


@pytest.fixture
def queue(rabbitmq: Broker) -> Iterator[str]:
    """A fresh queue name; the queue and its ``.retry.*``/``.dead`` queues go afterwards."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    yield name
    rabbitmq.delete_queues(name)
