from typing import Callable

HANDLERS: dict[str, Callable[[dict], dict]] = {}


def route(name):
    def register(fn):
        HANDLERS[name] = fn
        return fn
    return register


@route("ping")
def ping(event):
    return {"pong": True}


@route("sum")
def total(event):
    return {"sum": sum(event.get("values", []))}


def handle(event, context=None):
    fn = HANDLERS.get(event.get("action", "ping"))
    return fn(event) if fn else {"error": "no such action"}
