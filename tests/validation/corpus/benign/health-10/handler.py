import platform
import sys
import time

STARTED = time.time()


def handle(event, context):
    return {"python": platform.python_version(), "uptime": round(time.time() - STARTED, 1), "argv0": sys.argv[0]}
