"""Fixtures for triggers, jobs and asynchronous invocations: fast schedules and retries,
more gateways on the same database (several processes sharing one PostgreSQL), and a real
RabbitMQ (``broker.py``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from pydantic import SecretStr

from sless.config import Settings
from sless.gateway import create_app
from tests.conftest import ADMIN_TOKEN, RunningGateway, free_port
from tests.integration.events.broker import queue, rabbitmq
from tests.support import ServedApp, start_in_thread

__all__ = ["queue", "rabbitmq"]  # fixtures (the broker is shared with tests/kube/)

#: a function that prints the trigger headers it got and echoes its event
ECHO = {
    "handler.py": (
        "import json, time\n"
        "STARTED = time.time()\n"
        "def handle(event, context):\n"
        "    h = event['headers']\n"
        "    print('tick', h.get('sless-tick'), 'trigger', h.get('sless-trigger'),"
        " 'age', round(time.time() - STARTED, 3), flush=True)\n"
        "    return {'body': event['body'], 'trigger': h.get('sless-trigger'),"
        " 'run_id': h.get('sless-run-id'), 'invocation_id': context.invocation_id}\n"
    )
}
FAILING = {
    "handler.py": (
        "def handle(event, context):\n"
        "    print('failing attempt', context.invocation_id, flush=True)\n"
        "    raise RuntimeError('boom')\n"
    )
}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    events = settings.events
    events.allow_seconds_field = True
    events.scheduler_interval_s = 0.5
    events.poll_interval_s = 0.2
    events.retry_base_s = 0.2
    events.retry_max_s = 1.0
    events.max_attempts = 3
    return settings


def sql(database_url: str, query: str, *args: Any) -> list[dict[str, Any]]:
    """Run one statement on the test's database (from a synchronous test)."""

    async def run() -> list[dict[str, Any]]:
        conn = await asyncpg.connect(database_url)
        try:
            return [dict(r.items()) for r in await conn.fetch(query, *args)]
        finally:
            await conn.close()

    return asyncio.run(run())


def wait_for(
    check: Callable[[], Any], what: str, timeout: float = 60, show: Callable[[], Any] | None = None
) -> Any:
    """Poll ``check`` until it returns something truthy (bounded; not a timing check)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}: {show() if show else value}")
        time.sleep(0.1)


def invocations(client: httpx.Client, ns: str, function: str) -> list[dict[str, Any]]:
    response = client.get(
        f"/v1/namespaces/{ns}/invocations", params={"function": function, "limit": 1000}
    )
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()["invocations"]
    return rows


class GatewayStarter:
    """Starts more gateways on the test's database."""

    def __init__(self, base: Settings, database_url: str, tmp_path: Path) -> None:
        self.base = base
        self.database_url = database_url
        self.tmp_path = tmp_path
        self._running: list[tuple[ServedApp, RunningGateway]] = []
        self._started = 0

    def start(self, data_dir: Path | None = None, **events: Any) -> RunningGateway:
        """A new gateway; ``data_dir`` shares another's code blobs and builds (gateways on
        one machine share them; without S3 a new data directory has no code)."""
        settings = self.base.model_copy(deep=True)
        self._started += 1
        settings.data_dir = data_dir or self.tmp_path / f"gateway-{self._started}"
        settings.data_dir.mkdir(exist_ok=True)
        settings.gateway.port = free_port()
        settings.admin.token = SecretStr(ADMIN_TOKEN)
        for key, value in events.items():
            setattr(settings.events, key, value)
        app = create_app(settings, self.database_url)
        served = start_in_thread(app, settings.gateway.port)
        admin = httpx.Client(
            base_url=served.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60
        )
        running = RunningGateway(url=served.url, settings=settings, admin=admin, app=app)
        self._running.append((served, running))
        return running

    def stop(self, gateway: RunningGateway) -> None:
        for served, running in list(self._running):
            if running is gateway:
                for client in [running.admin, *running.clients]:
                    client.close()
                served.stop()
                self._running.remove((served, running))

    def stop_all(self) -> None:
        for _, running in list(self._running):
            self.stop(running)


@pytest.fixture
def gateways(settings: Settings, database_url: str, tmp_path: Path) -> Iterator[GatewayStarter]:
    starter = GatewayStarter(settings, database_url, tmp_path)
    yield starter
    starter.stop_all()


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")
