def handle(event, context):
    return "hello"
