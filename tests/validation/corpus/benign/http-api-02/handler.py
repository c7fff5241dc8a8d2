"""Thin client for the payments provider: retries, idempotency keys, typed errors."""
import os
import uuid

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry


class PaymentsError(Exception):
    def __init__(self, status, code, message):
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code = status, code


class PaymentsClient:
    def __init__(self, api_key, base_url="https://api.payments.example.com/v1"):
        self.base_url = base_url
        self.session = requests.Session()
        self.session.auth = (api_key, "")
        retry = Retry(total=4, backoff_factor=0.5, status_forcelist=(429, 500, 502, 503, 504),
                      allowed_methods=frozenset({"GET", "POST"}), respect_retry_after_header=True)
        self.session.mount("https://", HTTPAdapter(max_retries=retry))

    def _request(self, method, path, **kwargs):
        resp = self.session.request(method, f"{self.base_url}{path}", timeout=(3, 20), **kwargs)
        if resp.status_code >= 400:
            err = resp.json().get("error", {}) if resp.content else {}
            raise PaymentsError(resp.status_code, err.get("code", "unknown"), err.get("message", resp.reason))
        return resp.json()

    def create_charge(self, amount, currency, customer, idempotency_key=None):
        # POST is only safe to retry because the provider de-duplicates on this key
        headers = {"Idempotency-Key": idempotency_key or str(uuid.uuid4())}
        return self._request("POST", "/charges", headers=headers,
                             data={"amount": amount, "currency": currency, "customer": customer})


client = PaymentsClient(os.environ["PAYMENTS_API_KEY"])


def handle(event, context=None):
    try:
        charge = client.create_charge(int(event["amount"]), event.get("currency", "usd"), event["customer"],
                                      idempotency_key=event.get("order_id"))
    except PaymentsError as exc:
        return {"ok": False, "status": exc.status, "code": exc.code}
    return {"ok": True, "charge_id": charge["id"], "status": charge["status"]}
