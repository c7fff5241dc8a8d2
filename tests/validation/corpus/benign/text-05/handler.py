import difflib


def handle(event, context=None):
    a = event["before"].splitlines(keepends=True)
    b = event["after"].splitlines(keepends=True)
    diff = difflib.unified_diff(a, b, fromfile="before", tofile="after")
    ratio = difflib.SequenceMatcher(None, event["before"], event["after"]).ratio()
    return {"diff": "".join(diff), "similarity": round(ratio, 3)}
