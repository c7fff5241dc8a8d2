"""Tenant secrets: write-only. ``PUT`` stores a value, ``GET`` lists names and times,
``DELETE`` removes one; no call ever answers with a value.

The value is a ``SecretStr`` from the request body on (masked in every ``repr``), so a
validation error, a log line or an exception cannot carry it: pydantic's error for a
wrong type echoes no input here because the handler turns it into a short message.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Response
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from sless.errors import Invalid
from sless.gateway.deps import NamespaceDep, PlatformDep
from sless.gateway.routers.triggers import path_name

router = APIRouter(prefix="/v1")

MAX_SECRET_BYTES = 8 * 1024


class SecretBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: SecretStr = Field(min_length=1)


def _parse(body: dict[str, Any]) -> SecretStr:
    try:
        value = SecretBody.model_validate(body).value
    except ValidationError:
        # never the pydantic error itself: it may quote the input
        raise Invalid('the body must be {"value": "<a non-empty string>"}') from None
    if len(value.get_secret_value().encode()) > MAX_SECRET_BYTES:
        raise Invalid(f"a secret is at most {MAX_SECRET_BYTES} bytes")
    return value


@router.get("/namespaces/{ns}/secrets")
async def list_secrets(ns: NamespaceDep, platform: PlatformDep) -> dict[str, Any]:
    secrets = await platform.secrets.list_all(ns)
    return {"secrets": [s.view() for s in secrets], "count": len(secrets)}


@router.put("/namespaces/{ns}/secrets/{name}")
async def put_secret(
    ns: NamespaceDep,
    name: str,
    platform: PlatformDep,
    response: Response,
    body: Annotated[dict[str, Any], Body()],
) -> dict[str, Any]:
    path_name(name)
    info, created = await platform.secrets.put(ns, name, _parse(body))
    platform.events.trigger_changed()  # a consumer using it reconnects with the new value
    await platform.backend.secret_changed(ns, name)  # functions using it restart with it
    response.status_code = 201 if created else 200
    return info.view()


@router.get("/namespaces/{ns}/secrets/{name}")
async def get_secret(ns: NamespaceDep, name: str, platform: PlatformDep) -> dict[str, Any]:
    return (await platform.secrets.get(ns, path_name(name))).view()


@router.delete("/namespaces/{ns}/secrets/{name}")
async def delete_secret(ns: NamespaceDep, name: str, platform: PlatformDep) -> dict[str, Any]:
    await platform.secrets.delete(ns, path_name(name))
    platform.events.trigger_changed()
    await platform.backend.secret_changed(ns, name)
    return {"deleted": name}
