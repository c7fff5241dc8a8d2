import hmac
import os


def handle(event, context):
    """Checks a password against the DB_PASSWORD secret (never echoes the secret):
    POST {"password": "..."} to /fn/<ns>/<name>."""
    expected = os.environ.get("DB_PASSWORD")
    if expected is None:
        return {"statusCode": 500, "body": {"error": "DB_PASSWORD is not set"}}
    body = event["body"] if isinstance(event["body"], dict) else {}
    given = str(body.get("password", ""))
    return {"match": hmac.compare_digest(given.encode(), expected.encode())}
