"""``GET /metrics`` (the provider's scrape: admin token or ``SLESS_METRICS_TOKEN``) and
``GET /v1/namespaces/{ns}/metrics`` (a tenant's own functions, JSON or Prometheus text).

The platform gauges (instances, queue depth, writer buffer) are read when scraped: the
queue depth is one grouped ``count(*)`` over ``invocation_queue``, the rest is in memory.
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, Response

from sless.errors import Unauthorized
from sless.gateway.deps import (
    BackendDep,
    EventsDep,
    InvocationsDep,
    MetricsDep,
    NamespaceDep,
    SettingsDep,
    TenancyDep,
    bearer_token,
    get_principal,
)
from sless.gateway.metrics import TEXT_CONTENT_TYPE, as_json, render_text
from sless.gateway.schema import ERRORS

router = APIRouter(responses=ERRORS)


async def _refresh(
    metrics: MetricsDep, backend: BackendDep, events: EventsDep, invocations: InvocationsDep
) -> None:
    metrics.set_instances(backend.instance_counts())
    scheduler = events.scheduler
    metrics.cron_ticks.set(scheduler.fired if scheduler is not None else 0)
    metrics.set_consumer_lag(events.consumer_lags())
    depth = await invocations.queue_depth()
    metrics.queue_depth.clear()
    for state, n in depth.items():
        metrics.queue_depth.labels(state).set(n)


async def _authorize(request: Request, settings: SettingsDep, tenancy: TenancyDep) -> None:
    configured = settings.metrics.token
    token = bearer_token(request.headers.get("authorization"))
    if (
        configured is not None
        and token is not None
        and hmac.compare_digest(token.encode(), configured.get_secret_value().encode())
    ):
        return
    principal = await get_principal(request, tenancy)
    if not principal.is_admin:
        raise Unauthorized("/metrics needs the provider admin token or SLESS_METRICS_TOKEN")


@router.get("/metrics", include_in_schema=False)
async def metrics(
    request: Request,
    settings: SettingsDep,
    tenancy: TenancyDep,
    metrics: MetricsDep,
    backend: BackendDep,
    events: EventsDep,
    invocations: InvocationsDep,
) -> Response:
    await _authorize(request, settings, tenancy)
    await _refresh(metrics, backend, events, invocations)
    return Response(metrics.text(), media_type=TEXT_CONTENT_TYPE)


@router.get("/v1/namespaces/{ns}/metrics")
async def namespace_metrics(
    ns: NamespaceDep,
    backend: BackendDep,
    metrics: MetricsDep,
    accept: Annotated[str | None, Header()] = None,
) -> Response:
    """The caller's functions only (selected by the ``namespace`` label)."""
    metrics.set_instances(backend.instance_counts())
    found = metrics.of_namespace(ns)
    if accept is not None and "text/plain" in accept:
        return Response(render_text(found), media_type=TEXT_CONTENT_TYPE)
    return JSONResponse({"namespace": ns, **as_json(found)})
