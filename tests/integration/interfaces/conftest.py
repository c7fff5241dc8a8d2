"""Functions written for a peer (Lambda, OpenFaaS, Knative, ASGI, WSGI), deployed unmodified
with the spec's ``interface`` and called through ``/fn`` in embedded mode: real PostgreSQL,
real validation, real bubblewrap workers."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import RunningGateway
from tests.support import deploy


@pytest.fixture
def acme(gateway: RunningGateway) -> httpx.Client:
    return gateway.tenant("acme")


class Deployed:
    """A function deployed in the tenant ``acme``; ``call`` goes through ``/fn``."""

    def __init__(self, gateway: RunningGateway, name: str) -> None:
        self.path = f"/fn/sless-acme/{name}"
        self.url = f"{gateway.url}{self.path}"

    def scoped(self, *cookies: str) -> list[str]:
        """``Set-Cookie`` values as the gateway passes them on: scoped to the function's
        own path (sless.gateway.pages)."""
        return [f"{cookie}; Path={self.path}" for cookie in cookies]

    def call(self, method: str, path: str = "", **kwargs: Any) -> httpx.Response:
        return httpx.request(method, self.url + path, timeout=30, **kwargs)


def deployed(
    gateway: RunningGateway,
    client: httpx.Client,
    name: str,
    files: dict[str, str | bytes],
    spec: dict[str, Any],
) -> Deployed:
    function = deploy(client, "sless-acme", name, files, spec)
    assert function["status"]["phase"] == "Ready", function["status"]
    return Deployed(gateway, name)
