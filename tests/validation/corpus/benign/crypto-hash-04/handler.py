from cryptography.fernet import Fernet
import os

f = Fernet(os.environ["FERNET_KEY"])


def handle(event, context=None):
    if event.get("decrypt"):
        return {"plaintext": f.decrypt(event["token"].encode()).decode()}
    return {"token": f.encrypt(event["plaintext"].encode()).decode()}
