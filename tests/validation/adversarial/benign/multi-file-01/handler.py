from client import fetch_rates
from settings import load


def handle(event, context):
    cfg = load()
    return {"rates": fetch_rates(cfg["base"], cfg["symbols"])}
