const crypto = require("crypto");

exports.handler = async (event) => {
  const ts = event.headers["x-signature-timestamp"];
  if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) return { statusCode: 401 };
  const expected = crypto.createHmac("sha256", process.env.WEBHOOK_SECRET).update(`${ts}.${event.body}`).digest("hex");
  const given = Buffer.from(event.headers["x-signature"] || "", "utf8");
  const ok = given.length === expected.length && crypto.timingSafeEqual(given, Buffer.from(expected, "utf8"));
  return { statusCode: ok ? 204 : 401 };
};
