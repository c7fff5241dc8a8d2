"""A function's own Secret in Kubernetes mode: ``fn-<name>-secrets`` in its namespace.

The values come from the tenant's secrets in PostgreSQL (encrypted there); the gateway
copies the ones the spec names into the function's Secret when the spec is written or a
secret changes, and the version it returns (when each value was last written, never a
digest of it) goes into an annotation that rolls the pods.
"""

from __future__ import annotations

import base64
import contextlib

from sless.errors import BackendUnavailable, Invalid, NotFound
from sless.kube import Forbidden, KubeApi, object_path
from sless.models import FunctionSpec
from sless.policies import labels
from sless.store import SecretRepository


class FunctionSecrets:
    def __init__(self, api: KubeApi, secrets: SecretRepository | None) -> None:
        self.api = api
        self.secrets = secrets

    async def write(self, namespace: str, name: str, spec: FunctionSpec) -> str | None:
        """Apply ``fn-<name>-secrets`` with the values the spec names (or delete it when it
        names none); return the version for the pod template: when each was last written.
        """
        secret_path = object_path("v1", "Secret", namespace, labels.function_secret_name(name))
        if not spec.secrets:
            with contextlib.suppress(NotFound, Forbidden):
                await self.api.delete(secret_path)
            return None
        if self.secrets is None:
            raise Invalid("secrets in functions need the gateway's database in this process")
        found = await self.secrets.reveal_many(namespace, spec.secret_names())
        missing = sorted(set(spec.secret_names()) - set(found))
        if missing:
            raise Invalid(f"secret {missing[0]!r} not found in namespace {namespace}")
        data = {
            ref.name: base64.b64encode(found[ref.name][0].get_secret_value().encode()).decode()
            for ref in spec.secrets
        }
        body = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": labels.function_secret_name(name),
                "namespace": namespace,
                "labels": labels.function_labels(name),
            },
            "type": "Opaque",
            "immutable": False,
            "data": data,
        }
        try:
            await self.api.apply(body)
        except Forbidden:
            raise BackendUnavailable(
                "the gateway may not write Secrets in tenant namespaces (deploy/rbac/gateway.yaml)"
            ) from None
        return ",".join(f"{ref.name}={found[ref.name][1].isoformat()}" for ref in spec.secrets)
