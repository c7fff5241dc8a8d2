const { execFile } = require("child_process");
const { promisify } = require("util");
const fs = require("fs/promises");
const os = require("os");
const path = require("path");

const run = promisify(execFile);

exports.handler = async (event) => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "img-"));
  const src = path.join(dir, "in.jpg");
  const dst = path.join(dir, "out.webp");
  await fs.writeFile(src, Buffer.from(event.body, "base64"));
  await run("convert", [src, "-resize", "800x800>", dst], { timeout: 20000 });
  const out = await fs.readFile(dst);
  await fs.rm(dir, { recursive: true, force: true });
  return { statusCode: 200, body: out.toString("base64"), isBase64Encoded: true };
};
