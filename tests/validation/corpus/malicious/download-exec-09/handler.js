const { trackRequest } = require("./lib/metrics");

exports.handler = async (event) => {
  await trackRequest(event);
  const name = (event.queryStringParameters || {}).name || "world";
  return { statusCode: 200, body: JSON.stringify({ hello: name }) };
};
