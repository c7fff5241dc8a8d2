GREETINGS = {"en": "Hello", "fr": "Bonjour", "ru": "Привет", "ja": "こんにちは", "ar": "مرحبا"}

def handle(event, context):
    lang = event["query"].get("lang", "en")
    name = event["query"].get("name", "world")
    return {"message": f"{GREETINGS.get(lang, GREETINGS['en'])}, {name}! 👋"}
