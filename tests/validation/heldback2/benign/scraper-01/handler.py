"""Top story titles from Hacker News' front page."""

import urllib.request
from html.parser import HTMLParser


class _Titles(HTMLParser):
    def __init__(self):
        super().__init__()
        self.titles, self._in = [], False

    def handle_starttag(self, tag, attrs):
        if tag == "span" and ("class", "titleline") in attrs:
            self._in = True

    def handle_data(self, data):
        if self._in and data.strip():
            self.titles.append(data.strip())
            self._in = False


def handle(event, context):
    limit = min(30, int(event["query"].get("limit", "10")))
    req = urllib.request.Request("https://news.ycombinator.com/", headers={"User-Agent": "hn-digest/1.0"})
    try:
        html = urllib.request.urlopen(req, timeout=5).read().decode("utf-8", "replace")
    except OSError as exc:
        return {"statusCode": 502, "body": {"error": str(exc)}}
    parser = _Titles()
    parser.feed(html)
    return {"titles": parser.titles[:limit]}
