"""Functions invoked by events: cron triggers, jobs, RabbitMQ messages and asynchronous
invocations.

The gateway starts ``Events`` with the platform. In Kubernetes mode the RabbitMQ consumers
run in their own process instead (``sless events``: ``EventsProcess``, ``serve_events``).
Every call they make goes through ``sless.backends.call_function``, as ``/fn/...`` does.
"""

from sless.events.brokers import BrokerUrlRefused, check_broker_scheme
from sless.events.running import job_trigger
from sless.events.schedules import check_schedule, next_tick
from sless.events.service import Events
from sless.events.standalone import EventsProcess, serve_events
from sless.store import QueuedCall

__all__ = [
    "BrokerUrlRefused",
    "Events",
    "EventsProcess",
    "QueuedCall",
    "check_broker_scheme",
    "check_schedule",
    "job_trigger",
    "next_tick",
    "serve_events",
]
