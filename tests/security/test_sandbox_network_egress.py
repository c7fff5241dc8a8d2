"""Attack: a function without egress reaches the network (the host's loopback services,
DNS, the internet, the cloud metadata address)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sless.sandbox import Worker
from tests.integration.sandbox.harness import launch, make_spec, require_sandbox, run_probe

pytestmark = pytest.mark.integration

CONNECT = """
import socket
outcomes = {}
for name, addr in TARGETS.items():
    try:
        socket.create_connection(addr, timeout=2).close()
        outcomes[name] = "connected"
    except OSError as e:
        outcomes[name] = type(e).__name__
try:
    socket.getaddrinfo("example.com", 443)
    outcomes["dns"] = "resolved"
except OSError as e:
    outcomes["dns"] = type(e).__name__
result = outcomes
"""


@pytest.fixture
async def host_service() -> AsyncIterator[tuple[int, list[str]]]:
    """A TCP service on the host's 127.0.0.1, recording who connects."""
    seen: list[str] = []

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append("connection")
        writer.close()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    yield port, seen
    server.close()
    await server.wait_closed()


async def _probe(worker: Worker, port: int) -> dict[str, str]:
    targets = {
        "host_loopback": ("127.0.0.1", port),
        "internet": ("1.1.1.1", 53),
        "metadata": ("169.254.169.254", 80),
    }
    data = await run_probe(worker, f"TARGETS = {targets!r}\n{CONNECT}")
    result: dict[str, str] = data["result"]
    return result


async def test_network_egress_is_blocked(
    host_service: tuple[int, list[str]], tmp_path: Path
) -> None:
    require_sandbox()
    port, seen = host_service
    worker = await launch(make_spec(tmp_path, network=False))
    try:
        outcomes = await _probe(worker, port)
    finally:
        await worker.stop()
    assert outcomes["host_loopback"] == "ConnectionRefusedError"  # its own, empty loopback
    assert outcomes["internet"] == "OSError"  # Network is unreachable
    assert outcomes["metadata"] == "OSError"
    assert outcomes["dns"] == "gaierror"
    await asyncio.sleep(0.05)
    assert seen == []


async def test_network_allowed_reaches_the_host_service(
    host_service: tuple[int, list[str]],
    tmp_path: Path,
    isolation: str,
    request: pytest.FixtureRequest,
) -> None:
    """The control: the same probe connects when the function has network (not vacuous)."""
    if isolation == "gvisor":
        # no function is given the host network; under rootless runsc the control has none
        request.applymarker(
            pytest.mark.xfail(strict=True, reason="rootless runsc has no host network")
        )
    require_sandbox()
    port, seen = host_service
    worker = await launch(make_spec(tmp_path, network=True))
    try:
        outcomes = await _probe(worker, port)
    finally:
        await worker.stop()
    assert outcomes["host_loopback"] == "connected"
    assert seen == ["connection"]
