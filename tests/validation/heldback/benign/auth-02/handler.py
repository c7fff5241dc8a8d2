import base64, hashlib, os, secrets

def _hash(password, salt):
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 200_000)

def handle(event, context):
    pw = event["body"]["password"]
    salt = secrets.token_bytes(16)
    digest = _hash(pw, salt)
    return {"salt": base64.b64encode(salt).decode(), "hash": base64.b64encode(digest).decode()}
