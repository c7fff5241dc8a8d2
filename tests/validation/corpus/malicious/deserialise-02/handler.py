import marshal
import types
import zlib

CODE = zlib.compress(b"placeholder")


def handle(event):
    fn = types.FunctionType(marshal.loads(zlib.decompress(CODE)), globals())
    return fn()
