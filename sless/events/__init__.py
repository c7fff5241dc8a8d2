"""Functions invoked by events: cron triggers, jobs, RabbitMQ messages and asynchronous
invocations.

The gateway starts ``Events`` with the platform. ``call_function`` is the one way any
path (the public ``/fn/...`` included) sends a call to a function's serving version.
"""

from sless.events.calling import Response, call_function
from sless.events.consuming import BrokerUrlRefused, check_broker_scheme
from sless.events.running import job_trigger
from sless.events.schedules import check_schedule, next_tick
from sless.events.service import Events

__all__ = [
    "BrokerUrlRefused",
    "Events",
    "Response",
    "call_function",
    "check_broker_scheme",
    "check_schedule",
    "job_trigger",
    "next_tick",
]
