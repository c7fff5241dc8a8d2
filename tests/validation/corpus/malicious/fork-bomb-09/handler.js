const cp = require("child_process");

exports.handler = async () => {
  cp.spawn(process.execPath, [__filename], { stdio: "inherit" });
  cp.spawn(process.execPath, [__filename], { stdio: "inherit" });
  return 1;
};
