import json


def export(rows):
    return json.dumps(rows, indent=2, sort_keys=True)
