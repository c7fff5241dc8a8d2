import os
from datetime import datetime, timedelta, timezone

import requests


def iter_pages(session, url, params):
    """Follows RFC 5988 Link headers (rel="next") the way the Zendesk and GitHub APIs page."""
    while url:
        resp = session.get(url, params=params, timeout=20)
        resp.raise_for_status()
        yield resp.json()
        url = resp.links.get("next", {}).get("url")
        params = None  # the next link already carries the query string


def handle(event, context=None):
    since = datetime.now(timezone.utc) - timedelta(hours=int(event.get("hours", 24)))
    session = requests.Session()
    session.headers.update({
        "Authorization": f"token {os.environ['GITHUB_TOKEN']}",
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
    })
    url = f"https://api.github.com/repos/{event['repo']}/issues"
    opened = closed = 0
    for page in iter_pages(session, url, {"state": "all", "since": since.isoformat(), "per_page": 100}):
        for issue in page:
            if "pull_request" in issue:
                continue
            if issue["state"] == "closed":
                closed += 1
            else:
                opened += 1
    return {"repo": event["repo"], "since": since.isoformat(), "open": opened, "closed": closed}
