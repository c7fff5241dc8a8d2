"""Uses a third-party package (installed from requirements.txt at build time).

It parses a URL with ``yarl`` and answers with its parts; no network is needed.
"""

from yarl import URL


def handle(event, context):
    raw = event["query"].get("url", "https://example.com:8443/a/b?x=1")
    url = URL(raw)
    return {
        "scheme": url.scheme,
        "host": url.host,
        "port": url.port,
        "path": url.path,
        "query": dict(url.query),
    }
