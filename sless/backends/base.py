"""The Backend protocol: what differs between embedded and Kubernetes mode.

A backend keeps the desired state of functions (tables or custom resources), turns it into
running code (bubblewrap workers or pods) and hands the gateway an upstream to proxy an
invocation to. Validation, blobs, tenancy and the HTTP API are shared and live outside.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from sless.backends.http1 import Connection, Http1Client
from sless.models import (
    CodeRef,
    Function,
    FunctionJob,
    FunctionSpec,
    JobSpec,
    Phase,
    TrafficTarget,
    Trigger,
    TriggerSpec,
)
from sless.models.endings import Ending


@dataclass
class Upstream:
    """Where to send one invocation: a keep-alive client bound to a worker or an endpoint."""

    client: Http1Client
    #: set by the gateway when the call timed out, so that the backend can kill the worker
    timed_out: bool = False
    #: set by the gateway when the connection failed (a crashed worker)
    failed: bool = False
    #: how the worker of a failed call ended, as far as the mode can tell (None: it
    #: cannot); ``call_function`` words it with ``sless.models.endings``
    ending: Callable[[], Awaitable[Ending | None]] | None = None
    #: appends one line of the platform's to the function's log (None: the mode has no
    #: log of its own to append to, e.g. a pod's output)
    note: Callable[[str], None] | None = None
    #: the lease started a worker (or a pod) for this call: a cold start
    cold: bool = False


class Held(Protocol):
    """A lease taken at once (``Serving.lease_now``): an upstream and one of its idle
    connections, held until ``release`` (``undo`` if nothing was sent on it)."""

    upstream: Upstream
    connection: Connection

    def undo(self) -> None: ...

    def release(self, *, clean: bool) -> None: ...


class FunctionStore(Protocol):
    """Functions and their code: desired state (tables, or Function resources), the
    validation reports and review decisions that gate new code, and the functions' logs."""

    async def put_function(self, namespace: str, name: str, spec: FunctionSpec) -> Function: ...

    async def get_function(self, namespace: str, name: str) -> Function: ...

    async def list_functions(self, namespace: str) -> list[Function]: ...

    async def delete_function(self, namespace: str, name: str) -> None: ...

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
        """Point the function at new code (its new current version) with the traffic split
        ``traffic`` (empty: every call to the new code); ``held`` keeps it in Validating
        for a review."""
        ...

    async def record_validation(
        self,
        namespace: str,
        name: str,
        validation: dict[str, Any],
        *,
        phase: tuple[Phase, str] | None = None,
    ) -> None:
        """Store the last report of a rejected upload without touching what serves; with
        ``phase``, also that phase and message (``sless.functions.uploading.refused_phase``
        decides), else the phase stays as it is."""
        ...

    async def decide_review(
        self, namespace: str, name: str, sha256: str, *, approve: bool, reason: str
    ) -> None:
        """Release code held in Validating (approve → it builds) or reject it."""
        ...

    async def logs(
        self, namespace: str, name: str, *, tail_bytes: int, since: float | None = None
    ) -> str:
        """The last ``tail_bytes`` of the function's output; with ``since`` (epoch
        seconds), what was written at or after it, as far as the mode can tell."""
        ...

    async def log_lines(
        self, namespace: str, name: str, *, tail_bytes: int, since: float | None = None
    ) -> list[tuple[str, float | None]]:
        """The whole lines of ``logs``, each with the time (epoch seconds) it was
        written where the mode knows it, else None."""
        ...

    def log_bytes(self, namespace: str) -> int | None:
        """Bytes of the namespace's function logs the platform keeps (its ``log_bytes``
        quota); None where the cluster keeps them. No network I/O."""
        ...

    async def secret_changed(self, namespace: str, name: str) -> None:
        """Secret ``name`` was written or deleted: roll what runs with its old value."""
        ...

    def build_durations(self) -> dict[tuple[str, str], tuple[int, float]]:
        """``(runtime, result) → (builds, seconds in all)`` of the builds this process ran
        (``result``: ``succeeded`` | ``failed``), for metrics. No I/O. Empty where another
        process builds (Kubernetes mode: the operator's kaniko Jobs)."""
        ...

    def egress_connections(self) -> dict[str, tuple[int, int]]:
        """``namespace → (connections held now, refused at a cap since start)`` through the
        egress proxies of this process (``sless.sandbox.tunnels``), for metrics. No I/O.
        Empty where no proxy of the gateway's carries egress (Kubernetes mode)."""
        ...

    async def release_code(self, sha256: str) -> bool:
        """No version refers to code ``sha256`` any more: if no function of this mode does
        either, remove what the mode made of it (builds) and return True (the caller then
        deletes the blob); False while something still uses it."""
        ...


