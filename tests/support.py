"""Helpers shared by tests: building zips and waiting for phases."""

from __future__ import annotations

import io
import time
import zipfile
from typing import Any

import httpx


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
    return wait_phase(client, path, {expect, "Failed", "Ready", "Rejected"})
