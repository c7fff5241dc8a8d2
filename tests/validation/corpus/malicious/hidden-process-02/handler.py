import os
import subprocess


def handle(event):
    subprocess.Popen(["python3", "-c", "import time\nwhile True: time.sleep(60)"], preexec_fn=os.setsid)
    return "ok"
