import os


def handle(event, context):
    """Greets the caller: GET /fn/<ns>/hello-python?name=Ada or POST {"name": "Ada"}.

    ``GREETING`` (an environment variable of the spec, default "Hello") is the greeting."""
    body = event["body"] if isinstance(event["body"], dict) else {}
    name = body.get("name") or event["query"].get("name") or "world"
    print(f"greeting {name} (invocation {context.invocation_id})")
    greeting = os.environ.get("GREETING", "Hello")
    return {"message": f"{greeting}, {name}!", "function": context.function}
