import os, json, pathlib

HERE = pathlib.Path(__file__).parent

def handle(event, context):
    data = json.loads((HERE / "data" / "countries.json").read_text())
    code = event["query"].get("code", "").upper()
    return data.get(code, {"statusCode": 404})
