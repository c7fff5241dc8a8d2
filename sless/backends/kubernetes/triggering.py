"""Triggers and FunctionJobs in Kubernetes mode: custom resources (``ResourceStore``).

A mixin of ``KubernetesBackend`` (its ``TriggerStore`` and ``TriggerWatcher`` roles); the
operator turns them into CronJobs and Jobs. A FunctionJob's ``run_id`` only moves
forward. One watch per process keeps every tenant's Triggers in memory: the gateway's
``http_disabled`` and the ``sless events`` consumers read it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from sless.backends.kubernetes.resources import TRIGGERS, job_from_body, trigger_from_body
from sless.backends.kubernetes.storing import ResourceStore
from sless.backends.kubernetes.triggers import TriggerIndex
from sless.backends.kubernetes.watching import Watcher
from sless.errors import BackendUnavailable, Conflict, Invalid
from sless.kube import KubeApi
from sless.models import FunctionJob, JobSpec, Trigger, TriggerSpec

log = logging.getLogger(__name__)

T = TypeVar("T")


def parsed(parse: Callable[[dict[str, Any]], T], items: list[dict[str, Any]]) -> list[T]:
    """Parse each item; one written around the gateway that does not parse is skipped."""
    parsed = []
    for item in items:
        try:
            parsed.append(parse(item))
        except Invalid as e:
            log.warning("skipping an object: %s", e.message)
    return parsed


class TriggerResources:
    api: KubeApi
    _root: str
    _triggers: ResourceStore
    _jobs: ResourceStore
    _watchers: list[Watcher]
    _tasks: list[asyncio.Task[None]]
    _sync_timeout_s: float
    _watch_timeout_s: float
    _trigger_index: TriggerIndex | None
    _trigger_subscribers: list[Callable[[], None]]
    #: (namespace, function) -> some http trigger of it is enabled; absent: none exists
    _http_open: dict[tuple[str, str], bool]

    async def watch_triggers(self, on_change: Callable[[], None] | None = None) -> TriggerIndex:
        """Keep every tenant's Triggers in memory, for as long as the backend runs; one
        watch per process, started by ``start``. ``on_change`` runs after each change (the
        ``sless events`` process wakes its consumers with it).
        """
        if on_change is not None:
            self._trigger_subscribers.append(on_change)
        if self._trigger_index is not None:
            return self._trigger_index
        index = TriggerIndex(self._triggers_changed)
        watcher = Watcher(
            self.api,
            f"{self._root}/{TRIGGERS}",
            on_reset=index.reset,
            on_event=index.apply,
            watch_timeout_s=self._watch_timeout_s,
        )
        self._trigger_index = index
        self._watchers.append(watcher)
        self._tasks.append(asyncio.create_task(watcher.run(), name=f"watch {watcher.path}"))
        try:
            async with asyncio.timeout(self._sync_timeout_s):
                await watcher.synced.wait()
        except TimeoutError:
            raise BackendUnavailable(
                f"could not list triggers within {self._sync_timeout_s:g} s"
                f" ({watcher.last_error or 'no answer'})"
            ) from None
        return index

    def _triggers_changed(self) -> None:
        index = self._trigger_index
        if index is not None:
            http_open: dict[tuple[str, str], bool] = {}
            for item in index.triggers():
                trigger = item.trigger
                if trigger.spec.type == "http":
                    key = (trigger.namespace, trigger.spec.function)
                    http_open[key] = http_open.get(key, False) or trigger.spec.enabled
            self._http_open = http_open
        for wake in self._trigger_subscribers:
            wake()

    def http_disabled(self, namespace: str, name: str) -> bool:
        """The function has http triggers and every one of them is disabled. No I/O."""
        return self._http_open.get((namespace, name)) is False

    async def put_trigger(
        self, namespace: str, name: str, spec: TriggerSpec
    ) -> tuple[Trigger, bool]:
        body, created = await self._triggers.put(namespace, name, spec.model_dump(mode="json"))
        return trigger_from_body(body), created

    async def get_trigger(self, namespace: str, name: str) -> Trigger:
        return trigger_from_body(await self._triggers.get(namespace, name))

    async def list_triggers(self, namespace: str) -> list[Trigger]:
        return parsed(trigger_from_body, await self._triggers.list(namespace))

    async def delete_trigger(self, namespace: str, name: str) -> None:
        await self._triggers.delete(namespace, name)

    async def put_job(self, namespace: str, name: str, spec: JobSpec) -> tuple[FunctionJob, bool]:
        def runs_only_move_forward(current: dict[str, Any]) -> None:
            current_run_id = int((current.get("spec") or {}).get("run_id") or 0)
            if spec.run_id < current_run_id:
                raise Conflict(
                    f"run_id {spec.run_id} is lower than the job's run_id {current_run_id}:"
                    " runs only move forward"
                )

        body, created = await self._jobs.put(
            namespace, name, spec.model_dump(mode="json"), check=runs_only_move_forward
        )
        return job_from_body(body), created

    async def get_job(self, namespace: str, name: str) -> FunctionJob:
        return job_from_body(await self._jobs.get(namespace, name))

    async def list_jobs(self, namespace: str) -> list[FunctionJob]:
        return parsed(job_from_body, await self._jobs.list(namespace))

    async def delete_job(self, namespace: str, name: str) -> None:
        await self._jobs.delete(namespace, name)
