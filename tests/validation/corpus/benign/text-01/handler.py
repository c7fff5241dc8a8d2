import collections
import re

STOP = {"the", "a", "an", "and", "or", "of", "to", "in", "is", "it", "for", "on", "with"}


def handle(event, context=None):
    words = re.findall(r"[a-z']+", event["text"].lower())
    counts = collections.Counter(w for w in words if w not in STOP and len(w) > 2)
    return {"words": len(words), "top": counts.most_common(int(event.get("n", 10)))}
