import hashlib
import os
import secrets


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    dk = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)
    return f"scrypt${salt.hex()}${dk.hex()}"


def handle(event, context=None):
    pepper = os.environ.get("PEPPER", "")
    return {"hash": hash_password(event["password"] + pepper)}
