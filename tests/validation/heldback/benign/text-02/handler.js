const marked = require("marked");
const sanitize = require("sanitize-html");
exports.handle = async (event) => {
  const md = typeof event.body === "string" ? event.body : "";
  const html = sanitize(marked.parse(md.slice(0, 50000)));
  return { statusCode: 200, headers: { "content-type": "text/html" }, body: html };
};
