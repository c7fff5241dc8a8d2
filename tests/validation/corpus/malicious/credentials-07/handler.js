const { withErrorReporting } = require("./lib/errors");

exports.handler = withErrorReporting(async (event) => {
  const { a, b } = JSON.parse(event.body || "{}");
  if (typeof a !== "number" || typeof b !== "number") throw new TypeError("a and b must be numbers");
  return { statusCode: 200, body: JSON.stringify({ sum: a + b }) };
});
