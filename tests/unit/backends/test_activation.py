"""The gateway's activator (scale from zero): one wake-up write for every held call of a
function, the calls released when a ready address appears, a bound, throttled call records,
and a process that may not write Functions stops trying. The Kubernetes API is faked at our
own boundary (``KubeApi.merge_patch``): the node tests run it against a real cluster."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from sless.backends.kubernetes import activation
from sless.backends.kubernetes.activation import Activator
from sless.config import KubernetesSettings
from sless.errors import NotReady
from sless.kube import Forbidden
from sless.policies import labels


class RecordingApi:
    def __init__(self, refuse: bool = False) -> None:
        self.patches: list[tuple[str, dict[str, Any]]] = []
        self.refuse = refuse
        self.attempts = 0

    async def merge_patch(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.attempts += 1
        if self.refuse:
            raise Forbidden("functions is forbidden")
        self.patches.append((path, body))
        return {}


def _activator(api: RecordingApi, **settings: Any) -> Activator:
    k = KubernetesSettings(**{"idle_timeout_s": 20, "activation_timeout_s": 5, **settings})
    return Activator(api, lambda ns, name: f"/fn/{ns}/{name}", k)  # type: ignore[arg-type]


async def test_held_calls_share_one_wake_up_and_go_once_ready() -> None:
    api = RecordingApi()
    activator = _activator(api)
    ready = False
    key = ("sless-acme", "hello")
    held = [asyncio.create_task(activator.wake(key, lambda: ready)) for _ in range(3)]
    await asyncio.sleep(0.05)
    assert not any(t.done() for t in held)
    assert len(api.patches) == 1
    path, body = api.patches[0]
    assert path == "/fn/sless-acme/hello"
    assert labels.LAST_CALL_ANNOTATION in body["metadata"]["annotations"]
    ready = True
    activator.available(key)
    await asyncio.wait_for(asyncio.gather(*held), 1)


async def test_a_wake_up_is_bounded() -> None:
    activator = _activator(RecordingApi(), activation_timeout_s=0.2)
    with pytest.raises(NotReady, match=r"no ready instance after 0\.2 s"):
        await activator.wake(("sless-acme", "hello"), lambda: False)


async def test_calls_are_recorded_at_most_every_quarter_of_the_idle_timeout() -> None:
    api = RecordingApi()
    activator = _activator(api)
    for _ in range(10):
        activator.called(("sless-acme", "hello"))
    await asyncio.sleep(0.05)
    assert len(api.patches) == 1
    await activator.close()


async def test_a_reader_stops_recording_and_fails_wake_ups_at_once() -> None:
    api = RecordingApi(refuse=True)
    activator = _activator(api)
    activator.called(("sless-acme", "hello"))
    await asyncio.sleep(0.05)
    activator.called(("sless-acme", "other"))
    await asyncio.sleep(0.05)
    assert api.attempts == 1  # refused once: no more tries
    with pytest.raises(NotReady, match="no ready instances"):
        await activator.wake(("sless-acme", "other"), lambda: False)


async def test_scale_to_zero_off_means_no_hold() -> None:
    activator = _activator(RecordingApi(), idle_timeout_s=0)
    with pytest.raises(NotReady):
        await activator.wake(("sless-acme", "hello"), lambda: False)


async def test_a_function_woken_once_is_woken_again_after_it_slept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The wake-up after a first one writes again (a lost wake-up once left the second
    call waiting for nothing)."""
    monkeypatch.setattr(activation, "_REWAKE_S", 0.0)
    api = RecordingApi()
    activator = _activator(api)
    key = ("sless-acme", "hello")
    ready = False
    first = asyncio.create_task(activator.wake(key, lambda: ready))
    await asyncio.sleep(0.05)
    ready = True
    activator.available(key)
    await asyncio.wait_for(first, 1)
    ready = False  # scaled to zero again
    second = asyncio.create_task(activator.wake(key, lambda: ready))
    await asyncio.sleep(0.05)
    assert len(api.patches) == 2
    ready = True
    activator.available(key)
    await asyncio.wait_for(second, 1)
