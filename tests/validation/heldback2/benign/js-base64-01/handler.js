// Decodes a base64 data URL, checks its type and returns its SHA-256 and size.
const crypto = require("crypto");

const ALLOWED = new Set(["image/png", "image/jpeg", "application/pdf"]);

exports.handle = async (event) => {
  const url = (event.body && event.body.dataUrl) || "";
  const m = /^data:([\w/+.-]+);base64,([A-Za-z0-9+/=]+)$/.exec(url);
  if (!m) return { statusCode: 400, body: { error: "expected a base64 data URL" } };
  if (!ALLOWED.has(m[1])) return { statusCode: 415, body: { error: `type ${m[1]} not accepted` } };
  const buf = Buffer.from(m[2], "base64");
  return { type: m[1], size: buf.length, sha256: crypto.createHash("sha256").update(buf).digest("hex") };
};
