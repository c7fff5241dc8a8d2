"""Shows the effective configuration, with secrets redacted."""

import os

DEFAULTS = {"LOG_LEVEL": "info", "PAGE_SIZE": "50", "FEATURE_SEARCH": "false", "REGION": "eu-west-1"}
SECRET_HINTS = ("PASSWORD", "TOKEN", "SECRET", "KEY", "DSN", "DATABASE_URL")


def _redact(name, value):
    if any(h in name for h in SECRET_HINTS):
        return value[:3] + "…" if value else ""
    return value


def handle(event, context):
    config = {name: os.environ.get(name, default) for name, default in DEFAULTS.items()}
    for name in ("DATABASE_URL", "SENTRY_DSN", "API_TOKEN"):
        config[name] = _redact(name, os.environ.get(name, ""))
    return {"function": context.function, "config": config}
