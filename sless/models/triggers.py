"""Triggers: ``http``, ``cron`` (schedule and time zone) and ``rabbitmq`` (its source and
retries), and their status.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from sless.models.names import Name

#: five cron fields (minute hour day-of-month month day-of-week) or a ``@`` macro
_CRON_SCHEDULE = re.compile(
    r"^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|(\S+\s+){4}\S+)$"
)
#: six fields: the five above and seconds last; accepted only when the validation context
#: says ``allow_seconds`` (embedded mode's development/test hook; CronJobs have no seconds)
_CRON_SCHEDULE_SECONDS = re.compile(r"^(\S+\s+){5}\S+$")
_TIMEZONE = re.compile(r"^[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*$")


class TriggerSpec(BaseModel):
    """``http`` makes the function reachable; ``cron`` invokes it on ``schedule``.

    ``extra="allow"``: a trigger type may carry its own fields (``rabbitmq``: queue...).
    The timezone is checked for its shape here (no I/O); whether the zone exists is
    checked where the schedule is evaluated (``sless.events``).
    """

    model_config = ConfigDict(extra="allow")

    type: Literal["http", "cron", "rabbitmq"]
    function: Name
    enabled: bool = True
    #: cron only: when to invoke, in cron syntax (in ``timezone``)
    schedule: str | None = Field(default=None, max_length=128)
    #: cron only: the IANA time zone the schedule is read in
    timezone: str = Field(default="UTC", min_length=1, max_length=64)
    #: cron only: the JSON body of each invocation
    payload: Any = None
    #: cron only: start the function this many seconds before each tick (no cold start)
    prewarm_s: float = Field(default=0, ge=0, le=3600)

    @model_validator(mode="after")
    def _schedule(self, info: ValidationInfo) -> TriggerSpec:
        allow_seconds = bool(info.context and info.context.get("allow_seconds"))
        if self.schedule is not None:
            schedule = self.schedule.strip()
            if not _CRON_SCHEDULE.match(schedule) and not (
                allow_seconds and _CRON_SCHEDULE_SECONDS.match(schedule)
            ):
                raise ValueError("schedule must be five cron fields or an @hourly/@daily... macro")
        if self.type == "cron" and not self.schedule:
            raise ValueError("a cron trigger needs a schedule")
        if not _TIMEZONE.match(self.timezone):
            raise ValueError("timezone must be an IANA time zone name such as Europe/Berlin")
        return self


#: AMQP queue and exchange names: printable, no spaces, room left for ``.retry.<ms>``/``.dead``
_AMQP_NAME = re.compile(r"^[A-Za-z0-9_.:-]{1,200}$")


def _check_amqp_name(value: str) -> str:
    if not _AMQP_NAME.match(value):
        raise ValueError("must be 1-200 letters, digits, '_', '.', ':' or '-'")
    if value.startswith("amq."):
        raise ValueError("names starting with 'amq.' are reserved by the broker")
    return value


AmqpName = Annotated[str, AfterValidator(_check_amqp_name)]


class RabbitMQSource(BaseModel):
    """The fields of a ``rabbitmq`` trigger (carried as ``TriggerSpec`` extras, so the
    Trigger CRD schema stays as it is): where messages come from and how they are retried.

    Exactly one source: ``queue`` (consumed as is), or ``exchange`` + ``routing_key`` (a
    queue of the platform's is bound to the exchange). The broker URL is never here: only
    the name of a secret of the same namespace that holds it.
    """

    model_config = ConfigDict(extra="ignore")

    url_secret: Name
    queue: AmqpName | None = None
    exchange: AmqpName | None = None
    routing_key: str | None = Field(default=None, max_length=255)
    prefetch: int = Field(default=10, ge=1, le=1000)
    max_attempts: int = Field(default=5, ge=1, le=20)

    @model_validator(mode="after")
    def _one_source(self) -> RabbitMQSource:
        if (self.queue is None) == (self.exchange is None):
            raise ValueError("a rabbitmq trigger needs exactly one of queue or exchange")
        if self.exchange is None and self.routing_key is not None:
            raise ValueError("routing_key goes with exchange, not with queue")
        if self.exchange is not None and self.routing_key is None:
            raise ValueError('an exchange needs a routing_key (may be empty: "")')
        return self

    @classmethod
    def of(cls, spec: TriggerSpec) -> RabbitMQSource:
        return cls.model_validate(spec.model_extra or {})


class TriggerStatus(BaseModel):
    phase: Literal["Active", "Suspended", "Waiting", "Failed"] | None = None
    message: str = ""
    cronjob: str | None = None
    updated_at: datetime | None = None
    #: cron, embedded mode: the last tick taken by a scheduler
    last_tick: datetime | None = None


class Trigger(BaseModel):
    name: str
    namespace: str
    spec: TriggerSpec
    status: TriggerStatus
    #: changes on every write (embedded: a database sequence; Kubernetes: the resource's
    #: metadata.resourceVersion); sent as the ETag, checked by If-Match
    resource_version: str | None = None
