"""Helpers shared by tests: zips, phases, a server in a thread, S3 buckets."""

from __future__ import annotations

import contextlib
import io
import threading
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from sless.models.admission import HELD_MESSAGE


class ServedApp:
    """An ASGI app served by uvicorn in a thread on 127.0.0.1 (``serve_in_thread``)."""

    def __init__(self, server: Any, thread: threading.Thread, port: int) -> None:
        self.server = server
        self.thread = thread
        self.url = f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


def start_in_thread(app: Any, port: int, *, start_timeout_s: float = 30) -> ServedApp:
    """Start ``app`` (its lifespan included) and return once uvicorn serves it."""
    import uvicorn

    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        lifespan="on",
        log_level="warning",
        timeout_graceful_shutdown=5,
        proxy_headers=False,  # as `sless up`: the app applies X-Forwarded-For itself
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the app did not start (see the log above)")
        time.sleep(0.02)
    return ServedApp(server, thread, port)


@contextlib.contextmanager
def serve_in_thread(app: Any, port: int, *, start_timeout_s: float = 30) -> Iterator[ServedApp]:
    served = start_in_thread(app, port, start_timeout_s=start_timeout_s)
    try:
        yield served
    finally:
        served.stop()


def wait_for(
    what: str, check: Callable[[], Any], timeout: float = 15.0, interval: float = 0.05
) -> Any:
    """Poll ``check`` until it returns something true (returned); fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


async def await_for(
    what: str, check: Callable[[], Any], timeout: float = 15.0, interval: float = 0.05
) -> Any:
    """``wait_for`` inside a running event loop (it sleeps without blocking the loop)."""
    import asyncio

    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(interval)


def with_llm(settings: Any, llm: Any) -> Any:
    """``settings`` pointed at the fake LLM endpoint (the ``llm`` fixture)."""
    settings.llm.base_url = llm.base_url
    settings.llm.model = "fake-model"
    settings.llm.timeout_s = 10
    return settings


def s3_client(endpoint: str) -> Any:
    """A boto3 S3 client for the test S3 server (moto, over real HTTP on loopback)."""
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )


def new_bucket(endpoint: str, prefix: str = "code-") -> str:
    """A fresh, empty bucket on the test S3 server; returns its name."""
    bucket = prefix + uuid.uuid4().hex[:8]
    s3_client(endpoint).create_bucket(Bucket=bucket)
    return bucket


def make_zip(files: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            # fixed timestamps: the same files always give the same bytes and sha256
            archive.writestr(zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0)), content)
    return buffer.getvalue()


def wait_phase(
    client: httpx.Client, path: str, phases: set[str], timeout: float = 120
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        data: dict[str, Any] = client.get(path).json()
        if data["status"]["phase"] in phases:
            return data
        if data["status"].get("message") == HELD_MESSAGE:  # it waits for a person, not time
            raise AssertionError(f"held for review, not {phases}: {data['status']}")
        if time.monotonic() > deadline:
            raise AssertionError(f"phase stayed {data['status']} (wanted {phases})")
        time.sleep(0.1)


def deploy(
    client: httpx.Client,
    namespace: str,
    name: str,
    files: dict[str, str | bytes],
    spec: dict[str, Any] | None = None,
    *,
    expect: str = "Ready",
) -> dict[str, Any]:
    path = f"/v1/namespaces/{namespace}/functions/{name}"
    response = client.put(path, json=spec or {})
    assert response.status_code in (200, 201), response.text
    response = client.post(
        path + "/upload", content=make_zip(files), headers={"Content-Type": "application/zip"}
    )
    assert response.status_code == 202, response.text
    function = wait_phase(client, path, {expect, "Failed", "Ready", "Rejected"})
    assert function["status"]["phase"] == expect, function["status"]
    return function
