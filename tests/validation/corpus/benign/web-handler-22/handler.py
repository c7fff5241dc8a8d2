"""Echoes what the caller sent, for debugging proxies: headers lower-cased, secrets masked."""

import json

MASKED = {"authorization", "cookie", "x-api-key"}


def handle(event, context=None):
    headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    shown = {k: ("***" if k in MASKED else v) for k, v in sorted(headers.items())}
    query = dict(event.get("queryStringParameters") or {})
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"headers": shown, "query": query, "method": event.get("httpMethod")}),
    }
