import json
from http import HTTPStatus

_STORE: dict[str, dict] = {}


def _response(status, body):
    return {"statusCode": int(status), "headers": {"content-type": "application/json"}, "body": json.dumps(body)}


def handle(event, context=None):
    method = event.get("httpMethod", "GET")
    invoice_id = (event.get("pathParameters") or {}).get("id")
    if method == "GET" and invoice_id:
        item = _STORE.get(invoice_id)
        if item is None:
            return _response(HTTPStatus.NOT_FOUND, {"error": "invoice not found"})
        return _response(HTTPStatus.OK, item)
    if method == "GET":
        return _response(HTTPStatus.OK, {"invoices": list(_STORE.values())})
    if method == "POST":
        try:
            payload = json.loads(event.get("body") or "{}")
        except json.JSONDecodeError:
            return _response(HTTPStatus.BAD_REQUEST, {"error": "invalid JSON"})
        if "amount" not in payload:
            return _response(HTTPStatus.UNPROCESSABLE_ENTITY, {"error": "amount is required"})
        new_id = str(len(_STORE) + 1)
        _STORE[new_id] = {"id": new_id, **payload}
        return _response(HTTPStatus.CREATED, _STORE[new_id])
    return _response(HTTPStatus.METHOD_NOT_ALLOWED, {"error": f"{method} not allowed"})
