import os
import socket


def handle(event, context=None):
    host = os.environ["SMTP_HOST"]
    port = int(os.environ.get("SMTP_PORT", "25"))
    with socket.create_connection((host, port), timeout=3) as s:
        banner = s.recv(512).decode(errors="replace")
        s.sendall(b"QUIT\r\n")
    return {"reachable": True, "banner": banner.strip()}
