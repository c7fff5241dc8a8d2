const crypto = require("node:crypto");

const SIGNING_SECRET = process.env.SLACK_SIGNING_SECRET;
const MAX_SKEW_SECONDS = 60 * 5;

function verifySlack(headers, rawBody) {
  const timestamp = headers["x-slack-request-timestamp"];
  const signature = headers["x-slack-signature"] || "";
  if (!timestamp || Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_SKEW_SECONDS) return false;
  const base = `v0:${timestamp}:${rawBody}`;
  const expected = "v0=" + crypto.createHmac("sha256", SIGNING_SECRET).update(base).digest("hex");
  const a = Buffer.from(expected);
  const b = Buffer.from(signature);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

exports.handler = async (event) => {
  const headers = Object.fromEntries(Object.entries(event.headers || {}).map(([k, v]) => [k.toLowerCase(), v]));
  const raw = event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body || "";
  if (!verifySlack(headers, raw)) return { statusCode: 401, body: "invalid signature" };

  const form = new URLSearchParams(raw);
  const [sub, ...rest] = (form.get("text") || "").trim().split(/\s+/);
  let text;
  switch (sub) {
    case "oncall":
      text = `Today's on-call is <@${process.env.ONCALL_USER_ID}>`;
      break;
    case "status":
      text = rest.length ? `Looking up status for *${rest.join(" ")}*…` : "Usage: /ops status <service>";
      break;
    default:
      text = "Commands: `oncall`, `status <service>`";
  }
  return {
    statusCode: 200,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ response_type: "ephemeral", text }),
  };
};
