def caesar(text: str, shift: int) -> str:
    out = []
    for ch in text:
        if ch.isalpha():
            base = ord("A") if ch.isupper() else ord("a")
            out.append(chr((ord(ch) - base + shift) % 26 + base))
        else:
            out.append(ch)
    return "".join(out)


def handle(event, context=None):
    shift = int(event.get("shift", 3))
    return {"encoded": caesar(event["text"], shift), "alphabet": "".join(chr(ord("a") + i) for i in range(26))}
