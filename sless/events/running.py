"""The embedded job runner: each new ``run_id`` of a job runs the function once.

Runs are claimed in PostgreSQL (``JobRepository.claim``): the claim raises the job's
stored ``run_id`` in the transaction that locked the row, so the same run id never runs
twice, whichever gateway process claims it and however often they restart. A run whose
function is not Ready yet waits (``Waiting``); a run whose function is gone fails.
A run whose gateway stopped mid-run is marked Failed ("interrupted") after its deadline,
or at once when this process starts as the database's only user (``recover_at_start``),
with an invocation record saying so; it is never re-run.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

from sless.backends import Backend, Tracing
from sless.config import EventsSettings
from sless.errors import NotFound, NotReady
from sless.events.calling import invoke, json_request, record_outcome
from sless.events.polling import PollingWorker
from sless.store import (
    INTERRUPTED,
    Decision,
    InvocationRecord,
    InvocationRecorder,
    JobRecord,
    JobRepository,
)

log = logging.getLogger(__name__)

#: a run still Running this long after its function's timeout was interrupted
_DEADLINE_MARGIN_S = 30.0


def job_trigger(name: str) -> str:
    """The ``trigger`` of a job run's invocation record (``:`` keeps it apart from
    trigger names, which are DNS labels)."""
    return f"job:{name}"


class JobRunner(PollingWorker):
    name = "job-runner"

    def __init__(
        self,
        settings: EventsSettings,
        backend: Backend,
        recorder: InvocationRecorder,
        jobs: JobRepository,
        *,
        recover_at_start: bool = False,
        tracing: Tracing | None = None,
    ) -> None:
        super().__init__(settings.poll_interval_s)
        #: each run starts a trace of its own (sless.backends.tracing)
        self.tracing = tracing
        #: this process is the database's only user: every Running run is a dead one's
        self._recover_all = recover_at_start
        self.settings = settings
        self.backend = backend
        self.recorder = recorder
        self.jobs = jobs

    async def run_once(self) -> int:
        for run in await self.jobs.fail_interrupted(all_running=self._recover_all):
            log.warning(
                "job %s/%s interrupted: its gateway stopped during the run; not run again",
                run.namespace,
                run.name,
            )
            self.recorder.record(
                InvocationRecord.of_call(
                    run.invocation_id,
                    run.namespace,
                    run.function,
                    status=500,
                    duration_ms=max(
                        0.0, (run.completed_at - run.started_at).total_seconds() * 1000
                    ),
                    request_bytes=0,
                    response_bytes=0,
                    started_at=run.started_at,
                    error=INTERRUPTED,
                    trigger=job_trigger(run.name),
                )
            )
        self._recover_all = False
        claimed = await self.jobs.claim(self._decide)
        for record, invocation_id in claimed:
            task = asyncio.create_task(self._run(record, invocation_id))
            self._running.add(task)
            task.add_done_callback(self._running.discard)
        return len(claimed)

    async def _decide(self, record: JobRecord) -> Decision:
        namespace = record.job.namespace
        function = record.job.spec.function
        try:
            spec = self.backend.serving(namespace, function)
        except NotReady as e:
            return Decision("wait", e.message)
        except NotFound:
            try:
                # the in-memory index may not have caught up with a new function yet
                found = await self.backend.get_function(namespace, function)
            except NotFound:
                return Decision("fail", f"function {function!r} not found")
            phase = found.status.phase.value
            return Decision("wait", f"function {function!r} is not ready (phase {phase})")
        return Decision("run", deadline_s=spec.timeout_s + _DEADLINE_MARGIN_S)

    async def _run(self, record: JobRecord, invocation_id: uuid.UUID) -> None:
        job = record.job
        headers, body = json_request(job.spec.payload, trigger=job_trigger(job.name))
        headers.append(("sless-run-id", str(job.spec.run_id)))
        outcome = await invoke(
            self.backend,
            job.namespace,
            job.spec.function,
            invocation_id=invocation_id,
            headers=headers,
            body=body,
            tracing=self.tracing,
            trigger=job_trigger(job.name),
        )
        record_outcome(
            self.recorder,
            job.namespace,
            job.spec.function,
            invocation_id,
            outcome,
            trigger=job_trigger(job.name),
        )
        succeeded = outcome.error is None and outcome.status < 400
        error = None
        if not succeeded:
            error = outcome.message or f"the function answered HTTP {outcome.status}"
        await self.jobs.finish(
            job.namespace,
            job.name,
            invocation_id,
            succeeded=succeeded,
            result=outcome.result_text(self.settings.max_result_bytes) if outcome.body else None,
            error=error,
        )
