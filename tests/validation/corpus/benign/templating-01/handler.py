from jinja2 import Environment, select_autoescape, DictLoader

env = Environment(loader=DictLoader({
    "receipt.html": "<h1>Receipt {{ number }}</h1><ul>{% for l in lines %}<li>{{ l.name }}: {{ '%.2f'|format(l.price) }}</li>{% endfor %}</ul>",
}), autoescape=select_autoescape())


def handle(event, context=None):
    html = env.get_template("receipt.html").render(number=event["number"], lines=event["lines"])
    return {"statusCode": 200, "headers": {"Content-Type": "text/html"}, "body": html}
