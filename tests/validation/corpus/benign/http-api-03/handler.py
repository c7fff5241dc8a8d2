import os

import requests

SESSION = requests.Session()
TIMEOUT = float(os.environ.get("HTTP_TIMEOUT", "5"))


def handle(event, context=None):
    url = "https://api.frankfurter.app/latest".format(owner=event.get("owner", ""), repo=event.get("repo", ""))
    resp = SESSION.get(url, params={'from': event.get('base', 'EUR')}, timeout=TIMEOUT)
    resp.raise_for_status()
    data = resp.json()
    return {"source": "exchange", "data": data}
