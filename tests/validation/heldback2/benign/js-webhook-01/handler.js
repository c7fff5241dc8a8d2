// Stripe webhook: checks the Stripe-Signature header (HMAC-SHA256) and records the event type.
const crypto = require("crypto");

function verify(payload, header, secret, toleranceS = 300) {
  const parts = Object.fromEntries(header.split(",").map((kv) => kv.split("=")));
  const signed = crypto.createHmac("sha256", secret).update(`${parts.t}.${payload}`).digest("hex");
  const ok = parts.v1 && crypto.timingSafeEqual(Buffer.from(signed), Buffer.from(parts.v1.padEnd(signed.length)));
  return ok && Math.abs(Date.now() / 1000 - Number(parts.t)) < toleranceS;
}

exports.handle = async (event) => {
  const payload = typeof event.body === "string" ? event.body : JSON.stringify(event.body || {});
  const header = (event.headers || {})["stripe-signature"] || "";
  if (!verify(payload, header, process.env.STRIPE_WEBHOOK_SECRET || "")) {
    return { statusCode: 400, body: { error: "bad signature" } };
  }
  const evt = JSON.parse(payload);
  console.log(`stripe event ${evt.type} ${evt.id}`);
  return { received: true, type: evt.type };
};
