"""Recording every management action in the audit log (``sless.store.audit``).

``AuditMiddleware`` wraps the FastAPI management app only: ``/fn/...`` is dispatched
around it (``gateway/app.py``), so invocations never pay for it. Every mutating request
(PUT, POST, DELETE, PATCH) under ``/v1/`` gives exactly one row, refused and failed ones
included. The row is written when the status is known and before the answer goes out,
inside the request: a graceful shutdown waits for it, nothing is lost, and a caller who
got an answer finds the row already there (``sless deploy`` then ``sless audit``).

What a row may hold, and why:

- the actor from the ``Principal`` that ``deps.get_principal`` stashes in the scope (kind,
  tenant, namespace, auth provider, token id); an unauthenticated attempt is
  ``anonymous`` with no namespace, so only the provider sees it and nobody can write into
  another tenant's log by naming its namespace in a path;
- the tenant log a row belongs to is always the *actor's* namespace: a tenant's request
  against another tenant's namespace is in the actor's log, never in the target's;
- the action is named from the matched route's template (``function.put``,
  ``tenant.create``), never from the raw path, so names are a small bounded set;
- the target is the route's path parameters, cut short; handlers may name a better target
  with ``note`` (the tenant a POST creates, the function a review decision is about);
- never a token, a header value or a request body.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sless.gateway.platform import Platform
from sless.models import namespace_for
from sless.store import AuditEntry, AuditRepository
from sless.tenancy import Principal

log = logging.getLogger(__name__)

MUTATING = frozenset({"PUT", "POST", "DELETE", "PATCH"})
#: the scope key of this request's ``_Notes``: one mutable object, so that what a
#: dependency or a handler writes reaches the middleware whatever copies the scope
_KEY = "sless.audit"

#: path segments that name a collection, and their singular (the action's subject)
_COLLECTIONS = {
    "functions": "function",
    "triggers": "trigger",
    "jobs": "job",
    "secrets": "secret",
    "tenants": "tenant",
    "tokens": "token",
    "reviews": "review",
    "invocations": "invocation",
    "namespaces": "namespace",
}
_VERBS = {"PUT": "put", "POST": "create", "DELETE": "delete", "PATCH": "patch"}


@dataclass
class _Notes:
    principal: Principal | None = None
    target: dict[str, str] = field(default_factory=dict)


def stash_principal(request: Request, principal: Principal) -> None:
    """Remember who is calling, for the audit row of this request (if it gets one)."""
    notes = request.scope.get(_KEY)
    if isinstance(notes, _Notes):
        notes.principal = principal


def note(
    request: Request,
    *,
    target_namespace: str | None = None,
    target_name: str | None = None,
    detail: str | None = None,
) -> None:
    """Name the target (or add a short detail) of this request's audit row."""
    notes = request.scope.get(_KEY)
    if not isinstance(notes, _Notes):
        return
    for key, value in (
        ("target_namespace", target_namespace),
        ("target_name", target_name),
        ("detail", detail),
    ):
        if value is not None:
            notes.target[key] = value


def action_name(method: str, template: str) -> str:
    """``PUT /v1/namespaces/{ns}/functions/{name}`` -> ``function.put``.

    Literal segments are collections (known ones, or any followed by a parameter) or, at
    the end after a parameter, a verb (``.../upload``, ``.../approve``).
    """
    parts = [p for p in template.split("/") if p and p not in ("v1", "admin")]
    if parts[:2] == ["namespaces", "{ns}"]:
        parts = parts[2:]
    subject = "api"
    verb = _VERBS.get(method, method.lower())
    for i, part in enumerate(parts):
        if part.startswith("{"):
            continue
        followed_by_parameter = i + 1 < len(parts) and parts[i + 1].startswith("{")
        if part in _COLLECTIONS or followed_by_parameter:
            subject = _COLLECTIONS.get(part, part.removesuffix("s"))
        else:
            verb = part
    return f"{subject}.{verb}"


def outcome_for(status: int) -> str:
    if status < 400:
        return "ok"
    if status in (401, 403):
        return "denied"
    if status == 404:
        return "not_found"
    if status == 409:
        return "conflict"
    if status == 429:
        return "limited"
    if status < 500:
        return "invalid"
    return "error"


def _target(scope: Scope) -> tuple[str | None, str | None]:
    params: dict[str, Any] = scope.get("path_params") or {}
    namespace = params.get("ns")
    if namespace is None and "tenant" in params:
        namespace = namespace_for(str(params["tenant"]))
    rest = [str(v) for k, v in params.items() if k != "ns"]
    return (str(namespace) if namespace is not None else None), ("/".join(rest) or None)


def entry_for(scope: Scope, notes: _Notes, status: int) -> AuditEntry:
    method: str = scope["method"]
    route = scope.get("route")
    action = "unknown"
    if isinstance(route, Route) and method in (route.methods or ()):
        action = action_name(method, route.path)
    target_namespace, target_name = _target(scope)
    noted = notes.target
    principal = notes.principal
    client = scope.get("client")
    return AuditEntry(
        actor_kind=principal.kind if principal else "anonymous",
        tenant=principal.tenant if principal else None,
        namespace=principal.namespace if principal and not principal.is_admin else None,
        auth_provider=principal.via if principal else None,
        auth_subject=f"token:{principal.token_id}" if principal and principal.token_id else None,
        client=client[0] if client else "unknown",
        method=method,
        action=action,
        target_namespace=noted.get("target_namespace", target_namespace),
        target_name=noted.get("target_name", target_name),
        status=status,
        outcome=outcome_for(status),
        detail=noted.get("detail"),
    )


class AuditMiddleware:
    def __init__(self, app: ASGIApp, platform: Callable[[], Platform]) -> None:
        self.app = app
        self._platform = platform

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in MUTATING
            or not scope["path"].startswith("/v1/")
        ):
            await self.app(scope, receive, send)
            return
        notes = scope[_KEY] = _Notes()
        recorded = False

        async def record_then_send(message: Message) -> None:
            nonlocal recorded
            if message["type"] == "http.response.start" and not recorded:
                recorded = True
                await self._record(entry_for(scope, notes, message["status"]))
            await send(message)

        try:
            await self.app(scope, receive, record_then_send)
        finally:
            if not recorded:
                # an exception escaped the app: it is answered 500 further out
                await self._record(entry_for(scope, notes, 500))

    async def _record(self, entry: AuditEntry) -> None:
        try:
            await AuditRepository(self._platform().db).record(entry)
        except Exception as e:
            # the action has happened: answer anyway, but a lost row must not go unnoticed
            log.error(
                "audit row not written (%s %s): %s", entry.action, entry.status, type(e).__name__
            )
