"""RabbitMQ triggers: one consumer per enabled trigger, in both modes.

Where the consumers run: in embedded mode, in every gateway process (``Events``); in
Kubernetes mode, in the ``sless events`` process (``standalone.py``; the gateway starts
none there). Which triggers exist comes from a ``TriggerSource`` (``sources.py``): the
triggers table, or the Trigger custom resources. Calls go through the backend's
``upstream()``, so in Kubernetes mode they reach the function's pods through its
EndpointSlices, exactly as the gateway's own calls do.

Delivery is at least once. A message is acknowledged only after its fate is settled: the
function answered 2xx, or the message was republished (with a publisher confirm) to a
retry or dead-letter queue. Whatever happens in between (the process stops, the broker
restarts, the connection drops) leaves the message unacknowledged, and the broker
delivers it again; a function idempotent on the message id then sees no duplicate effect.

Retries never hold a prefetch slot. A failed message is republished to
``<queue>.retry.<ms>``, a queue with ``x-message-ttl = <ms>`` that dead-letters into the
default exchange with routing key ``<queue>``: after the delay the broker puts the message
back into ``<queue>``. One queue per delay (``retry_base_s * 2**(attempt-1)``, at most
``retry_max_s``, from ``EventsSettings``) keeps each queue FIFO, so a long delay never
holds up a short one (per-message TTLs would). The attempts made so far travel in the
``x-sless-attempts`` header. After ``max_attempts``, or at once when the function answered
a 4xx other than 408/429 (it refused the message: a retry cannot help), the message goes to
``<queue>.dead`` with ``x-sless-status`` saying how the last attempt ended.

With ``exchange`` + ``routing_key`` the consumed queue is ``<namespace>.<trigger>`` (durable,
bound to the exchange, which must exist); with ``queue`` it is that queue (declared durable
if missing). Every consuming process consumes every enabled trigger: several consumers on
one queue are RabbitMQ's competing consumers, each message goes to one of them.

The broker URL is a tenant secret (PostgreSQL, in both modes), read when a consumer starts;
it is held as a ``SecretStr`` and never logged: connection errors are logged by type only
(aio-pika and aiormq mask the password in their own log lines). A manager reconciles the
consumers with the source every ``scheduler_interval_s`` and at once when the source says
a trigger changed: it starts new ones, restarts those whose trigger or secret changed, and
stops those whose trigger was deleted or disabled (in-flight messages finish within the
grace period; unfinished ones are left unacknowledged and redelivered).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import uuid
from datetime import datetime
from typing import Any

import aio_pika
from aio_pika.abc import (
    AbstractChannel,
    AbstractConnection,
    AbstractIncomingMessage,
    AbstractQueue,
)
from aio_pika.connection import make_url
from pydantic import SecretStr, ValidationError

from sless.backends import Serving, Tracing, valid_traceparent
from sless.config import EventsSettings
from sless.errors import NotFound
from sless.events.brokers import BrokerUrlRefused, CheckedTransport
from sless.events.calling import invoke, record_outcome
from sless.events.sources import TriggerSource
from sless.models import RabbitMQSource, Trigger
from sless.store import InvocationRecorder, SecretRepository
from sless.tasks import cancel_and_wait, wait_for

log = logging.getLogger(__name__)

ATTEMPTS_HEADER = "x-sless-attempts"
STATUS_HEADER = "x-sless-status"
#: a function answer (besides 5xx) worth another attempt
_RETRYABLE_4XX = frozenset({408, 429})
_HEADER_VALUE = re.compile(r"[^\x20-\x7e]")
_RECONNECT_MAX_S = 30.0
#: how long closing a connection may take (a broker away may not answer)
_CLOSE_TIMEOUT_S = 5.0
#: how often a consumer asks the broker how many messages wait in its queue (its lag)
LAG_INTERVAL_S = 10.0


def backoff(settings: EventsSettings, attempt: int) -> float:
    """Seconds before the retry of a message whose ``attempt``-th call failed."""
    return float(min(settings.retry_base_s * 2 ** (attempt - 1), settings.retry_max_s))


def _attempts(message: AbstractIncomingMessage) -> int:
    value = (message.headers or {}).get(ATTEMPTS_HEADER)
    return value if isinstance(value, int) and value >= 0 else 0


def _content_type(message: AbstractIncomingMessage) -> str:
    if message.content_type:
        return _HEADER_VALUE.sub("", message.content_type)[:200]
    try:
        json.loads(message.body)
    except ValueError:
        return "text/plain; charset=utf-8"
    return "application/json"


async def _connect(url: SecretStr, name: str, transport: CheckedTransport) -> AbstractConnection:
    """One AMQP connection, made through ``transport`` (to an address it checked:
    ``sless.events.brokers``). Not aio-pika's robust connection: that one reconnects by
    itself, every second and without end, where the consumer's own loop reconnects (each
    time through the check, with its backoff). A first connect that fails closes the
    connection object: left to the garbage collector, its ``__del__`` would schedule
    ``close()`` on whichever event loop runs then."""
    connection = aio_pika.Connection(
        make_url(url.get_secret_value()), client_properties={"connection_name": name}
    )
    # aio-pika keeps only the arguments it knows; aiormq's connection takes the factory
    connection.kwargs["transport_factory"] = transport
    try:
        await connection.connect()
    except BaseException:
        with contextlib.suppress(Exception):
            await connection.close()
        raise
    return connection


class Consumer:
    """Consumes one trigger's queue until ``stop``; reconnects by itself."""

    def __init__(
        self,
        trigger: Trigger,
        source: RabbitMQSource,
        url: SecretStr,
        settings: EventsSettings,
        backend: Serving,
        recorder: InvocationRecorder,
        *,
        grace: float,
        tracing: Tracing | None = None,
    ) -> None:
        self.trigger = trigger
        self.tracing = tracing  #: a message's ``traceparent`` header names the call's trace
        #: how long in-flight messages may take when stopping
        self.grace = grace
        self.source = source
        self._url = url
        self.settings = settings
        self.backend = backend
        self.recorder = recorder
        self.queue_name = source.queue or f"{trigger.namespace}.{trigger.name}"
        self._channel: AbstractChannel | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._inflight: set[asyncio.Task[Any]] = set()
        #: set while the consumer is registered with the broker (tests, status)
        self.consuming = asyncio.Event()
        self._registered = False
        #: messages settled (acknowledged after success, retry or dead-letter)
        self.settled = 0
        #: messages ready in the queue, not yet delivered to this consumer, as the broker
        #: last said (at the declare, then every ``LAG_INTERVAL_S``); None until it did
        self.lag: int | None = None

    def __repr__(self) -> str:  # never the URL
        return f"<Consumer {self.trigger.namespace}/{self.trigger.name} queue={self.queue_name!r}>"

    @property
    def _label(self) -> str:
        return f"{self.trigger.namespace}/{self.trigger.name}"

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"rabbitmq {self._label}")

    async def stop(self, grace: float) -> None:
        """Stop consuming, let in-flight messages finish within ``grace``, disconnect."""
        self._stopping.set()
        task = self._task
        if task is None:
            return
        try:
            await wait_for(asyncio.shield(task), grace + 5)
        except TimeoutError:
            await cancel_and_wait([task])
        except Exception as e:  # the task failed: nothing left to stop
            log.debug("consumer %s ended with %s", self._label, type(e).__name__)

    async def _run(self) -> None:
        delay = 1.0
        while not self._stopping.is_set():
            self._registered = False
            try:
                await self._consume()
            except asyncio.CancelledError:
                raise
            except BrokerUrlRefused as e:
                log.warning("trigger %s: %s, retrying in %g s", self._label, e, delay)
            except Exception as e:  # the broker is away or refused us: try again later
                log.warning(
                    "trigger %s: broker connection failed (%s), retrying in %g s",
                    self._label,
                    type(e).__name__,
                    delay,
                )
            self.consuming.clear()
            if self._registered:  # it worked for a while: start the backoff afresh
                delay = 1.0
            with contextlib.suppress(TimeoutError):
                await wait_for(self._stopping.wait(), delay)
            delay = min(delay * 2, _RECONNECT_MAX_S)

    async def _consume(self) -> None:
        """Consume on one connection until ``stop`` or until the connection or its channel
        closes (the broker went away, or closed the channel: ``_run`` connects again)."""
        transport = CheckedTransport(self.settings.brokers_allowed)
        connection = await _connect(self._url, f"sless {self._label}", transport)
        lost = asyncio.Event()
        connection.close_callbacks.add(lambda *_: lost.set())
        try:
            channel = await connection.channel(publisher_confirms=True)
            # a channel the broker closed (an error on it) is a lost connection too
            channel.close_callbacks.add(lambda *_: lost.set())
            await channel.set_qos(prefetch_count=self.source.prefetch)
            self._channel = channel
            queue = await self._declare(channel)
            self.lag = queue.declaration_result.message_count
            tag = await queue.consume(self._on_message)
            self.consuming.set()
            self._registered = True
            log.info("trigger %s: consuming %r", self._label, self.queue_name)
            while not self._stopping.is_set() and not lost.is_set():
                await self._pause(lost)
                if not self._stopping.is_set() and not lost.is_set():
                    await self._probe_lag(channel)
            if lost.is_set():  # unacknowledged messages go back to the queue
                await self._drain()
                raise ConnectionError("the broker closed the connection")
            with contextlib.suppress(Exception):  # the broker may be away: closing cancels
                await queue.cancel(tag)
            await self._drain()
        finally:
            self.consuming.clear()
            with contextlib.suppress(Exception):  # bounded: a broker away may not answer
                await wait_for(connection.close(), _CLOSE_TIMEOUT_S)

    async def _pause(self, wake: asyncio.Event) -> None:
        """Until ``stop``, ``wake`` (the connection was lost) or ``LAG_INTERVAL_S``."""
        waits = [asyncio.ensure_future(self._stopping.wait()), asyncio.ensure_future(wake.wait())]
        try:
            await asyncio.wait(waits, timeout=LAG_INTERVAL_S, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()

    async def _probe_lag(self, channel: AbstractChannel) -> None:
        """Ask the broker how many messages wait (a passive declare only asks). A failed
        or slow answer (the broker away) only makes the lag unknown: consuming goes on, and
        a lost connection ends it (``_consume``)."""

        async def ask() -> Any:
            underlay = await channel.get_underlay_channel()
            return await underlay.queue_declare(self.queue_name, passive=True)

        try:
            declared = await wait_for(ask(), LAG_INTERVAL_S)
        except Exception as e:  # any failure: the figure is unknown, nothing more
            log.debug("trigger %s: lag probe failed (%s)", self._label, type(e).__name__)
            self.lag = None
            return
        self.lag = declared.message_count if declared is not None else None

    async def _drain(self) -> None:
        if self._inflight:
            await asyncio.wait(set(self._inflight), timeout=max(self.grace, 0.1))
        for task in set(self._inflight):  # unacknowledged: the broker delivers them again
            task.cancel()

    async def _declare(self, channel: AbstractChannel) -> AbstractQueue:
        queue = await channel.declare_queue(self.queue_name, durable=True)
        if self.source.exchange is not None:
            exchange = await channel.get_exchange(self.source.exchange, ensure=True)
            await queue.bind(exchange, routing_key=self.source.routing_key or "")
        await channel.declare_queue(f"{self.queue_name}.dead", durable=True)
        for ms in sorted(self._retry_delays_ms()):
            await channel.declare_queue(
                self._retry_queue(ms),
                durable=True,
                arguments={
                    "x-message-ttl": ms,
                    "x-dead-letter-exchange": "",
                    "x-dead-letter-routing-key": self.queue_name,
                },
            )
        return queue

    def _retry_delays_ms(self) -> set[int]:
        return {self._delay_ms(attempt) for attempt in range(1, max(self.source.max_attempts, 1))}

    def _delay_ms(self, attempt: int) -> int:
        return max(1, round(backoff(self.settings, attempt) * 1000))

    def _retry_queue(self, ms: int) -> str:
        return f"{self.queue_name}.retry.{ms}"

    async def _on_message(self, message: AbstractIncomingMessage) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._inflight.add(task)
        try:
            await self._handle(message)
        finally:
            if task is not None:
                self._inflight.discard(task)

    async def _handle(self, message: AbstractIncomingMessage) -> None:
        trigger, spec = self.trigger, self.trigger.spec
        attempt = _attempts(message) + 1
        headers = [
            ("content-type", _content_type(message)),
            ("sless-trigger", trigger.name),
            ("sless-attempt", str(attempt)),
        ]
        if message.message_id:
            headers.append(("sless-message-id", _HEADER_VALUE.sub("", message.message_id)[:200]))
        invocation_id = uuid.uuid4()
        outcome = await invoke(
            self.backend,
            trigger.namespace,
            spec.function,
            invocation_id=invocation_id,
            headers=headers,
            body=message.body,
            tracing=self.tracing,
            trigger=trigger.name,
            traceparent=valid_traceparent((message.headers or {}).get("traceparent")),
            kind="consumer",
        )
        record_outcome(
            self.recorder,
            trigger.namespace,
            spec.function,
            invocation_id,
            outcome,
            trigger=trigger.name,
        )
        try:
            if 200 <= outcome.status < 300:
                await message.ack()
            else:
                retryable = outcome.status >= 500 or outcome.status in _RETRYABLE_4XX
                if retryable and attempt < self.source.max_attempts:
                    target = self._retry_queue(self._delay_ms(attempt))
                else:
                    target = f"{self.queue_name}.dead"
                    log.warning(
                        "trigger %s: message dead-lettered after %d attempt(s), last status %d",
                        self._label,
                        attempt,
                        outcome.status,
                    )
                await self._republish(message, target, attempt, outcome.status)
                await message.ack()
            self.settled += 1
        except Exception as e:  # the channel is gone: unacknowledged, it comes back
            log.info(
                "trigger %s: could not settle a message (%s); the broker will redeliver it",
                self._label,
                type(e).__name__,
            )

    async def _republish(
        self, message: AbstractIncomingMessage, target: str, attempts: int, status: int
    ) -> None:
        if self._channel is None:
            raise RuntimeError("no channel")
        headers = dict(message.headers or {})
        headers[ATTEMPTS_HEADER] = attempts
        headers[STATUS_HEADER] = status
        copy = aio_pika.Message(
            message.body,
            headers=headers,
            content_type=message.content_type,
            content_encoding=message.content_encoding,
            message_id=message.message_id,
            correlation_id=message.correlation_id,
            timestamp=message.timestamp,
            type=message.type,
            app_id=message.app_id,
            delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
        )
        await self._channel.default_exchange.publish(copy, routing_key=target, mandatory=True)


class RabbitConsumers:
    """Keeps one ``Consumer`` per enabled rabbitmq trigger, reconciled with the source."""

    def __init__(
        self,
        settings: EventsSettings,
        grace: float,
        backend: Serving,
        recorder: InvocationRecorder,
        triggers: TriggerSource,
        secrets: SecretRepository,
        tracing: Tracing | None = None,
    ) -> None:
        self.settings = settings
        self.tracing = tracing
        self.grace = grace
        self.backend = backend
        self.recorder = recorder
        self.triggers = triggers
        self.secrets = secrets
        #: (namespace, trigger) -> (consumer, what it was started from)
        self.running: dict[tuple[str, str], tuple[Consumer, tuple[str, datetime]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._warned: set[tuple[str, str, str]] = set()

    def start(self) -> None:
        if self._task is None:
            self.triggers.subscribe(self.wake)
            self._task = asyncio.create_task(self._run(), name="rabbitmq-consumers")

    def wake(self) -> None:
        self._wake.set()

    def consumer(self, namespace: str, name: str) -> Consumer | None:
        found = self.running.get((namespace, name))
        return found[0] if found else None

    def lags(self) -> dict[tuple[str, str, str], int]:
        """``(namespace, trigger, function) → messages waiting`` (``Consumer.lag``)."""
        return {
            (c.trigger.namespace, c.trigger.name, c.trigger.spec.function): c.lag
            for c, _ in self.running.values()
            if c.lag is not None
        }

    async def stop(self) -> None:
        await cancel_and_wait([self._task])
        self._task = None
        running = [consumer for consumer, _ in self.running.values()]
        self.running.clear()
        await asyncio.gather(*(c.stop(self.grace) for c in running))

    async def _run(self) -> None:
        while True:
            try:
                await self.reconcile()
            except Exception as e:  # the database or the API may be away: try again next pass
                log.warning("rabbitmq consumers pass failed: %s", type(e).__name__)
            with contextlib.suppress(TimeoutError):
                await wait_for(self._wake.wait(), self.settings.scheduler_interval_s)
            self._wake.clear()

    async def reconcile(self) -> None:
        wanted: dict[tuple[str, str], tuple[Trigger, RabbitMQSource, SecretStr, Any]] = {}
        for found in await self.triggers.rabbitmq_triggers():
            trigger = found.trigger
            key = (trigger.namespace, trigger.name)
            try:
                source = RabbitMQSource.of(trigger.spec)
                url, written = await self.secrets.reveal(trigger.namespace, source.url_secret)
            except (ValidationError, NotFound) as e:
                if (*key, found.version) not in self._warned:
                    self._warned.add((*key, found.version))
                    what = "its secret is missing" if isinstance(e, NotFound) else "invalid spec"
                    log.warning("trigger %s/%s is not consumed: %s", *key, what)
                continue
            wanted[key] = (trigger, source, url, (found.version, written))
        stopping = []
        for key, (consumer, started_from) in list(self.running.items()):
            if key not in wanted or wanted[key][3] != started_from:
                del self.running[key]
                stopping.append(consumer.stop(self.grace))
        await asyncio.gather(*stopping)
        for key, (trigger, source, url, started_from) in wanted.items():
            if key in self.running:
                continue
            args = (trigger, source, url, self.settings, self.backend, self.recorder)
            consumer = Consumer(*args, grace=self.grace, tracing=self.tracing)
            consumer.start()
            self.running[key] = (consumer, started_from)
