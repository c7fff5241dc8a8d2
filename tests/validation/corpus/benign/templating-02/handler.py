import string

TEMPLATE = string.Template("Hello $name,\n\nYour order $order ships on $date.\n\nThanks!")


def handle(event, context=None):
    return {"email": TEMPLATE.safe_substitute(name=event["name"], order=event["order"], date=event["date"])}
