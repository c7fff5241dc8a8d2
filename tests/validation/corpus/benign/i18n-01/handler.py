GREETINGS = {
    "de": "Grüß Gott",
    "fa": "سلام‌علیکم",
    "ja": "こんにちは",
    "ar": "مرحبا",
    "hi": "नमस्ते",
}


def handle(event, context=None):
    lang = event.get("lang", "en")
    return {"greeting": GREETINGS.get(lang, "Hello"), "rtl": lang in {"ar", "fa", "he"}}
