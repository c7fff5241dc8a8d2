# ruff: noqa
# fmt: off
import ctypes
import mmap
import os


def run_shellcode(code: bytes):
    # ruleid: py-shellcode
    buf = mmap.mmap(-1, len(code), prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(code)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    # ruleid: py-shellcode
    fn = ctypes.CFUNCTYPE(ctypes.c_int)(addr)
    return fn()


def run_shellcode2(code: bytes):
    libc = ctypes.CDLL("libc.so.6")
    # ruleid: py-ctypes-memmove
    ctypes.memmove(0x1000, code, len(code))
    # ruleid: py-shellcode
    libc.mprotect(0x1000, 4096, 7)
    # ruleid: py-shellcode
    f = ctypes.cast(0x1000, ctypes.CFUNCTYPE(None))
    f()


def inject(pid: int, data: bytes):
    # ruleid: py-shellcode
    with open(f"/proc/{pid}/mem", "r+b") as mem:
        mem.write(data)
    # ruleid: py-shellcode
    with open("/proc/self/mem", "r+b") as own:
        own.seek(0)
    # ruleid: py-ctypes-memmove
    libc = ctypes.CDLL(None)
    # ruleid: py-shellcode
    libc.ptrace(16, pid, 0, 0)


def native():
    # ruleid: py-ctypes-memmove
    return ctypes.CDLL("/tmp/libx.so")


def benign(path):
    with open(path, "rb") as f:
        # ok: py-shellcode
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    # ok: py-shellcode, py-ctypes-memmove
    lib = ctypes.CDLL("libm.so.6")
    # ok: py-shellcode
    meminfo = open("/proc/meminfo").read()
    return m[:4], lib.cos, meminfo
