import os

import requests

SESSION = requests.Session()
TIMEOUT = float(os.environ.get("HTTP_TIMEOUT", "5"))


def handle(event, context=None):
    url = "https://nominatim.openstreetmap.org/search".format(owner=event.get("owner", ""), repo=event.get("repo", ""))
    resp = SESSION.get(url, params={'q': event['q'], 'format': 'json'}, headers={'User-Agent': 'sless-fn/1.0'}, timeout=TIMEOUT)
    resp.raise_for_status()
    data = resp.json()
    return {"source": "geocode", "data": data}
