// Signup form check: the address is well-formed and its domain has MX records.
const dns = require("dns").promises;

const RE = /^[^\s@]+@([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)$/;

exports.handle = async (event) => {
  const email = String((event.body && event.body.email) || (event.query && event.query.email) || "");
  const m = RE.exec(email);
  if (!m) return { valid: false, reason: "malformed" };
  try {
    const mx = await dns.resolveMx(m[1]);
    return { valid: mx.length > 0, mx: mx.sort((a, b) => a.priority - b.priority).map((r) => r.exchange) };
  } catch (err) {
    return { valid: false, reason: err.code || "lookup failed" };
  }
};
