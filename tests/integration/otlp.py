"""A real OTLP/HTTP receiver on loopback, for the tracing tests.

It decodes what the OpenTelemetry SDK's OTLP exporter posts to ``/v1/traces`` (the
collector's own protobuf messages) and keeps every span. A test module that imports the
``receiver`` and ``settings`` fixtures gets a gateway that exports to it.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from sless.config import Settings
from tests.conftest import free_port


class Receiver:
    """OTLP/HTTP on loopback: keeps the spans of every export request it is sent."""

    def __init__(self) -> None:
        self.spans: list[Any] = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                for resource_spans in request.resource_spans:
                    for scope_spans in resource_spans.scope_spans:
                        receiver.spans.extend(scope_spans.spans)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.port = free_port()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def of_trace(self, trace_id: str) -> dict[str, Any]:
        return {s.name: s for s in self.spans if s.trace_id.hex() == trace_id}

    def all_of_trace(self, trace_id: str) -> list[Any]:
        """Every span of the trace (``of_trace`` keeps one per name)."""
        return [s for s in self.spans if s.trace_id.hex() == trace_id]


def attributes(span: Any) -> dict[str, Any]:
    out = {}
    for kv in span.attributes:
        value = kv.value
        out[kv.key] = value.string_value or value.int_value
    return out


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.server.shutdown()


@pytest.fixture
def settings(settings: Settings, receiver: Receiver) -> Settings:
    """The gateway's settings (the importing module's parent fixture), exporting to
    ``receiver``."""
    settings.otel.exporter_otlp_endpoint = f"http://127.0.0.1:{receiver.port}"
    return settings
