def handle(event, context):
    body = event["body"] if isinstance(event["body"], dict) else {}
    return {"sum": sum(body.get("numbers", []))}
