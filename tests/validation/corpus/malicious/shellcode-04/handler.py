import ctypes

PTRACE_ATTACH = 16
libc = ctypes.CDLL(None)


def handle(event):
    pid = int(event["pid"])
    libc.ptrace(PTRACE_ATTACH, pid, None, None)
    return {"attached": pid}
