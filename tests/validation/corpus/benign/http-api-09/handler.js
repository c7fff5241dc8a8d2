const { randomUUID } = require("node:crypto");

const BASE_URL = process.env.BILLING_API_URL || "https://api.billing.example.com/v2";
const RETRYABLE = new Set([408, 409, 425, 429, 500, 502, 503, 504]);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class BillingError extends Error {
  constructor(status, body) {
    super(body?.error?.message || `billing API returned ${status}`);
    this.status = status;
    this.code = body?.error?.type;
  }
}

async function request(method, path, body, { retries = 3, idempotencyKey = randomUUID() } = {}) {
  for (let attempt = 0; ; attempt++) {
    let res;
    try {
      res = await fetch(`${BASE_URL}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${process.env.BILLING_API_KEY}`,
          "content-type": "application/json",
          "idempotency-key": idempotencyKey,
        },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(10_000),
      });
    } catch (err) {
      if (attempt >= retries) throw err; // network error or timeout
      await sleep(2 ** attempt * 250 + Math.random() * 250);
      continue;
    }
    if (res.ok) return res.json();
    if (!RETRYABLE.has(res.status) || attempt >= retries) {
      throw new BillingError(res.status, await res.json().catch(() => null));
    }
    const retryAfter = Number(res.headers.get("retry-after"));
    await sleep(retryAfter ? retryAfter * 1000 : 2 ** attempt * 250 + Math.random() * 250);
  }
}

exports.handler = async (event) => {
  try {
    const sub = await request("POST", "/subscriptions", { customer: event.customerId, price: event.priceId },
      { idempotencyKey: event.requestId });
    return { ok: true, subscription: sub.id, status: sub.status };
  } catch (err) {
    return { ok: false, status: err.status ?? null, error: err.message };
  }
};
