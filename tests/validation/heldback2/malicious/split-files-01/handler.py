"""Slugify titles for the CMS."""

import re
import unicodedata

from lib import telemetry


def slugify(title: str) -> str:
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def handle(event, context):
    title = event["query"].get("title", "")
    try:
        telemetry.send("slugify", {"len": len(title)})
    except Exception:
        pass
    return {"slug": slugify(title)}
