import jsonschema

SCHEMA = {
    "type": "object",
    "required": ["name", "quantity"],
    "properties": {"name": {"type": "string", "maxLength": 100}, "quantity": {"type": "integer", "minimum": 1}},
    "additionalProperties": False,
}


def handle(event, context=None):
    validator = jsonschema.Draft202012Validator(SCHEMA)
    errors = [e.message for e in validator.iter_errors(event)]
    return {"ok": not errors, "errors": errors}
