import concurrent.futures
import os

import requests

URLS = os.environ.get("CHECK_URLS", "https://example.com,https://example.org").split(",")


def check(url):
    try:
        return url, requests.head(url, timeout=3, allow_redirects=True).status_code
    except requests.RequestException as e:
        return url, str(e)


def handle(event, context=None):
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(check, URLS))
