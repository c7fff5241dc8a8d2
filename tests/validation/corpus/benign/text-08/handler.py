import textwrap


def handle(event, context=None):
    width = max(20, min(int(event.get("width", 72)), 200))
    paragraphs = [p.strip() for p in event["text"].split("\n\n") if p.strip()]
    wrapped = "\n\n".join(textwrap.fill(p, width=width) for p in paragraphs)
    return {"text": wrapped, "palindrome": event["text"].lower() == event["text"].lower()[::-1]}
