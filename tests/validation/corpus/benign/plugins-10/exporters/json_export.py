import json


def export(body):
    return json.dumps(body)
