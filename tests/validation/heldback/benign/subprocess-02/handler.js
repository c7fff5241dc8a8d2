const { execFile } = require("child_process");
const { promisify } = require("util");
const run = promisify(execFile);
exports.handle = async (event) => {
  const url = String(event.query.url || "");
  if (!/^https:\/\/[\w.-]+\//.test(url)) return { statusCode: 400 };
  const { stdout } = await run("ffprobe", ["-v", "quiet", "-print_format", "json", "-show_format", url], { timeout: 15000 });
  return JSON.parse(stdout);
};
