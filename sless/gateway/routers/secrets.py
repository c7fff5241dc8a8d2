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

from sless.errors import Invalid, NotFound
from sless.gateway.deps import (
    BackendDep,
    EventsDep,
    NameDep,
    NamespaceDep,
    PagersDep,
    QuotasDep,
    SecretsDep,
)
from sless.gateway.paging import PageDep
from sless.gateway.preconditions import IfMatch, IfMatchDep, set_etag
from sless.gateway.schema import ERRORS, page_model, with_etag

router = APIRouter(prefix="/v1", responses=ERRORS)

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


@router.get(
    "/namespaces/{ns}/secrets",
    response_model=page_model("SecretPage", "secrets", total=True),
)
async def list_secrets(
    ns: NamespaceDep, pagers: PagersDep, secrets: SecretsDep, page: PageDep
) -> dict[str, Any]:
    """In name order; ``total`` is exact (a tenant has few secrets)."""
    stored = await secrets.list_all(ns)
    pager = pagers.of("secrets", ns, page)
    items, fields = pager.page_by_name("secrets", stored, lambda s: s.name)
    return {"secrets": [s.view() for s in items], **fields}


async def _check(secrets: SecretsDep, ns: str, name: str, if_match: IfMatch) -> None:
    try:
        current = (await secrets.get(ns, name)).resource_version
    except NotFound:
        current = None
    if_match.check(current)


@router.put("/namespaces/{ns}/secrets/{name}", responses={**with_etag(200), **with_etag(201)})
async def put_secret(
    ns: NamespaceDep,
    name: NameDep,
    quotas: QuotasDep,
    backend: BackendDep,
    events: EventsDep,
    secrets: SecretsDep,
    response: Response,
    body: Annotated[dict[str, Any], Body()],
    if_match: IfMatchDep,
) -> dict[str, Any]:
    value = _parse(body)
    async with quotas.guard(ns) as quota:
        if if_match is not None:
            await _check(secrets, ns, name, if_match)
        sizes = await secrets.usage(ns)
        quota.check_new("secrets", list(sizes), name)
        used = sum(sizes.values())
        size = len(value.get_secret_value().encode())
        quota.check("secret_bytes", used, used - sizes.get(name, 0) + size)
        info, created = await secrets.put(ns, name, value)
    events.trigger_changed()  # a consumer using it reconnects with the new value
    await backend.secret_changed(ns, name)  # functions using it restart with it
    response.status_code = 201 if created else 200
    set_etag(response, info.resource_version)
    return info.view()


@router.get("/namespaces/{ns}/secrets/{name}", responses=with_etag())
async def get_secret(
    ns: NamespaceDep, name: NameDep, secrets: SecretsDep, response: Response
) -> dict[str, Any]:
    info = await secrets.get(ns, name)
    set_etag(response, info.resource_version)
    return info.view()


@router.delete("/namespaces/{ns}/secrets/{name}")
async def delete_secret(
    ns: NamespaceDep,
    name: NameDep,
    quotas: QuotasDep,
    backend: BackendDep,
    events: EventsDep,
    secrets: SecretsDep,
    if_match: IfMatchDep,
) -> dict[str, Any]:
    async with quotas.guard(ns):
        if if_match is not None:
            await _check(secrets, ns, name, if_match)
        await secrets.delete(ns, name)
    events.trigger_changed()
    await backend.secret_changed(ns, name)
    return {"deleted": name}
