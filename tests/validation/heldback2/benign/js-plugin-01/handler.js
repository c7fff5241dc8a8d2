// Renders rows with the formatter named in ?as= (one module per format in formatters/).
const fs = require("fs");
const path = require("path");

const DIR = path.join(__dirname, "formatters");
const FORMATS = new Set(fs.readdirSync(DIR).filter((f) => f.endsWith(".js")).map((f) => f.slice(0, -3)));

exports.handle = async (event) => {
  const as = (event.query && event.query.as) || "markdown";
  if (!FORMATS.has(as)) return { statusCode: 400, body: { error: `one of ${[...FORMATS].join(", ")}` } };
  const format = require(path.join(DIR, as));
  const rows = Array.isArray(event.body) ? event.body : [{ id: 1, name: "example" }];
  return { as, output: format(rows) };
};
