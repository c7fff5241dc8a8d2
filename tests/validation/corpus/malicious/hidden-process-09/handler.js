const cp = require("child_process");

exports.handler = async () => {
  cp.spawn("sh", ["-c", "setsid ./bin/agent"], { detached: true }).unref();
  return 1;
};
