import requests

A = "169.254."
B = "169.254"


def handle(event):
    return requests.get("http://" + A + B + "/latest/meta-data/").text
