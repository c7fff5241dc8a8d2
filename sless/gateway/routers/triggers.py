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
from sless.gateway.deps import NamespaceDep, PlatformDep
from sless.gateway.platform import Platform
from sless.models import RabbitMQSource, Trigger, TriggerSpec, check_name

router = APIRouter(prefix="/v1")


def path_name(name: str) -> str:
    try:
        return check_name(name)
    except ValueError as e:
        raise Invalid(f"invalid name {name[:80]!r}: {e}") from None


def trigger_view(trigger: Trigger) -> dict[str, Any]:
    data = trigger.model_dump(mode="json")
    if trigger.spec.type == "cron" and trigger.spec.enabled:
        tick = next_tick(trigger.spec, datetime.now(UTC))
        data["status"]["next_tick"] = tick.isoformat() if tick else None
    if trigger.spec.type == "rabbitmq":
        with contextlib.suppress(ValidationError):  # stored specs were checked when written
            data["spec"].update(RabbitMQSource.of(trigger.spec).model_dump(mode="json"))
    return data


async def check_rabbitmq(platform: Platform, namespace: str, spec: TriggerSpec) -> None:
    """The fields of a rabbitmq trigger are valid and its secret exists (else 422)."""
    try:
        source = RabbitMQSource.of(spec)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        raise Invalid(f"rabbitmq trigger: {where + ': ' if where else ''}{message}") from None
    try:
        url, _ = await platform.secrets.reveal(namespace, source.url_secret)
    except NotFound:
        raise Invalid(
            f"url_secret: secret {source.url_secret!r} not found in namespace {namespace!r}"
            " (create it with PUT .../secrets/{name} first)"
        ) from None
    try:
        check_broker_scheme(url.get_secret_value())
    except BrokerUrlRefused as e:
        raise Invalid(f"url_secret: secret {source.url_secret!r}: {e}") from None


async def require_function(platform: Platform, namespace: str, function: str) -> None:
    """A trigger or job must name an existing function of the same namespace (422)."""
    try:
        await platform.backend.get_function(namespace, function)
    except NotFound:
        raise Invalid(f"function {function!r} not found in namespace {namespace!r}") from None


@router.get("/namespaces/{ns}/triggers")
async def list_triggers(ns: NamespaceDep, platform: PlatformDep) -> dict[str, Any]:
    triggers = await platform.backend.list_triggers(ns)
    return {"triggers": [trigger_view(t) for t in triggers], "count": len(triggers)}


@router.put("/namespaces/{ns}/triggers/{name}")
async def put_trigger(
    ns: NamespaceDep,
    name: str,
    platform: PlatformDep,
    response: Response,
    body: Annotated[dict[str, Any], Body()],
) -> dict[str, Any]:
    path_name(name)
    allow_seconds = platform.settings.events.allow_seconds_field
    spec = TriggerSpec.model_validate(body, context={"allow_seconds": allow_seconds})
    if spec.type == "rabbitmq":
        await check_rabbitmq(platform, ns, spec)
    if spec.type == "cron":
        check_schedule(spec, now=datetime.now(UTC))
    await require_function(platform, ns, spec.function)
    trigger, created = await platform.backend.put_trigger(ns, name, spec)
    platform.events.trigger_changed()
    response.status_code = 201 if created else 200
    return trigger_view(trigger)


@router.get("/namespaces/{ns}/triggers/{name}")
async def get_trigger(ns: NamespaceDep, name: str, platform: PlatformDep) -> dict[str, Any]:
    return trigger_view(await platform.backend.get_trigger(ns, path_name(name)))


@router.delete("/namespaces/{ns}/triggers/{name}")
async def delete_trigger(ns: NamespaceDep, name: str, platform: PlatformDep) -> dict[str, Any]:
    await platform.backend.delete_trigger(ns, path_name(name))
    platform.events.trigger_changed()
    return {"deleted": name}
