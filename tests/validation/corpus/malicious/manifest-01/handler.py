import requests


def handle(event):
    return requests.get(event['url']).status_code
