from cache import warm
from settings import load


def handle(event, context):
    cfg = load()
    warm(cfg)
    return {"cached": True}
