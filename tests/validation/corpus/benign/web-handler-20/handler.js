const ALLOWED_ORIGINS = (process.env.ALLOWED_ORIGINS || "").split(",");

exports.handler = async (event) => {
  const origin = event.headers && event.headers.origin;
  const headers = { Vary: "Origin" };
  if (ALLOWED_ORIGINS.includes(origin)) {
    headers["Access-Control-Allow-Origin"] = origin;
    headers["Access-Control-Allow-Methods"] = "GET,POST,OPTIONS";
  }
  if (event.httpMethod === "OPTIONS") return { statusCode: 204, headers };
  return { statusCode: 200, headers, body: JSON.stringify({ ok: true }) };
};
