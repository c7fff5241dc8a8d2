"""Triggers: what invokes a function besides a direct call (``http``, ``cron``, ``rabbitmq``).

The same API in both modes: the backend keeps the triggers (tables or Trigger resources).
Everything a caller can get wrong is refused here with a 4xx before anything is stored:
an invalid spec or schedule, an unknown time zone, a function that does not exist, a
rabbitmq trigger without exactly one of ``queue``/``exchange`` or naming a missing secret.
RabbitMQ triggers are consumed in both modes (``sless.events.consuming``): by the gateways
in embedded mode, by the ``sless events`` process in Kubernetes mode. Their secrets live in
PostgreSQL in both modes, so the check that the secret exists is the same.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Body, Response
from pydantic import ValidationError

from sless.errors import Invalid, NotFound
from sless.events import BrokerUrlRefused, check_broker_scheme, check_schedule, next_tick
from sless.gateway.deps import (
    BackendDep,
    EventsDep,
    NameDep,
    NamespaceDep,
    PagersDep,
    QuotasDep,
    SecretsDep,
    SettingsDep,
)
from sless.gateway.paging import PageDep
from sless.gateway.preconditions import IfMatchDep, set_etag
from sless.gateway.schema import ERRORS, page_model, with_etag
from sless.gateway.support import current_version, require_function
from sless.models import RabbitMQSource, Trigger, TriggerSpec

router = APIRouter(prefix="/v1", responses=ERRORS)


def trigger_view(trigger: Trigger) -> dict[str, Any]:
    data = trigger.model_dump(mode="json")
    if trigger.spec.type == "cron" and trigger.spec.enabled:
        tick = next_tick(trigger.spec, datetime.now(UTC))
        data["status"]["next_tick"] = tick.isoformat() if tick else None
    if trigger.spec.type == "rabbitmq":
        with contextlib.suppress(ValidationError):  # stored specs were checked when written
            data["spec"].update(RabbitMQSource.of(trigger.spec).model_dump(mode="json"))
    return data


async def check_rabbitmq(secrets: SecretsDep, namespace: str, spec: TriggerSpec) -> None:
    """The fields of a rabbitmq trigger are valid and its secret exists (else 422)."""
    try:
        source = RabbitMQSource.of(spec)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        raise Invalid(f"rabbitmq trigger: {where + ': ' if where else ''}{message}") from None
    try:
        url, _ = await secrets.reveal(namespace, source.url_secret)
    except NotFound:
        raise Invalid(
            f"url_secret: secret {source.url_secret!r} not found in namespace {namespace!r}"
            " (create it with PUT .../secrets/{name} first)"
        ) from None
    try:
        check_broker_scheme(url.get_secret_value())
    except BrokerUrlRefused as e:
        raise Invalid(f"url_secret: secret {source.url_secret!r}: {e}") from None


@router.get(
    "/namespaces/{ns}/triggers",
    response_model=page_model("TriggerPage", "triggers", total=True),
)
async def list_triggers(
    ns: NamespaceDep, backend: BackendDep, pagers: PagersDep, page: PageDep
) -> dict[str, Any]:
    """In name order; ``total`` is exact."""
    triggers = await backend.list_triggers(ns)
    pager = pagers.of("triggers", ns, page)
    items, fields = pager.page_by_name("triggers", triggers, lambda t: t.name)
    return {"triggers": [trigger_view(t) for t in items], **fields}


@router.put("/namespaces/{ns}/triggers/{name}", responses={**with_etag(200), **with_etag(201)})
async def put_trigger(
    ns: NamespaceDep,
    name: NameDep,
    quotas: QuotasDep,
    backend: BackendDep,
    events: EventsDep,
    secrets: SecretsDep,
    settings: SettingsDep,
    response: Response,
    body: Annotated[dict[str, Any], Body()],
    if_match: IfMatchDep,
) -> dict[str, Any]:
    allow_seconds = settings.events.allow_seconds_field
    spec = TriggerSpec.model_validate(body, context={"allow_seconds": allow_seconds})
    if spec.type == "rabbitmq":
        await check_rabbitmq(secrets, ns, spec)
    if spec.type == "cron":
        check_schedule(spec, now=datetime.now(UTC))
    await require_function(backend, ns, spec.function)
    async with quotas.guard(ns) as quota:
        if if_match is not None:
            if_match.check(await current_version(backend, "trigger", ns, name))
        names = [t.name for t in await backend.list_triggers(ns)]
        quota.check_new("triggers", names, name)
        trigger, created = await backend.put_trigger(ns, name, spec)
    events.trigger_changed()
    response.status_code = 201 if created else 200
    set_etag(response, trigger.resource_version)
    return trigger_view(trigger)


@router.get("/namespaces/{ns}/triggers/{name}", responses=with_etag())
async def get_trigger(
    ns: NamespaceDep, name: NameDep, backend: BackendDep, response: Response
) -> dict[str, Any]:
    trigger = await backend.get_trigger(ns, name)
    set_etag(response, trigger.resource_version)
    return trigger_view(trigger)


@router.delete("/namespaces/{ns}/triggers/{name}")
async def delete_trigger(
    ns: NamespaceDep,
    name: NameDep,
    quotas: QuotasDep,
    backend: BackendDep,
    events: EventsDep,
    if_match: IfMatchDep,
) -> dict[str, Any]:
    async with quotas.guard(ns):
        if if_match is not None:
            if_match.check(await current_version(backend, "trigger", ns, name))
        await backend.delete_trigger(ns, name)
    events.trigger_changed()
    return {"deleted": name}
