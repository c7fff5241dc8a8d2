"""Functions in Kubernetes mode: the Function custom resources the gateway writes.

A mixin of ``KubernetesBackend`` (its desired-state role): the kopf operator turns these
resources into build Jobs, Deployments and Services. A spec is replaced with the
resourceVersion it was read at, so a concurrent change (another gateway replica, the
operator's status update) makes the write fail with 409; it is then read and written again
a few times before the caller gets ``Conflict``. Uploads write the status before the spec:
the phase ``Validating`` must be in place before the operator can see code held for review,
or it could build it. Likewise every spec write (and every review decision) first writes
``status.allowedVersions``, the versions the code gate (``sless.store.CodeGate``) lets
serve: the operator builds and deploys nothing else, whatever a later PUT does to the spec.
A function's Secret is written before the spec that names it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from sless.backends.kubernetes.function_secrets import FunctionSecrets
from sless.backends.kubernetes.resources import (
    Serving,
    function_from_body,
    is_terminating,
    new_body,
    resource_spec,
)
from sless.backends.kubernetes.storing import ResourceStore
from sless.errors import BackendUnavailable, Conflict, Invalid, NotFound
from sless.kube import JSON_PATCH, Forbidden, KubeApi, object_path
from sless.models import (
    HELD_MESSAGE,
    CodeRef,
    Function,
    FunctionSpec,
    Phase,
    TrafficTarget,
)
from sless.policies import labels
from sless.store import CodeGate, VersionRepository

log = logging.getLogger(__name__)

Key = tuple[str, str]
T = TypeVar("T")

_WRITE_ATTEMPTS = 5


class _Deleting(Conflict):
    """The function is deleted and its finalizer still runs: retrying now will not help."""


class FunctionResources:
    api: KubeApi
    _root: str
    _api_version: str
    #: the tenants' secrets (PostgreSQL), written into each function's own Secret
    _function_secrets: FunctionSecrets
    #: the functions' versions (PostgreSQL): the specs a traffic split's versions run
    _versions: VersionRepository | None
    _functions: dict[Key, Serving]
    #: the Function resources: path (names checked again, they go into a URL), get,
    #: list and delete as for every kind the gateway owns
    _store: ResourceStore
    _triggers: ResourceStore
    _jobs: ResourceStore

    # -- desired state -----------------------------------------------------------------

    def _path(self, namespace: str, name: str | None = None) -> str:
        return self._store.path(namespace, name)

    async def _read(self, namespace: str, name: str) -> dict[str, Any]:
        return await self._store.get(namespace, name)

    async def _retrying(self, name: str, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run a read-modify-write until it does not race; ``Conflict`` after a few tries."""
        for n in range(_WRITE_ATTEMPTS):
            try:
                return await attempt()
            except _Deleting:
                raise
            except Conflict:
                # a stale resourceVersion, or a create that lost to another writer
                await asyncio.sleep(0.05 * (n + 1) * random.uniform(0.5, 1.5))  # noqa: S311
        raise Conflict(f"function {name!r} is being changed concurrently; try again")

    # -- a function's Secret ---------------------------------------------------------

    async def secret_changed(self, namespace: str, name: str) -> None:
        """Rewrite the Secret and the version annotation of every function naming ``name``:
        the operator re-renders the Deployment and its pods roll."""
        for function in await self.list_functions(namespace):
            if name not in function.spec.secret_names():
                continue
            try:
                version = await self._function_secrets.write(
                    namespace, function.name, function.spec
                )
            except Invalid as e:
                log.warning("function %s/%s: %s", namespace, function.name, e.message)
                continue
            annotations = {labels.SECRETS_VERSION_ANNOTATION: version}
            await self.api.merge_patch(
                self._path(namespace, function.name), {"metadata": {"annotations": annotations}}
            )

    async def put_function(self, namespace: str, name: str, spec: FunctionSpec) -> Function:
        # the Secret first: the pods the operator renders next find it
        secrets_version = await self._function_secrets.write(namespace, name, spec)
        revisions = await self._revisions(namespace, name, spec)
        path = self._path(namespace, name)

        async def attempt() -> Function:
            try:
                current = await self.api.request("GET", path)
            except NotFound:
                try:
                    body = new_body(self._api_version, namespace, name, spec, revisions)
                    if secrets_version is not None:
                        body["metadata"]["annotations"] = {
                            labels.SECRETS_VERSION_ANNOTATION: secrets_version
                        }
                    created = await self.api.request("POST", self._path(namespace), body=body)
                except NotFound:
                    # the namespace does not exist: the tenant is not set up in the cluster
                    raise BackendUnavailable(
                        f"namespace {namespace!r} does not exist in the cluster yet"
                    ) from None
                return function_from_body(created)
            if is_terminating(current):
                raise _Deleting(f"function {name!r} is being deleted; try again shortly")
            allowed = await self._allowed_versions(namespace, name)
            if allowed is not None:
                # first: the operator must never see a spec before the versions it may run
                fields = {"allowedVersions": allowed}
                current = await self._patch_status(namespace, name, current, fields)
            desired = spec
            if desired.code is None:
                # code comes from uploads: a spec update keeps the uploaded code
                code = (current.get("spec") or {}).get("code")
                if code is not None:
                    desired = spec.model_copy(update={"code": CodeRef.model_validate(code)})
            current["spec"] = resource_spec(desired, revisions)
            annotations = current["metadata"].setdefault("annotations", {})
            if secrets_version is not None:
                annotations[labels.SECRETS_VERSION_ANNOTATION] = secrets_version
            else:
                annotations.pop(labels.SECRETS_VERSION_ANNOTATION, None)
            return function_from_body(await self.api.request("PUT", path, body=current))

        return await self._retrying(name, attempt)

    async def get_function(self, namespace: str, name: str) -> Function:
        return function_from_body(await self._read(namespace, name))

    async def list_functions(self, namespace: str) -> list[Function]:
        functions = []
        for item in await self._store.list(namespace):
            try:
                functions.append(function_from_body(item))
            except Invalid as e:
                log.warning("skipping a function in %s: %s", namespace, e.message)
        return sorted(functions, key=lambda f: f.name)

    async def delete_function(self, namespace: str, name: str) -> None:
        await self._store.delete(namespace, name)
        with contextlib.suppress(NotFound, Forbidden):
            await self.api.delete(
                object_path("v1", "Secret", namespace, labels.function_secret_name(name))
            )
        # stop serving here at once; the watch confirms it
        key = (namespace, name)
        entry = self._functions.get(key)
        if entry is not None:
            self._functions[key] = Serving(phase=entry.phase, spec=entry.spec, terminating=True)

    async def delete_namespace(self, namespace: str) -> None:
        """Delete every Function, Trigger and FunctionJob of a tenant; the operator's
        finalizers clean up after them.

        The namespace itself belongs to the operator (it follows the Tenant resource).
        """
        await self._store.delete_all(namespace)
        await self._triggers.delete_all(namespace)
        await self._jobs.delete_all(namespace)
        for key, entry in list(self._functions.items()):
            if key[0] == namespace:
                self._functions[key] = Serving(phase=entry.phase, spec=entry.spec, terminating=True)

    async def _patch_status(
        self, namespace: str, name: str, current: dict[str, Any], fields: dict[str, Any]
    ) -> dict[str, Any]:
        """Set ``fields`` of the status, replacing each one whole (a merge patch would
        merge an old validation report's keys into the new one)."""
        fields = {**fields, "updated_at": datetime.now(UTC).isoformat()}
        if isinstance(current.get("status"), dict):
            ops = [{"op": "add", "path": f"/status/{key}", "value": v} for key, v in fields.items()]
        else:
            ops = [{"op": "add", "path": "/status", "value": fields}]
        return await self.api.request(
            "PATCH",
            self._path(namespace, name) + "/status",
            body=ops,
            content_type=JSON_PATCH,
        )

    async def set_code(
        self,
        namespace: str,
        name: str,
        code: CodeRef,
        *,
        held: bool,
        validation: dict[str, Any],
        traffic: Sequence[TrafficTarget] = (),
    ) -> Function:
        path = self._path(namespace, name)
        current = await self._read(namespace, name)
        phase = Phase.VALIDATING if held else Phase.PENDING
        routed = FunctionSpec(code=code, traffic=list(traffic))
        revisions = {
            v: r.model_dump(mode="json")
            for v, r in (await self._revisions(namespace, name, routed)).items()
        }
        # status first: code held for review must never be visible while the phase
        # still lets the operator build it
        fields: dict[str, Any] = {
            "phase": phase.value,
            "message": HELD_MESSAGE if held else "",
            "validation": validation,
        }
        allowed = await self._allowed_versions(namespace, name)
        if allowed is not None:
            fields["allowedVersions"] = allowed
        patched: dict[str, Any] | None = await self._patch_status(namespace, name, current, fields)

        async def attempt() -> Function:
            nonlocal patched
            body = patched if patched is not None else await self._read(namespace, name)
            patched = None  # a retry reads afresh
            spec = body.setdefault("spec", {})
            spec["code"] = code.model_dump(mode="json")
            spec["traffic"] = [target.model_dump(mode="json") for target in traffic]
            spec["revisions"] = revisions
            return function_from_body(await self.api.request("PUT", path, body=body))

        return await self._retrying(name, attempt)

    async def decide_review(
        self, namespace: str, name: str, sha256: str, *, approve: bool, reason: str
    ) -> None:
        """Release held code (Pending: the operator builds it) or reject it, atomically:
        the patch tests that the reviewed code is still the function's and still held."""
        await self._read(namespace, name)
        phase = Phase.PENDING if approve else Phase.REJECTED
        message = "" if approve else f"rejected by the provider's review: {reason}"
        ops: list[dict[str, Any]] = [
            {"op": "test", "path": "/spec/code/sha256", "value": sha256},
            {"op": "test", "path": "/status/phase", "value": Phase.VALIDATING.value},
            {"op": "replace", "path": "/status/phase", "value": phase.value},
            {"op": "add", "path": "/status/message", "value": message},
            {"op": "add", "path": "/status/updated_at", "value": datetime.now(UTC).isoformat()},
        ]
        allowed = await self._allowed_versions(namespace, name)
        if allowed is not None:
            # the decision is in the versions table already: the operator's list follows
            ops.append({"op": "add", "path": "/status/allowedVersions", "value": allowed})
        try:
            await self.api.request(
                "PATCH",
                self._path(namespace, name) + "/status",
                body=ops,
                content_type=JSON_PATCH,
            )
        except Invalid:
            return  # a test failed: newer code replaced the reviewed one, nothing to release

    async def record_validation(
        self,
        namespace: str,
        name: str,
        validation: dict[str, Any],
        *,
        phase: tuple[Phase, str] | None = None,
    ) -> None:
        current = await self._read(namespace, name)
        fields: dict[str, Any] = {"validation": validation}
        if phase is not None:
            # a function with no code: the operator has nothing to build and never writes
            # its phase, so this one stays until an upload is accepted
            fields["phase"], fields["message"] = phase[0].value, phase[1]
        await self._patch_status(namespace, name, current, fields)

    async def _allowed_versions(self, namespace: str, name: str) -> list[str] | None:
        """The versions the code gate lets serve (None: no versions table to ask)."""
        if self._versions is None:
            return None
        return await CodeGate(self._versions).allowed_versions(namespace, name)

    async def _revisions(
        self, namespace: str, name: str, spec: FunctionSpec
    ) -> dict[str, FunctionSpec]:
        """The specs of the versions the traffic split names besides the current one."""
        wanted = spec.routed_versions()[1:]
        if not wanted or self._versions is None:
            return {}
        found = await self._versions.find_many(namespace, name, wanted)
        return {v: found[v].spec.runnable() for v in wanted if v in found}
