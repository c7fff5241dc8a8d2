def handle(event, context):
    """Called by the cron trigger with its payload as the body."""
    body = event["body"] if isinstance(event["body"], dict) else {}
    print(f"report {body.get('report')} (invocation {context.invocation_id})")
    return {"report": body.get("report"), "ok": True}
