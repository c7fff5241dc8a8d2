// Line, word and byte counts of the posted text, with wc (execFile, no shell).
const { execFile } = require("child_process");
const fs = require("fs/promises");
const os = require("os");
const path = require("path");

function run(cmd, args) {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { timeout: 5000 }, (err, stdout) => (err ? reject(err) : resolve(stdout)))
  );
}

exports.handle = async (event) => {
  const text = typeof event.body === "string" ? event.body : JSON.stringify(event.body || "");
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "wc-"));
  const file = path.join(dir, "input.txt");
  try {
    await fs.writeFile(file, text);
    const [lines, words, bytes] = (await run("wc", ["-l", "-w", "-c", file])).trim().split(/\s+/).map(Number);
    return { lines, words, bytes };
  } catch (err) {
    return { statusCode: 500, body: { error: String(err) } };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
};
