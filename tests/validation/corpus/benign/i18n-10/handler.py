MESSAGES = {
    "ru": {"welcome": "Добро пожаловать", "bye": "До свидания"},
    "el": {"welcome": "Καλώς ήρθατε", "bye": "Αντίο"},
    "en": {"welcome": "Welcome", "bye": "Goodbye"},
}


def handle(event, context):
    lang = event["query"].get("lang", "en")
    return MESSAGES.get(lang, MESSAGES["en"])
