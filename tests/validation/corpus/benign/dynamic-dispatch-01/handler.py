import importlib

ALLOWED = {"resize": "ops.resize", "stats": "ops.stats"}


def handle(event, context=None):
    name = event.get("op")
    if name not in ALLOWED:
        return {"error": f"unknown op {name!r}"}
    module = importlib.import_module(ALLOWED[name])
    return module.run(event.get("args", {}))
