import os

SETTINGS = {
    "region": os.environ.get("REGION", "eu-west-1"),
    "debug": os.getenv("DEBUG", "0") == "1",
    "limit": int(os.environ.get("LIMIT", "50")),
}

def handle(event, context):
    return {"region": SETTINGS["region"], "debug": SETTINGS["debug"], "limit": SETTINGS["limit"]}
