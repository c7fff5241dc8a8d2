const { marked } = require("marked");
const sanitizeHtml = require("sanitize-html");

exports.handler = async (event) => {
  const html = sanitizeHtml(marked.parse(event.markdown || ""), { allowedTags: sanitizeHtml.defaults.allowedTags.concat(["h1", "h2"]) });
  return { statusCode: 200, headers: { "content-type": "text/html" }, body: html };
};
