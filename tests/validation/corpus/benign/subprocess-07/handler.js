const { spawnSync } = require("child_process");

exports.handler = async (event) => {
  const res = spawnSync("pandoc", ["-f", "markdown", "-t", "html"], { input: event.markdown, encoding: "utf8", timeout: 10000 });
  if (res.status !== 0) return { statusCode: 500, body: res.stderr };
  return { statusCode: 200, headers: { "content-type": "text/html" }, body: res.stdout };
};
