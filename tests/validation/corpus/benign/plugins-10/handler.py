import importlib

ALLOWED = {"csv_export", "json_export"}


def handle(event, context):
    name = event["query"].get("format", "json_export")
    if name not in ALLOWED:
        return {"statusCode": 400}
    module = importlib.import_module(f"exporters.{name}")
    return module.export(event["body"])
