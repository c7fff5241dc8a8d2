def handle(event, context):
    """Greets the caller: GET /fn/<ns>/hello-python?name=Ada or POST {"name": "Ada"}."""
    body = event["body"] if isinstance(event["body"], dict) else {}
    name = body.get("name") or event["query"].get("name") or "world"
    print(f"greeting {name} (invocation {context.invocation_id})")
    return {"message": f"Hello, {name}!", "function": context.function}
