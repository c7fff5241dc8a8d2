// Serves a byte range of a stored export; the Range header is parsed with a regex.
const fs = require("fs/promises");
const path = require("path");

const EXPORT = path.join(__dirname, "export.csv");

exports.handler = async (event) => {
  const data = await fs.readFile(EXPORT);
  const header = (event.headers && (event.headers.range || event.headers.Range)) || "";
  const m = /^bytes=(\d+)-(\d*)$/.exec(header);
  if (!m) {
    return { statusCode: 200, headers: { "Content-Type": "text/csv" }, body: data.toString() };
  }
  const start = Number(m[1]);
  const end = m[2] ? Math.min(Number(m[2]), data.length - 1) : data.length - 1;
  if (start > end) return { statusCode: 416, body: "" };
  return {
    statusCode: 206,
    headers: { "Content-Range": `bytes ${start}-${end}/${data.length}`, "Content-Type": "text/csv" },
    body: data.subarray(start, end + 1).toString(),
  };
};
