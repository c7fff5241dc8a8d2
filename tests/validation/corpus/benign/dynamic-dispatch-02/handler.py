class Calculator:
    def add(self, a, b):
        return a + b

    def sub(self, a, b):
        return a - b

    def mul(self, a, b):
        return a * b


def handle(event, context=None):
    calc = Calculator()
    op = getattr(calc, event["op"], None)
    if op is None or event["op"].startswith("_"):
        return {"error": "unsupported"}
    return {"result": op(float(event["a"]), float(event["b"]))}
