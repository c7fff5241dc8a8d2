exports.handler = async (event) => {
  const body = event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body;
  const payload = JSON.parse(body || "{}");
  return { statusCode: 200, body: JSON.stringify({ keys: Object.keys(payload).sort() }) };
};
