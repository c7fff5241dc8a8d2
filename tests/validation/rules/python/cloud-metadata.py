# ruff: noqa
# fmt: off
import os

import requests


def imds():
    # ruleid: py-cloud-metadata
    role = requests.get("http://169.254.169.254/latest/meta-data/iam/security-credentials/").text
    # ruleid: py-cloud-metadata
    gcp = requests.get("http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token", headers={"Metadata-Flavor": "Google"})
    # ruleid: py-cloud-metadata
    v6 = "http://[fd00:ec2::254]/latest/meta-data/"
    base = "169.254."
    # ruleid: py-cloud-metadata
    split = "http://" + base + "169.254/latest/"
    # ruleid: py-cloud-metadata
    dec = "http://2852039166/latest/meta-data/"
    # ruleid: py-cloud-metadata
    return role, gcp, v6, split, dec


def kube():
    # ruleid: py-cloud-metadata
    host = os.environ["KUBERNETES_SERVICE_HOST"]
    # ruleid: py-cloud-metadata
    return requests.get("https://kubernetes.default.svc/api/v1/namespaces/default/secrets", verify=False)


def benign():
    # ok: py-cloud-metadata
    r = requests.get("https://api.github.com/repos/org/repo/releases/latest")
    # ok: py-cloud-metadata
    ip = "10.0.0.254"
    # ok: py-cloud-metadata
    meta = {"metadata": {"name": "invoice-123"}}
    return r, ip, meta
