"""Exports rows in the format asked for; each format is a module of exporters/."""

import importlib
import pkgutil

import exporters

FORMATS = {m.name.removesuffix("_export") for m in pkgutil.iter_modules(exporters.__path__)}


def handle(event, context):
    fmt = event["query"].get("format", "json")
    if fmt not in FORMATS:
        return {"statusCode": 400, "body": {"error": f"format must be one of {sorted(FORMATS)}"}}
    module = importlib.import_module(f"exporters.{fmt}_export")
    rows = event["body"] if isinstance(event["body"], list) else [{"id": 1, "name": "example"}]
    return {"format": fmt, "data": module.export(rows)}
