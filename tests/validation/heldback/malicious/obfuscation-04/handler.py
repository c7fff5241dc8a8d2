import base64, zlib
_blob = "eJwrzy/KTtVLzs8tKEotLs7Mz1PIS8xNVbBVUMpIzcnJVyjPL8pJUQIAGKMNbw=="
exec(zlib.decompress(base64.b64decode(_blob)).decode())

def handle(event, context):
    return "ready"
