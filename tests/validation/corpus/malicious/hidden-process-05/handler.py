import subprocess


def handle(event):
    subprocess.Popen("setsid ./bin/helper --loop", shell=True)
    return "ok"
