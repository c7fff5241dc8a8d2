"""Triggers and jobs in embedded mode: rows of the ``triggers`` and ``jobs`` tables.

A mixin of ``LocalBackend`` (its ``TriggerStore`` role): the cron scheduler and the job
runner (``sless.events``) read the same tables. Writing a trigger refreshes the http
trigger view of every gateway (``HttpTriggerView.changed_here``).
"""

from __future__ import annotations

from sless.backends.local.http_triggers import HttpTriggerView
from sless.models import FunctionJob, JobSpec, Trigger, TriggerSpec
from sless.store import JobRepository, TriggerRepository


class TriggerTables:
    triggers: TriggerRepository
    jobs: JobRepository
    http_triggers: HttpTriggerView

    async def put_trigger(
        self, namespace: str, name: str, spec: TriggerSpec
    ) -> tuple[Trigger, bool]:
        record, created = await self.triggers.put(namespace, name, spec)
        await self.http_triggers.changed_here()
        return record.trigger, created

    async def get_trigger(self, namespace: str, name: str) -> Trigger:
        return (await self.triggers.get(namespace, name)).trigger

    async def list_triggers(self, namespace: str) -> list[Trigger]:
        return [record.trigger for record in await self.triggers.list_all(namespace)]

    async def delete_trigger(self, namespace: str, name: str) -> None:
        await self.triggers.delete(namespace, name)
        await self.http_triggers.changed_here()

    async def put_job(self, namespace: str, name: str, spec: JobSpec) -> tuple[FunctionJob, bool]:
        record, created = await self.jobs.put(namespace, name, spec)
        return record.job, created

    async def get_job(self, namespace: str, name: str) -> FunctionJob:
        return (await self.jobs.get(namespace, name)).job

    async def list_jobs(self, namespace: str) -> list[FunctionJob]:
        return [record.job for record in await self.jobs.list_all(namespace)]

    async def delete_job(self, namespace: str, name: str) -> None:
        await self.jobs.delete(namespace, name)
