const crypto = require("crypto");
exports.handle = async (event) => {
  const raw = typeof event.body === "string" ? event.body : JSON.stringify(event.body);
  const sig = "sha256=" + crypto.createHmac("sha256", process.env.GH_SECRET).update(raw).digest("hex");
  const given = event.headers["x-hub-signature-256"] || "";
  if (sig.length !== given.length || !crypto.timingSafeEqual(Buffer.from(sig), Buffer.from(given))) {
    return { statusCode: 401 };
  }
  return { event: event.headers["x-github-event"] };
};
