const crypto = require("crypto");
exports.handle = async (event) => {
  const ts = event.headers["x-slack-request-timestamp"];
  const base = `v0:${ts}:${typeof event.body === "string" ? event.body : JSON.stringify(event.body)}`;
  const mine = "v0=" + crypto.createHmac("sha256", process.env.SLACK_SIGNING_SECRET).update(base).digest("hex");
  const theirs = event.headers["x-slack-signature"] || "";
  if (mine.length !== theirs.length || !crypto.timingSafeEqual(Buffer.from(mine), Buffer.from(theirs))) {
    return { statusCode: 401, body: "invalid" };
  }
  return { text: "ack" };
};
