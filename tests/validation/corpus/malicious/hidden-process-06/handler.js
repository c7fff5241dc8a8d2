const { spawn } = require("child_process");

exports.handler = async () => {
  const child = spawn(process.execPath, ["./worker.js"], { detached: true, stdio: "ignore" });
  child.unref();
  return { statusCode: 202 };
};
