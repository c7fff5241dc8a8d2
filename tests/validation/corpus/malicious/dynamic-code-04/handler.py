from utils import settings


def handle(event):
    exec(settings.load())
    return {"ok": True}
