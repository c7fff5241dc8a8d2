// Makes a thumbnail of an uploaded image with ImageMagick, at a size asked as "WxH".
const { execFile } = require("child_process");
const { promisify } = require("util");
const fs = require("fs/promises");
const os = require("os");
const path = require("path");

const run = promisify(execFile);
const SIZE = /^(\d{1,4})x(\d{1,4})$/;

module.exports = async (req, res) => {
  const size = SIZE.exec(req.query.size || "128x128");
  if (!size) return res.status(400).json({ error: "size must be WxH" });
  const [, width, height] = size;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "thumb-"));
  const src = path.join(dir, "in");
  const dst = path.join(dir, "out.png");
  try {
    await fs.writeFile(src, req.body);
    await run("convert", [src, "-thumbnail", `${width}x${height}`, dst], { timeout: 10000 });
    res.type("png").send(await fs.readFile(dst));
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
};
