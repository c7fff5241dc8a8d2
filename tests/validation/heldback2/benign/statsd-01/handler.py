"""Records a page view and sends counters to our StatsD over UDP."""

import os
import socket

STATSD = (os.environ.get("STATSD_HOST", "statsd.internal.example.com"), 8125)
_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)


def _metric(line: str) -> None:
    try:
        _sock.sendto(line.encode(), STATSD)
    except OSError:
        pass


def handle(event, context):
    page = event["query"].get("page", "home").replace(":", "_")[:64]
    _metric(f"pageviews.{page}:1|c")
    _metric(f"fn.{context.function}.calls:1|c")
    return {"recorded": page}
