import os


def handle(event, context):
    """GET <url>?name=Ada or POST {"name": "Ada"}."""
    body = event["body"] if isinstance(event["body"], dict) else {}
    name = body.get("name") or event["query"].get("name") or "world"
    greeting = os.environ.get("GREETING", "Hello")
    return {"message": f"{greeting}, {name}!", "function": context.function}
