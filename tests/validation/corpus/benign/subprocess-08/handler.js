const { spawn } = require("child_process");

exports.handler = async (event) =>
  new Promise((resolve, reject) => {
    const gz = spawn("gzip", ["-c", "-9"], { env: { ...process.env, LC_ALL: "C" } });
    const chunks = [];
    gz.stdout.on("data", (c) => chunks.push(c));
    gz.on("error", reject);
    gz.on("close", (code) => resolve({ code, body: Buffer.concat(chunks).toString("base64") }));
    gz.stdin.end(Buffer.from(event.data || "", "utf8"));
  });
