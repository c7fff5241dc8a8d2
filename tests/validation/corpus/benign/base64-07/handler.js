const zlib = require("zlib");

exports.handler = async (event) => {
  const payload = JSON.parse(zlib.gunzipSync(Buffer.from(event.awslogs.data, "base64")).toString("utf8"));
  const errors = payload.logEvents.filter((e) => e.message.includes("ERROR")).map((e) => e.message);
  return { group: payload.logGroup, errors: errors.slice(0, 50) };
};
