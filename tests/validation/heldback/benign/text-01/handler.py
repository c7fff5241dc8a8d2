import re, unicodedata

def slugify(s):
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")

def handle(event, context):
    title = event["query"].get("title", "")
    return {"slug": slugify(title)[:80]}
