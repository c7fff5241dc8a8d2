"""Functions invoked by events: cron triggers, jobs and asynchronous invocations.

The gateway starts ``Events`` with the platform. ``call_function`` is the one way any
path (the public ``/fn/...`` included) sends a call to a function's serving version.
"""

from sless.events.calling import Response, call_function
from sless.events.running import job_trigger
from sless.events.schedules import check_schedule, next_tick
from sless.events.service import Events

__all__ = ["Events", "Response", "call_function", "check_schedule", "job_trigger", "next_tick"]
