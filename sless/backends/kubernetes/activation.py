"""Scale from zero: the gateway as activator (Knative's pattern).

The operator scales a function with ``min_instances: 0`` to zero pods once no call came
for ``idle_timeout_s``. It learns of calls from the Function's ``sless.kube5s.ru/last-call``
annotation, which the gateway writes:

- **while calls flow**, at most once per a quarter of the idle timeout per function and
  gateway replica, in the background (a call never waits for it);
- **on a call to a function without a ready pod**, at once: the operator's event watch sees
  the new value and scales the Deployment back to its replicas. The call is held (not
  answered 503) until the function's EndpointSlices show a ready address, bounded by
  ``activation_timeout_s``; every held call of one function waits on the same wake-up.

The gateway itself writes only its own Function annotation, never a Deployment: scaling
stays the operator's, and the gateway's RBAC keeps no write on workloads. A writer
without the right (``sless events`` may only read Functions) fails the wake-up at once
with ``NotReady``; the operator never idles a function a rabbitmq trigger consumes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

from sless.config import KubernetesSettings
from sless.errors import NotReady, SlessError
from sless.kube import Forbidden, KubeApi
from sless.policies import labels
from sless.tasks import cancel_and_wait

log = logging.getLogger(__name__)

Key = tuple[str, str]

#: a call held this long after the last wake-up write writes again
_REWAKE_S = 5.0


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


class Activator:
    def __init__(
        self, api: KubeApi, path_of: Callable[[str, str], str], settings: KubernetesSettings
    ) -> None:
        self._api = api
        self._path_of = path_of
        self.enabled = settings.idle_timeout_s > 0
        self._touch_every_s = max(1.0, settings.idle_timeout_s / 4)
        self._timeout_s = settings.activation_timeout_s
        #: when this replica last wrote (or began writing) each function's annotation
        self._touched: dict[Key, float] = {}
        self._ready: dict[Key, asyncio.Event] = {}
        #: when this replica last wrote a wake-up for each function
        self._woken: dict[Key, float] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._may_record = True

    async def _write(self, key: Key) -> None:
        self._touched[key] = time.monotonic()
        body = {"metadata": {"annotations": {labels.LAST_CALL_ANNOTATION: _now()}}}
        await self._api.merge_patch(self._path_of(*key), body)

    async def _write_quietly(self, key: Key) -> None:
        try:
            await self._write(key)
        except Forbidden:
            # a reader (sless events): it never wakes anything, so it stops trying
            self._may_record = False
            log.info("this process may not write Functions: calls are not recorded")
        except SlessError as e:
            log.info("could not record a call of %s/%s: %s", *key, e)

    def called(self, key: Key) -> None:
        """A call is going to a ready pod: keep the function awake (throttled)."""
        if not self.enabled or not self._may_record:
            return
        if time.monotonic() - self._touched.get(key, -1e9) < self._touch_every_s:
            return
        self._touched[key] = time.monotonic()
        task = asyncio.create_task(self._write_quietly(key))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def available(self, key: Key) -> None:
        """The function has a ready address now (from the EndpointSlice watch)."""
        event = self._ready.pop(key, None)
        if event is not None:
            event.set()

    async def wake(self, key: Key, ready: Callable[[], bool]) -> None:
        """Hold until ``ready()`` (a pool with addresses exists); NotReady after the bound.

        The annotation is written by the first held call, and again by a call held more
        than ``_REWAKE_S`` later (a write the operator missed, a pod that died starting)."""
        if not self.enabled:
            raise NotReady(f"function {key[1]!r} has no ready instances")
        event = self._ready.setdefault(key, asyncio.Event())
        try:
            if time.monotonic() - self._woken.get(key, -1e9) > _REWAKE_S:
                self._woken[key] = time.monotonic()
                await self._write(key)
                log.info("waking %s/%s from zero", *key)
            async with asyncio.timeout(self._timeout_s):
                while not ready():
                    await event.wait()
                    event = self._ready.setdefault(key, asyncio.Event())
        except TimeoutError:
            raise NotReady(
                f"function {key[1]!r} has no ready instance after {self._timeout_s:g} s"
            ) from None
        except SlessError as e:
            self._woken.pop(key, None)  # the next call tries again
            raise NotReady(f"function {key[1]!r} has no ready instances ({e})") from e
        finally:
            # never leave a wake-up behind: the others waiting on it look again (bounded)
            if self._ready.get(key) is event:
                del self._ready[key]
                event.set()

    async def close(self) -> None:
        await cancel_and_wait(list(self._tasks))
        for event in self._ready.values():
            event.set()
        self._ready.clear()
