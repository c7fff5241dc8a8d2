import re
from datetime import date

IBAN = re.compile(r"^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$")


def iban_ok(value: str) -> bool:
    value = value.replace(" ", "").upper()
    if not IBAN.match(value):
        return False
    rearranged = value[4:] + value[:4]
    digits = "".join(str(int(c, 36)) for c in rearranged)
    return int(digits) % 97 == 1


def handle(event, context=None):
    errors = {}
    if not iban_ok(event.get("iban", "")):
        errors["iban"] = "invalid IBAN"
    try:
        date.fromisoformat(event.get("birthdate", ""))
    except ValueError:
        errors["birthdate"] = "use YYYY-MM-DD"
    return {"valid": not errors, "errors": errors}