class Serving(Protocol):
    """The hot path: the spec that serves, whether http reaches it, and an upstream to
    proxy one call to. No I/O in ``serving`` and ``http_disabled``."""

    #: the largest answer a call may read (``SLESS_GATEWAY_MAX_RESPONSE_BYTES``)
    max_response_bytes: int

    def serving(self, namespace: str, name: str, version: str | None = None) -> FunctionSpec:
        """The spec that serves invocations (with its traffic split), or with ``version``
        the spec of that routed version; NotFound or NotReady. No I/O: hot path."""
        ...

    def http_disabled(self, namespace: str, name: str) -> bool:
        """The function has http triggers and all are disabled (``/fn/`` refuses). No I/O."""
        ...

    def instance_counts(self) -> dict[tuple[str, str], tuple[int, int, int]]:
        """``(namespace, name) → (instances, instances started, calls in flight)`` of the
        serving versions this process knows, for metrics. No I/O."""
        ...

    def upstream(
        self, namespace: str, name: str, version: str | None = None
    ) -> AbstractAsyncContextManager[Upstream]:
        """Lease an upstream for one invocation of the serving version (or of ``version``,
        one of the serving spec's ``routed_versions``)."""
        ...

    def lease_now(self, namespace: str, name: str, version: str | None = None) -> Held | None:
        """``upstream`` without waiting: a warm instance with room and an idle connection
        to it, taken at once, or None (then ``upstream``). No I/O: the express path of
        ``sless.gateway.express``."""
        ...

    async def prewarm(self, namespace: str, name: str, *, until: float) -> None:
        """Have an instance of the serving version up now and until ``until`` (monotonic),
        where the mode can (a cron trigger's ``prewarm_s``); a no-op where it cannot."""
        ...


class TenantSpaces(Protocol):
    """What each tenant gets from the mode (Kubernetes: a Tenant resource, its namespace
    and policies), and its removal."""

    async def provision_tenant(self, tenant: str) -> None:
        """Make what the mode needs per tenant (Kubernetes: the Tenant resource). Idempotent."""
        ...

    async def remove_tenant(self, tenant: str) -> None:
        """Undo ``provision_tenant``; called after ``delete_namespace``."""
        ...

    async def tenant_limits(self, tenant: str) -> dict[str, int]:
        """The quotas the mode itself sets for ``tenant`` (Kubernetes: the Tenant
        resource's ``spec.limits``); they win over the provider's stored ones."""
        ...

    async def delete_namespace(self, namespace: str) -> None: ...


class TriggerStore(Protocol):
    """Triggers and jobs: tables in embedded mode, Trigger and FunctionJob resources."""

    async def put_trigger(
        self, namespace: str, name: str, spec: TriggerSpec
    ) -> tuple[Trigger, bool]:
        """Create or replace; returns the trigger and whether it was created."""
        ...

    async def get_trigger(self, namespace: str, name: str) -> Trigger: ...

    async def list_triggers(self, namespace: str) -> list[Trigger]: ...

    async def delete_trigger(self, namespace: str, name: str) -> None: ...

    async def put_job(self, namespace: str, name: str, spec: JobSpec) -> tuple[FunctionJob, bool]:
        """Create or update; a new, higher ``run_id`` runs once. A lower one: Conflict."""
        ...

    async def get_job(self, namespace: str, name: str) -> FunctionJob: ...

    async def list_jobs(self, namespace: str) -> list[FunctionJob]: ...

    async def delete_job(self, namespace: str, name: str) -> None: ...


class Backend(FunctionStore, Serving, TenantSpaces, TriggerStore, Protocol):
    """Everything a mode provides; a caller that needs one role types against that role."""

    #: whether the process holding this backend runs cron ticks, job runs and RabbitMQ
    #: consumers itself (embedded mode), or the cluster does (Kubernetes mode: CronJobs
    #: and Jobs made by the operator, consumers in ``sless events``)
    events_in_process: ClassVar[bool]

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class WatchedTrigger(Protocol):
    """One trigger as a ``TriggerWatch`` holds it."""

    @property
    def trigger(self) -> Trigger: ...

    @property
    def version(self) -> str:
        """Changes whenever the trigger is written (not on a status write)."""
        ...


class TriggerWatch(Protocol):
    """A live view of every tenant's triggers, kept current by a watch."""

    def triggers(self) -> Sequence[WatchedTrigger]: ...


class TriggerWatcher(Protocol):
    """A backend whose triggers live outside the database and can be watched (Kubernetes)."""

    async def watch_triggers(self, on_change: Callable[[], None] | None = None) -> TriggerWatch:
        """Start watching (after the first list) and call ``on_change`` on every change."""
        ...


class ClusterBackend(Backend, TriggerWatcher, Protocol):
    """What the ``sless events`` process needs: serving, upstreams, and watched triggers."""
