"""A local OpenAI-compatible HTTP server for the LLM review tests.

The one fake the validation tests allow: the model itself. It is a real aiohttp server on
127.0.0.1 (an ephemeral port) in a background thread with its own event loop, so the real
``openai.AsyncOpenAI`` client talks to it over real HTTP, and a test that blocked its own
event loop would hang here instead of passing.

It implements ``POST /v1/chat/completions``, records every request (body and headers) so a
test can see exactly what reached the "model", and answers as the test scripts it: a queue
of :class:`Reply` objects consumed one per request, then a default reply (or a function of
the request body).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(frozen=True)
class Reply:
    """One scripted answer: an HTTP status, a JSON (or raw text) body, an optional delay."""

    status: int = 200
    body: dict[str, Any] | str = field(default_factory=dict)
    delay_s: float = 0.0
    content_type: str = "application/json"
    #: send the body a byte at a time, this long between bytes (a model that trickles)
    trickle_s: float = 0.0


def completion(
    content: str | None,
    *,
    refusal: str | None = None,
    finish_reason: str = "stop",
    model: str = "fake-model",
) -> Reply:
    """A chat completion as an OpenAI-compatible server returns it."""
    return Reply(
        body={
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": refusal},
                    "finish_reason": finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    )


def verdict(
    name: str,
    findings: list[dict[str, Any]] | None = None,
    confidence: float = 0.9,
) -> Reply:
    """A well-formed review answer."""
    answer = {"verdict": name, "confidence": confidence, "findings": findings or []}
    return completion(json.dumps(answer))


def error(status: int, message: str = "error") -> Reply:
    return Reply(status=status, body={"error": {"message": message, "type": "fake"}})


@dataclass(frozen=True)
class Request:
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def text(self) -> str:
        """Everything the model was sent, messages included, as one string."""
        return json.dumps(self.body, ensure_ascii=False)

    @property
    def user_content(self) -> str:
        messages = self.body["messages"]
        return "\n".join(str(m["content"]) for m in messages if m["role"] == "user")


class FakeLLM:
    """Start with :meth:`start`, stop with :meth:`stop`; :meth:`reset` between tests."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._script: list[Reply] = []
        self._default: Reply | Callable[[dict[str, Any]], Reply] = verdict("benign")
        self._requests: list[Request] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[Request]:
        with self._lock:
            return list(self._requests)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self._requests.clear()
            self._default = verdict("benign")

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, in order."""
        with self._lock:
            self._script.extend(replies)

    def always(self, reply: Reply | Callable[[dict[str, Any]], Reply]) -> None:
        """Answer every request (after the script) with ``reply``."""
        with self._lock:
            self._default = reply

    # --- server ---

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            return web.json_response({"error": {"message": "bad json"}}, status=400)
        with self._lock:
            self._requests.append(Request(body, dict(request.headers)))
            if self._script:
                reply: Reply | Callable[[dict[str, Any]], Reply] = self._script.pop(0)
            else:
                reply = self._default
        if callable(reply):
            reply = reply(body)
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        text = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
        if not reply.trickle_s:
            return web.Response(status=reply.status, text=text, content_type=reply.content_type)
        response = web.StreamResponse(status=reply.status)
        response.content_type = reply.content_type
        await response.prepare(request)
        for byte in text.encode():
            await response.write(bytes([byte]))
            await asyncio.sleep(reply.trickle_s)
        await response.write_eof()
        return response

    def start(self) -> None:
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._serve())
            except BaseException as e:
                failure.append(e)
                started.set()
                return
            started.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, name="fake-llm", daemon=True)
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError("fake LLM server did not start")
        if failure:
            raise RuntimeError("fake LLM server failed to start") from failure[0]

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        # handler_cancellation: a client that gives up (timeout) ends the slow handler
        self._runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=1.0)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()

    def stop(self) -> None:
        loop, runner, thread = self._loop, self._runner, self._thread
        if loop is None or thread is None:
            return
        if runner is not None:
            asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
