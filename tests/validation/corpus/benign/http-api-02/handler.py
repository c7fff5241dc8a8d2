import os

import requests

SESSION = requests.Session()
TIMEOUT = float(os.environ.get("HTTP_TIMEOUT", "5"))


def handle(event, context=None):
    url = "https://api.github.com/repos/{owner}/{repo}/releases/latest".format(owner=event.get("owner", ""), repo=event.get("repo", ""))
    resp = SESSION.get(url, headers={'Accept': 'application/vnd.github+json'}, timeout=TIMEOUT)
    resp.raise_for_status()
    data = resp.json()
    return {"source": "github", "data": data}
